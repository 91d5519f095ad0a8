package compile

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/internal/par"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// ValidateMatches is ValidateMatchesFor the snapshot's own release, the
// one Compile compiles for (23.03.1 when it says none).
func ValidateMatches(s *nbschema.Snapshot, flows *lflow.Listing) []Problem {
	return ValidateMatchesFor(s, flows, s.Release)
}

// ValidateMatchesFor checks, with release r's expression parser (package
// acl/expr, r's Dialect), every flow match northd builds from an ACL and
// reports the ACLs whose flows OVN would reject. northd copies such matches
// into the SB all the same; every ovn-controller then drops the flow, so
// the ACL silently does nothing (or only part of what it says).
//
// References to address sets and port groups are assumed to exist here:
// whether they resolve is reported by Compile's own checks, per datapath.
//
// northd puts the match into its flows as written (23.03's ACL stage,
// pre_acl's stateless filter), in parentheses (`(M)', `reg0[N] == 1 &&
// (M)'; every 25.03+ eval flow) or, in 23.03's reject flows, unparenthesized
// after a prefix: `A || B' becomes `(reg0[10] == 1) && A || B', which mixes
// && and || without parentheses. A valid match stays valid in parentheses
// (unless that nests them too deeply), so only the other flows are parsed
// as written; an invalid match can become valid inside them (`ip4) &&
// (tcp'), so then every flow is.
func ValidateMatchesFor(s *nbschema.Snapshot, flows *lflow.Listing, r *release.Release) []Problem {
	return ValidateMatchesWith(s, flows, r, nil)
}

// ValidateMatchesWith is ValidateMatchesFor, taking the parse of each ACL's
// match from pre where pre parsed it for r (nil: parse them all here).
func ValidateMatchesWith(s *nbschema.Snapshot, flows *lflow.Listing, r *release.Release, pre *MatchParser) []Problem {
	return PrepareMatches(s, r, pre).Validate(flows)
}

// MatchCheck is the part of ValidateMatchesWith that needs no flows: the
// ACLs and the parse of their matches, ready for Validate. `aclc compile`
// prepares it while the compile runs.
type MatchCheck struct {
	s       *nbschema.Snapshot
	r       *release.Release
	d       *expr.Dialect
	acls    []*nbdb.ACL // in UUID order
	idx     map[string]int
	raw     []error  // the parse of each ACL's match
	wrapped []string // each ACL's match in parentheses
	shallow []bool   // parentheses cannot nest too deeply
}

// PrepareMatches prepares the validation of s's ACL matches for release
// r, taking the parse of each match from pre where pre parsed it for r
// (nil: parse them all here). It only reads s.
func PrepareMatches(s *nbschema.Snapshot, r *release.Release, pre *MatchParser) *MatchCheck {
	if pre != nil {
		pre.Wait()
	}
	if r == nil {
		r = s.Release
	}
	c := &MatchCheck{s: s, r: r, d: Dialect(r), idx: make(map[string]int, len(s.ACLs))}
	for _, id := range nbschema.SortedKeys(s.ACLs) {
		if acl := s.ACLs[id]; !blank(acl.Match) { // empty matches are reported by Compile
			c.idx[id] = len(c.acls)
			c.acls = append(c.acls, acl)
		}
	}
	acls := c.acls
	c.raw = make([]error, len(acls))
	var todo []int // the matches pre did not parse
	for i, acl := range acls {
		var ok bool
		if c.raw[i], ok = pre.result(r, acl.Match); !ok {
			todo = append(todo, i)
		}
	}
	for k, err := range parallelValid(c.d, len(todo), func(k int) string { return acls[todo[k]].Match }) {
		c.raw[todo[k]] = err
	}
	c.wrapped, c.shallow = make([]string, len(acls)), make([]bool, len(acls))
	for i, acl := range acls {
		m := acl.Match
		c.wrapped[i], c.shallow[i] = "("+m+")", strings.Count(m, "(") < expr.MaxParenDepth
	}
	return c
}

// validateMemo remembers the index of the ACL whose UUID is the string
// at src.
type validateMemo struct {
	src    *byte
	srcLen int
	i      int
}

// Validate reports the problems of the flows' matches (see
// ValidateMatchesFor).
func (c *MatchCheck) Validate(flows *lflow.Listing) []Problem {
	s, r, d, acls, idx, raw, wrapped, shallow := c.s, c.r, c.d, c.acls, c.idx, c.raw, c.wrapped, c.shallow
	// The distinct flow matches of each ACL; those that need parsing as
	// written go into exact.
	type flowText struct {
		acl      int
		text, dp string
		reject   bool
	}
	type flowKey struct {
		acl  int
		text string
	}
	var exact []flowText
	total := make([]int, len(acls))
	// Scan the flows on every CPU; most take the cheap path.
	found := make([][]flowText, len(flows.Datapaths))
	par.For(len(flows.Datapaths), 1, func(k int) {
		dp := flows.Datapaths[k]
		// The flows of an ACL share its UUID string over all datapaths: a
		// small cache by the string's address saves most of the hashing
		// of 2 million flows at 200k ACLs.
		var cache [1 << 11]validateMemo
		for _, f := range dp.Flows {
			if f.Source == "" {
				continue
			}
			src := unsafe.StringData(f.Source)
			m := &cache[(uintptr(unsafe.Pointer(src))>>4)&uintptr(len(cache)-1)]
			i := m.i
			if m.src != src || m.srcLen != len(f.Source) {
				var ok bool
				if i, ok = idx[f.Source]; !ok {
					continue
				}
				*m = validateMemo{src: src, srcLen: len(f.Source), i: i}
			}
			if raw[i] == nil && shallow[i] && (f.Match == acls[i].Match || strings.HasSuffix(f.Match, wrapped[i]) || strings.Contains(f.Match, wrapped[i])) {
				continue // valid as written or in parentheses
			}
			found[k] = append(found[k], flowText{acl: i, text: f.Match, dp: dp.Name, reject: strings.Contains(f.Actions, "reject {")})
		}
	})
	// Distinct texts per ACL, the first datapath (in listing order) for each.
	var all []flowText
	for _, f := range found {
		all = append(all, f...)
	}
	dpOrder := map[string]int{}
	for k, dp := range flows.Datapaths {
		dpOrder[dp.Name] = k
	}
	slices.SortStableFunc(all, func(a, b flowText) int { return dpOrder[a.dp] - dpOrder[b.dp] })
	seen := map[flowKey]bool{}
	for _, f := range all {
		key := flowKey{f.acl, f.text}
		if seen[key] {
			continue
		}
		seen[key] = true
		total[f.acl]++ // counted for invalid matches only: valid ones take the cheap path
		exact = append(exact, f)
	}
	errs := parallelValid(d, len(exact), func(i int) string { return exact[i].text })

	var out []Problem
	bad := make([][]int, len(acls)) // indexes into exact
	for j, e := range errs {
		if e != nil {
			bad[exact[j].acl] = append(bad[exact[j].acl], j)
		}
	}
	series := "OVN " + r.Series()
	var g *global // the view, to name the ACLs of problems
	for i, acl := range acls {
		if raw[i] == nil && len(bad[i]) == 0 {
			continue
		}
		if g == nil {
			g = &global{s: s, v: nbview.New(s)}
		}
		switch {
		case raw[i] != nil && (total[i] == 0 || len(bad[i]) == total[i]):
			out = append(out, g.aclProblem(KindInvalidMatch, acl, "", "", "invalid match, OVN will discard its flows: "+describeParseError(acl.Match, raw[i])))
		case raw[i] != nil && len(bad[i]) > 0:
			f := exact[bad[i][0]]
			out = append(out, g.aclProblem(KindInvalidMatch, acl, "", "", fmt.Sprintf(
				"invalid match: %s discards %d of the %d flows northd builds from it (e.g. %q: %s); the others, where northd puts it in parentheses, parse",
				series, len(bad[i]), total[i], f.text, describeParseError(f.text, errs[bad[i][0]]))))
		default:
			for _, j := range bad[i] {
				f := exact[j]
				kind, pk := "this ACL's", KindFlowUnparsable
				if f.reject {
					kind, pk = "this reject ACL's", KindRejectUnparsable
				}
				out = append(out, g.aclProblem(pk, acl, "", f.dp,
					series+" wraps "+kind+" match as "+fmt.Sprintf("%q", f.text)+
						", which OVN's parser rejects ("+describeParseError(f.text, errs[j])+"); parenthesize the ACL match"))
			}
		}
	}
	return sortProblems(out)
}

// parallelValid parses text(0..n-1) with d on every CPU.
func parallelValid(d *expr.Dialect, n int, text func(int) string) []error {
	errs := make([]error, n)
	par.For(n, 1, func(i int) { errs[i] = d.Valid(text(i), nil) })
	return errs
}

// describeParseError says what the parser said and where, quoting the text
// from the offending byte on.
func describeParseError(text string, err error) string {
	var pe *expr.Error
	if !errors.As(err, &pe) {
		return err.Error()
	}
	at := ""
	if pe.Offset >= 0 && pe.Offset <= len(text) {
		rest := text[pe.Offset:]
		if len(rest) > 20 {
			rest = rest[:20] + "..."
		}
		at = fmt.Sprintf(" (at %q)", rest)
	}
	msg := pe.Msg
	if msg == "" {
		msg = pe.Note // OVN gives no message
	}
	return fmt.Sprintf("offset %d%s: %s", pe.Offset, at, msg)
}
