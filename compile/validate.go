package compile

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// ValidateMatches is ValidateMatchesFor release 23.03.1.
func ValidateMatches(s *nbschema.Snapshot, flows *lflow.Listing) []Problem {
	return ValidateMatchesFor(s, flows, release.OVN2303)
}

// ValidateMatchesFor parses every ACL match, and every flow match northd
// builds around one, with release r's expression parser (package acl/expr,
// r's Dialect) and reports those that OVN would reject. northd copies such matches into
// the SB all the same; every ovn-controller then drops the flow, so the ACL
// silently does nothing.
//
// References to address sets and port groups are assumed to exist here:
// whether they resolve is reported by Compile's own checks, per datapath.
//
// A valid match stays valid inside the hint forms `reg0[N] == 1 && (M)`,
// but not always inside the reject form `(reg0[N] == 1) && M`, which
// 23.03 does not parenthesize: `A || B` becomes `(reg0[10] == 1) && A || B`,
// which mixes && and || without parentheses. Those reject flows are
// checked as written.
func ValidateMatchesFor(s *nbschema.Snapshot, flows *lflow.Listing, r *release.Release) []Problem {
	if r == nil {
		r = release.OVN2303
	}
	d := Dialect(r)
	g := &global{s: s, v: nbview.New(s)}
	type job struct {
		acl  string
		text string
		dp   string // "" for the ACL's own match
	}
	var jobs []job
	for _, id := range nbschema.SortedKeys(s.ACLs) {
		if m := s.ACLs[id].Match; strings.TrimSpace(m) != "" { // empty matches are reported by Compile
			jobs = append(jobs, job{acl: id, text: m})
		}
	}
	// Reject flows as northd wrote them, once per distinct text.
	seen := map[string]bool{}
	for _, d := range flows.Datapaths {
		for _, f := range d.Flows {
			if f.Source == "" || !strings.HasPrefix(f.Match, "(reg0[") || !strings.Contains(f.Actions, "reject {") {
				continue
			}
			acl, ok := s.ACLs[f.Source]
			if !ok || !strings.Contains(acl.Match, "||") || seen[f.Match] {
				continue
			}
			seen[f.Match] = true
			jobs = append(jobs, job{acl: f.Source, text: f.Match, dp: d.Name})
		}
	}

	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(jobs); i += workers {
				errs[i] = d.Valid(jobs[i].text, nil)
			}
		}(w)
	}
	wg.Wait()

	var out []Problem
	ownInvalid := map[string]bool{}
	for i, j := range jobs {
		if errs[i] == nil {
			continue
		}
		acl := s.ACLs[j.acl]
		msg := describeParseError(j.text, errs[i])
		if j.dp == "" {
			ownInvalid[j.acl] = true
			out = append(out, Problem{ACL: j.acl, Where: g.describeACL(acl), Message: "invalid match, OVN will discard its flows: " + msg})
			continue
		}
		if ownInvalid[j.acl] {
			continue // already reported for the ACL's own match
		}
		out = append(out, Problem{ACL: j.acl, Where: g.describeACL(acl), Datapath: j.dp,
			Message: "OVN " + r.Series() + " wraps this reject ACL's match as " + fmt.Sprintf("%q", j.text) +
				", which OVN's parser rejects (" + msg + "); parenthesize the ACL match"})
	}
	return sortProblems(out)
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
	return fmt.Sprintf("offset %d%s: %s", pe.Offset, at, pe.Msg)
}
