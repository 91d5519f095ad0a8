package reach

import "github.com/aclc/aclc/pset"

// This file sums up a pair in a word, for the cells of a matrix.

// The summaries of Outcome.Summary.
const (
	SummaryAll      = "all"  // every packet decided exactly is allowed
	SummaryNone     = "none" // none is
	SummaryPart     = "part" // some are, some are not
	SummaryNotExact = "n/e"  // the pair as a whole is not exact
	SummaryNoPath   = "-"    // no path between the ports
	// SummaryInexact marks a summary of a pair some of whose packets
	// (another part) are not exact: the summary is of the others.
	SummaryInexact = "*"
)

// Summary sums up the outcome: SummaryNoPath, SummaryNotExact, or of the
// packets in exact parts, whether all, none or part of them are allowed
// (SummaryAll, SummaryNone, SummaryPart), followed by SummaryInexact when
// some part is not exact.
func (o *Outcome) Summary() string {
	switch {
	case o.Path == NoPath:
		return SummaryNoPath
	case o.Result == nil:
		return SummaryNotExact
	}
	r := o.Result
	m := r.Manager
	var allowed, inexact []pset.Set
	for _, p := range r.Parts {
		switch p.Verdict {
		case Allow:
			allowed = append(allowed, p.Set)
		case NotExact:
			inexact = append(inexact, p.Set)
		}
	}
	a, n := m.OrAll(allowed), m.OrAll(inexact)
	s := SummaryPart
	switch {
	case a == pset.Empty:
		s = SummaryNone
	case a == m.Diff(r.Entering, n):
		s = SummaryAll
	}
	if n != pset.Empty {
		s += SummaryInexact
	}
	return s
}
