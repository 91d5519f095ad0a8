package compile

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// Problem is something wrong in the NB that the compiler noticed. northd
// would copy the offending match into the SB all the same, where
// ovn-controller then rejects the flow on every hypervisor.
type Problem struct {
	// Kind says what is wrong, for a program.
	Kind ProblemKind
	// ACL is the UUID of the ACL concerned ("" for a port problem).
	ACL string
	// Port is the UUID of the Logical_Switch_Port concerned
	// (KindDuplicatePort).
	Port string
	// Ref is the address set or port group name the problem is about
	// (KindNoAddressSet, KindNoPortGroup, KindPortGroupNotHere).
	Ref string
	// PortGroups are the port groups (names, by UUID) whose order in
	// northd's hash table decides what it writes (KindNorthdUndecided).
	PortGroups []string
	// Pos is where the ACL (or port) was written, for a fixture row.
	Pos nbschema.Position
	// Where names the ACL for a human: its fixture position or NB row, its
	// name if it has one, and its owner ("Port_Group pg1").
	Where string
	// Datapath is the switch on which the problem shows, "" if on all.
	Datapath string
	// Message says what is wrong.
	Message string
}

// ProblemKind classes problems.
type ProblemKind string

// The problem kinds.
const (
	KindEmptyMatch       ProblemKind = "empty-match"
	KindNoAddressSet     ProblemKind = "no-address-set"
	KindNoPortGroup      ProblemKind = "no-port-group"
	KindPortGroupNotHere ProblemKind = "port-group-not-on-switch"
	KindInvalidMatch     ProblemKind = "invalid-match"
	KindRejectUnparsable ProblemKind = "reject-flow-unparsable"
	KindFlowUnparsable   ProblemKind = "flow-unparsable"
	KindDuplicatePort    ProblemKind = "duplicate-port"
	// KindNorthdUndecided: what the release's northd writes for the
	// switch depends on its own state (the order of rows in its hash
	// tables, which follows its history), not on the NB, so aclc's flows
	// are one of the possible outcomes, not necessarily northd's. The
	// commands treat it as "not exact" (aclc compile exits 3).
	KindNorthdUndecided ProblemKind = "northd-undecided"
)

// Undecided reports whether ps holds a problem of KindNorthdUndecided:
// the flows are then not necessarily those northd writes.
func Undecided(ps []Problem) bool {
	return slices.ContainsFunc(ps, func(p Problem) bool { return p.Kind == KindNorthdUndecided })
}

// String formats p as "WHERE: MESSAGE".
func (p Problem) String() string {
	if p.Datapath != "" {
		return fmt.Sprintf("%s: on switch %q: %s", p.Where, p.Datapath, p.Message)
	}
	return fmt.Sprintf("%s: %s", p.Where, p.Message)
}

func sortProblems(ps []Problem) []Problem {
	slices.SortFunc(ps, func(a, b Problem) int {
		// Fixture rows by file, line and column; live rows by their
		// origin text.
		pa, pb := a.Pos, b.Pos
		if !pa.IsValid() {
			pa = nbschema.Position{File: a.Where}
		}
		if !pb.IsValid() {
			pb = nbschema.Position{File: b.Where}
		}
		return cmp.Or(nbschema.ComparePositions(pa, pb), strings.Compare(a.Where, b.Where),
			strings.Compare(a.Datapath, b.Datapath), strings.Compare(a.Message, b.Message))
	})
	// A port group ACL is checked on each of its switches; keep one report
	// of a problem that does not depend on the switch.
	return slices.CompactFunc(ps, Problem.equal)
}

// equal reports whether p and q are the same problem.
func (p Problem) equal(q Problem) bool {
	return p.Kind == q.Kind && p.ACL == q.ACL && p.Port == q.Port && p.Ref == q.Ref &&
		slices.Equal(p.PortGroups, q.PortGroups) && p.Pos == q.Pos && p.Where == q.Where &&
		p.Datapath == q.Datapath && p.Message == q.Message
}

func (g *global) describeACL(acl *nbdb.ACL) string {
	w := g.s.Where("ACL", acl.UUID)
	if acl.Name != nil && *acl.Name != "" {
		w += fmt.Sprintf(" (ACL %q", *acl.Name)
	} else {
		w += " (ACL"
	}
	if o := g.v.Owner(acl.UUID).String(); o != "" {
		w += " on " + o
	}
	return w + ")"
}

// globalProblems reports problems that do not depend on a datapath: empty
// matches, references to address sets that do not exist, and ports two
// switches list.
func (g *global) globalProblems() []Problem { return g.globalProblemsExcept(nil) }

// globalProblemsExcept is globalProblems without the ACL problems of the
// ACLs in checked (a full Compile checks a port group's ACLs with the
// rest of its facts: pgShared.info).
func (g *global) globalProblemsExcept(checked map[*nbdb.ACL]struct{}) []Problem {
	out := g.duplicateProblems()
	var rest []*nbdb.ACL
	for _, acl := range g.s.ACLs {
		if _, ok := checked[acl]; !ok {
			rest = append(rest, acl)
		}
	}
	eachTouched(rest, func(acl *nbdb.ACL) { out = g.appendGlobalACLProblems(out, acl) })
	return out
}

// appendGlobalACLProblems appends acl's problems that do not depend on a
// datapath: an empty match, references to address sets that do not exist.
func (g *global) appendGlobalACLProblems(out []Problem, acl *nbdb.ACL) []Problem {
	if blank(acl.Match) {
		return append(out, g.aclProblem(KindEmptyMatch, acl, "", "", "empty match; northd copies it and every hypervisor rejects the flow"))
	}
	// A name repeated gives the same Problem, which sortProblems drops.
	for ref := range eachRef(acl.Match, '$') {
		if g.v.CheckAddressSet(ref) == nbview.NoSuchAddressSet {
			out = append(out, g.aclProblem(KindNoAddressSet, acl, ref, "",
				fmt.Sprintf("match references address set $%s, which does not exist", ref)))
		}
	}
	return out
}

// blank reports whether match is empty or only white space
// (strings.TrimSpace), looking no further than its first byte when that
// is printable ASCII.
func blank(match string) bool {
	if match != "" && match[0] > ' ' && match[0] < utf8.RuneSelf {
		return false
	}
	return strings.TrimSpace(match) == ""
}

// duplicateProblems reports the ports that more than one switch lists:
// northd gives such a port to one of them only, and when the NB does not
// decide which (nbview.Duplicate.Ambiguous) aclc's flows are a guess.
func (g *global) duplicateProblems() []Problem {
	var out []Problem
	for _, d := range g.v.Duplicates() {
		var names []string
		for _, sw := range d.Switches {
			names = append(names, strconv.Quote(g.s.Switches[sw].Name))
		}
		name, owner := g.s.Ports[d.Port].Name, g.s.Switches[d.Owner].Name
		msg := fmt.Sprintf("port %q is listed by switches %s; ovn-northd gives it to %q (the first in its datapath hash table) and ignores the other listings",
			name, strings.Join(names, ", "), owner)
		if d.Ambiguous {
			msg = fmt.Sprintf("port %q is listed by switches %s, which share a bucket of ovn-northd's datapath hash table: which one gets the port depends on northd's state, not on the NB; aclc's flows assume %q",
				name, strings.Join(names, ", "), owner)
		}
		out = append(out, Problem{Kind: KindDuplicatePort, Port: d.Port, Pos: g.s.Position(d.Port),
			Where: g.s.Where(nbdb.LogicalSwitchPortTable, d.Port), Message: msg})
	}
	return out
}

// switchProblems reports @port_group references that do not resolve on the
// switch (OVN only defines a port group on switches where it has ports)
// and a highest ACL tier the NB does not decide (tierProblem).
func (g *global) switchProblems(od *datapath) []Problem {
	var out []Problem
	if od.TierContest != nil {
		out = append(out, g.tierProblem(od))
	}
	check := func(acl *nbdb.ACL) { out = g.appendACLProblems(out, od, acl) }
	for _, acl := range od.ACLs {
		check(acl)
	}
	for _, pg := range od.PortGroups {
		if sh := g.shared[pg.UUID]; sh != nil {
			// Only these can have a problem here: see pgShared.
			for _, acl := range sh.info(g).foreign {
				check(acl)
			}
			continue
		}
		for _, id := range pg.ACLs {
			if acl, ok := g.s.ACLs[id]; ok {
				check(acl)
			}
		}
	}
	return out
}

// appendACLProblems appends the problems of acl's @port_group references
// on switch od (nbview.CheckPortGroup).
func (g *global) appendACLProblems(out []Problem, od *datapath, acl *nbdb.ACL) []Problem {
	for _, ref := range matchRefs(acl.Match, '@') {
		switch g.v.CheckPortGroup(od.ID, ref) {
		case nbview.NoSuchPortGroup:
			out = append(out, g.aclProblem(KindNoPortGroup, acl, ref, od.LS.Name,
				fmt.Sprintf("match references port group @%s, which does not exist", ref)))
		case nbview.PortGroupNotOnSwitch:
			out = append(out, g.aclProblem(KindPortGroupNotHere, acl, ref, od.LS.Name,
				fmt.Sprintf("match references port group @%s, which has no ports on this switch", ref)))
		}
	}
	return out
}

// aclProblem is a problem of acl about ref ("" for none), on switch dp
// ("" for every switch).
func (g *global) aclProblem(kind ProblemKind, acl *nbdb.ACL, ref, dp, msg string) Problem {
	return Problem{Kind: kind, ACL: acl.UUID, Ref: ref, Pos: g.s.Position(acl.UUID), Where: g.describeACL(acl),
		Datapath: dp, Message: msg}
}

// matchRefs returns the names following sigil ('$' or '@') in match,
// outside quoted strings, each once, in order of appearance.
func matchRefs(match string, sigil byte) []string {
	var out []string
	for name := range eachRef(match, sigil) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// eachRef yields the names following sigil in match, outside quoted
// strings, in order of appearance, repeats included; it allocates nothing.
func eachRef(match string, sigil byte) iter.Seq[string] {
	return func(yield func(string) bool) {
		i := strings.IndexByte(match, sigil)
		if i < 0 {
			return
		}
		if strings.IndexByte(match, '"') < 0 {
			// No quoted strings: jump from sigil to sigil.
			for i >= 0 {
				j := i + 1
				for j < len(match) && isIDChar(match[j]) {
					j++
				}
				if name := match[i+1 : j]; name != "" && !yield(name) {
					return
				}
				k := strings.IndexByte(match[j:], sigil)
				if k < 0 {
					return
				}
				i = j + k
			}
			return
		}
		inStr := false
		for i := 0; i < len(match); i++ {
			c := match[i]
			switch {
			case inStr && c == '\\':
				i++
			case c == '"':
				inStr = !inStr
			case !inStr && c == sigil:
				j := i + 1
				for j < len(match) && isIDChar(match[j]) {
					j++
				}
				if name := match[i+1 : j]; name != "" && !yield(name) {
					return
				}
				i = j - 1
			}
		}
	}
}

func isIDChar(c byte) bool {
	return c == '_' || c == '.' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// tierProblem is KindNorthdUndecided for a switch whose highest ACL tier
// northd's FDP-1154 scan (nbview.Switch.TierContest) decides by the order
// of port groups in one bucket of its ls_pg->nb_pgs hash table: each of
// them, met first, would either stop the scan (an allow-related ACL at
// tier 0 first: no tier at all) or let it see the tiers.
func (g *global) tierProblem(od *datapath) Problem {
	var names, stop, tiered []string
	for _, id := range od.TierContest {
		pg := g.s.PortGroups[id]
		names = append(names, pg.Name)
		if _, stops := nbview.TierScanFirst(g.v.PortGroupACLs(id)); stops {
			stop = append(stop, strconv.Quote(pg.Name))
		} else {
			tiered = append(tiered, strconv.Quote(pg.Name))
		}
	}
	guess := "every tier ignored (max tier 0)"
	if od.MaxTier != (nbview.Tiers{}) {
		guess = "the tiers used"
	}
	f := release.ACLFlagsFullScan
	msg := fmt.Sprintf("ovn-northd %s's highest ACL tier for this switch depends on its own state, not on the NB: "+
		"its ACL flag scan (ls_stateful_record_set_acl_flags_) stops at the first allow-related ACL it meets before any tier above 0 (FDP-1154) "+
		"and meets port groups %s in one bucket of its ls_pg->nb_pgs hash table, in the order it inserted them (its history): "+
		"with %s first it ignores every tier (max tier 0), with %s first it uses them; aclc's flows assume %s. "+
		"Fixed by %s in OVN %s, not on this branch",
		g.r.rel.Name(), quoted(names), strings.Join(stop, " or "), strings.Join(tiered, " or "), guess,
		f.Commits(), f.Since())
	return Problem{Kind: KindNorthdUndecided, PortGroups: names, Pos: g.s.Position(od.ID),
		Where: g.s.Where(nbdb.LogicalSwitchTable, od.ID), Datapath: od.LS.Name, Message: msg}
}

// quoted joins names, each quoted, with ", ".
func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}
