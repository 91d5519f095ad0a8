package lint

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/aclc/aclc/compile"
)

// This file holds the rule about what stateless marking does to the ACLs
// that decide before an allow-stateless ACL. northd's
// build_stateless_filter writes each allow-stateless ACL into the pre-ACL
// stage of its pipeline (ls_in_pre_acl for from-lport, ls_out_pre_acl for
// to-lport) as `MATCH' → `reg0[16] = 1', with no tier and at a priority
// no other pre-ACL flow of an ACL competes with: a packet it matches is
// marked stateless, kept out of conntrack, before any eval stage, any tier
// or any priority has been looked at. The ACLs that then decide such a
// packet first — of an earlier tier, of a higher priority in the same
// tier, or of the pipeline's other eval stage — see it untracked
// (ls_*_acl_hint: !ct.trk sets reg0[8] and reg0[9]): an allow-related
// ACL allows it by its flow for established traffic and never commits the
// connection (no label, sample_est or persist-established either), so the
// replies meet the other direction's ACLs as new traffic; a drop or reject
// ACL drops it without marking an established connection blocked.
// (Found with OVN 26.03.1's ovn-trace: a tier-1 allow-related to-lport ACL
// and a tier-2 allow-stateless one; lint/oracle_test.go.)

// RuleStatelessMark is the rule of an allow-stateless ACL whose marking
// takes packets out of conntrack that a stateful ACL decides first.
const RuleStatelessMark = "stateless-mark-ignores-tiers"

// pipelines groups the ACL stages by the pre-ACL stage that marks them.
var pipelines = [][]stage{{inACL, inAfterLB}, {outACL}}

// statelessMarks reports, on a stateful switch (elsewhere northd writes no
// stateless filters and nothing is tracked), each allow-stateless ACL
// that ACLs deciding before it statefully can meet.
func (l *linter) statelessMarks(v *swView, layers func(stage) []*layer) []Finding {
	if !v.stateful {
		return nil
	}
	var out []Finding
	var buf qbuf
	memo := map[markKey]*markMemo{}
	c := v.cls
	for pi, pipe := range pipelines {
		// The class's finding about a shared ACL x holds here unless one of
		// the switch's own ACLs is a candidate for x (only those enter
		// statelessMark's proof beyond the class's: as y, or as an ACL above
		// a y in ownMeetsAbove) or the switch reads it otherwise (tiers,
		// the stateless-ACL-with-LB mode).
		var own map[*inst]bool // the class's ACLs the switch decides for itself
		byClass := c != nil && c.marks[pi] != nil
		for _, st := range pipe {
			byClass = byClass && v.tierLy[st] == nil
		}
		if byClass {
			own = map[*inst]bool{}
			for _, st := range pipe {
				for _, ly := range layers(st) {
					if ly == c.st[st] {
						continue
					}
					for _, o := range ly.list {
						if len(l.setOf(v, o).over) == 0 {
							continue // never a candidate
						}
						c.marks[pi].candidates(l.queryOf(&buf, v, o), 0, len(c.marks[pi].list), func(_ int, x *inst) bool {
							own[x] = true
							for _, d := range c.markDups[x] {
								own[d] = true
							}
							return true
						})
					}
				}
			}
		}
		for _, st := range pipe {
			for _, ly := range layers(st) {
				for _, in := range ly.list {
					if in.a.verdict != vStateless || in.e == nil {
						continue
					}
					if c == nil || ly != c.st[st] {
						if f, ok := l.statelessMark(v, in, pipe, layers, memo); ok {
							out = append(out, f)
						}
						continue
					}
					if byClass && !own[in] && !(st == outACL && len(v.lbs) > 0 && compile.LBStatelessMode(l.rel, v.ls)) {
						continue
					}
					ys, mode := l.markDeciders(v, in, pipe, layers, memo)
					if byClass && !mode {
						// The class's finding, where the switch finds the same.
						sortDeciders(ys)
						if slices.Equal(ys, c.markYs[in]) {
							continue
						}
					}
					c.disturb(in, RuleStatelessMark, v.name)
					if f, ok := l.markFinding(in, ys, mode); ok {
						out = append(out, f)
					}
				}
			}
		}
	}
	return out
}

// classMarkFindings adds, on a stateful class whose stages have no tiers,
// the stateless-mark finding about each shared allow-stateless ACL as on
// a switch without ACLs of its own, tentatively (statelessMarks), and
// indexes those ACLs per pipeline by the hull of their cubes.
func (l *linter) classMarkFindings(v *swView, c *class) {
	if !c.stateful {
		return
	}
	classOnly := func(st stage) []*layer { return []*layer{c.st[st]} }
	c.markDups = map[*inst][]*inst{}
	c.markYs = map[*inst][]*inst{}
	for pi, pipe := range pipelines {
		var xs []*inst
		tiered := false
		for _, st := range pipe {
			tiered = tiered || c.tiered[st]
			for _, in := range c.st[st].list {
				if in.a.verdict == vStateless && len(l.setOf(v, in).over) > 0 {
					xs = append(xs, in)
				}
			}
		}
		if tiered {
			continue
		}
		for _, x := range xs {
			ys := l.classMarks(v, c, x, newNear(l.setOf(v, x)), false, pipe, classOnly, nil)
			if f, ok := l.markFinding(x, ys, false); ok {
				c.tentative = append(c.tentative, tentative{f, x})
			}
			sortDeciders(ys)
			c.markYs[x] = ys
		}
		// Indexed once per markKey (the same cubes and stage).
		first := map[markKey]*inst{}
		var reps []*inst
		for _, x := range xs {
			k := markKey{x.a.acl.Match, x.a.stage}
			if f := first[k]; f != nil {
				c.markDups[f] = append(c.markDups[f], x)
				continue
			}
			first[k] = x
			reps = append(reps, x)
		}
		c.marks[pi] = newACLIndex(reps, func(in *inst) ([]cube, cube) {
			cs := l.setOf(v, in).over
			return cs, hull(cs)
		})
	}
}

// markKey is the part of a shared allow-stateless ACL x the switch's
// answer for one of its own ACLs y depends on, besides the verdicts and
// priorities: x's cubes (the same for the same match) and stage.
type markKey struct {
	match string
	st    stage
}

// statelessMark is the rule for x. memo holds, per markKey of a shared
// x, whether an own ACL y of the switch that meets x decides some of its
// packets first (intersects, and not decidedFirst: these read x's cubes
// and y, not x's priority), for the shared ACLs with the same match at
// other priorities (ovn-kubernetes' cluster-wide port group has hundreds).
func (l *linter) statelessMark(v *swView, x *inst, pipe []stage, layers func(stage) []*layer, memo map[markKey]*markMemo) (Finding, bool) {
	ys, mode := l.markDeciders(v, x, pipe, layers, memo)
	return l.markFinding(x, ys, mode)
}

// markDeciders returns the ACLs that decide some of x's packets first on
// v (statelessMark's), and whether v reads x in the stateless-ACL-with-LB
// mode.
func (l *linter) markDeciders(v *swView, x *inst, pipe []stage, layers func(stage) []*layer, memo map[markKey]*markMemo) ([]*inst, bool) {
	sx := l.setOf(v, x)
	if len(sx.over) == 0 {
		return nil, false
	}
	// In egress the packet carries the conntrack state of the ingress
	// pipeline (none after a tunnel); in the stateless-ACL-with-LB mode
	// ls_out_pre_lb sends it to conntrack after all, and only
	// ls_out_stateful's refusal to commit it is left.
	egress := x.a.stage == outACL
	mode := egress && len(v.lbs) > 0 && compile.LBStatelessMode(l.rel, v.ls)
	var near *nearACLs
	var ys []*inst
	c := v.cls
	classOK := c != nil && x.shared
	for _, st := range pipe {
		classOK = classOK && v.tierLy[st] == nil
	}
	var m *markMemo
	if classOK {
		k := markKey{x.a.acl.Match, x.a.stage}
		if m = memo[k]; m == nil {
			m = &markMemo{known: map[*inst]bool{}, cands: map[*layer][]*inst{}, decided: map[*inst]bool{}, near: newNear(sx)}
			memo[k] = m
		}
		near = m.near // x's neighbours are those of every ACL with its cubes
		// The class's shared ACLs once per class; only the switch's own
		// ACLs per switch.
		ys = l.classMarks(v, c, x, near, mode, pipe, layers, m)
	} else {
		near = newNear(sx)
	}
	visit := func(y *inst) {
		if !statefulVerdict(y) || !decidesBefore(v, y, x) || slices.Contains(ys, y) || mode && y.a.verdict != vAllow {
			return
		}
		first, ok := false, false
		if m != nil {
			first, ok = m.known[y]
		}
		if !ok {
			first = intersects(sx, l.setOf(v, y)) == yes
			if first {
				decided, _ := l.decidedFirst(v, x, y, proofLayers(v, y, layers), near)
				first = !decided
			}
			if m != nil {
				m.known[y] = first
			}
		}
		if first {
			ys = append(ys, y)
		}
	}
	var buf qbuf
	q := queryOf(&buf, sx.over, x.hull) // x.hull: hull(sx.over), computed with sx
	for _, st := range pipe {
		for _, ly := range layers(st) {
			if classOK && ly == c.st[st] {
				continue
			}
			if m != nil {
				cands, ok := m.cands[ly]
				if !ok {
					ly.idx.candidates(q, 0, len(ly.list), func(_ int, y *inst) bool {
						cands = append(cands, y)
						return true
					})
					m.cands[ly] = cands
				}
				for _, y := range cands {
					visit(y)
				}
				continue
			}
			hi := len(ly.reps.list)
			if st == x.a.stage && v.tierLy[st] == nil {
				// One tier: only higher priorities decide first (decidesBefore),
				// and a group's duplicates are below its first.
				hi = ly.reps.above(x.a.acl.Priority)
			}
			ly.reps.candidates(q, 0, hi, func(_ int, y *inst) bool {
				visit(y)
				dups := ly.dups[y]
				if len(dups) == 0 {
					return true
				}
				// The others below y are decided by y (alike: the same cubes);
				// those at y's priority come first in the group.
				below := l.decidedByFirst(v, x, dups[len(dups)-1], y)
				for _, o := range dups {
					if below && o.a.acl.Priority < y.a.acl.Priority {
						break
					}
					visit(o)
				}
				return true
			})
		}
	}
	return ys, mode
}

// markMemo is what statelessMark keeps of the shared ACLs with one
// markKey on a switch: the candidates among the switch's own ACLs per
// layer, and whether each decides some of their packets first.
type markMemo struct {
	known   map[*inst]bool
	cands   map[*layer][]*inst
	decided map[*inst]bool // classMarks' answer for a shared y
	near    *nearACLs
}

// decidedByFirst reports whether y's packets that x matches are decided
// before y by first, the first ACL of y's layer with the same match (its
// group, layer.dups), without trying: when y is exact and first has a
// higher priority and is one of the ACLs decidedFirst reads, each cube
// decidedFirst builds from x's and y's lies in the same cube of first, so
// it says decided (unless there are too many cubes, or none: then it is
// asked).
//
// Its answer is the same for every ACL of the group below first.
func (l *linter) decidedByFirst(v *swView, x, y, first *inst) bool {
	sy := l.setOf(v, y)
	if !sy.exact || first.a.acl.Priority <= y.a.acl.Priority || v.tierLy[y.a.stage] != nil {
		return false
	}
	n := 0
	for _, a := range l.setOf(v, x).over {
		for _, b := range sy.over {
			if a.meets(b) {
				n++
			}
		}
	}
	return n > 0 && n <= maxPieces
}

// markFinding is the finding about x with the ACLs ys that decide some of
// its packets first, in the stateless-ACL-with-LB mode or not.
func (l *linter) markFinding(x *inst, ys []*inst, mode bool) (Finding, bool) {
	egress := x.a.stage == outACL
	allows := slices.ContainsFunc(ys, func(y *inst) bool { return y.a.verdict == vAllow })
	if len(ys) == 0 {
		return Finding{}, false
	}
	sortDeciders(ys)
	f := Finding{Rule: RuleStatelessMark, Severity: Info, ACLs: []ACLRef{x.a.ref},
		Fix: "keep the allow-stateless ACL's match out of the traffic the listed ACLs decide (add && !(...) for it), or make both stateless or both stateful"}
	if allows && !(egress && !mode) {
		f.Severity = Warning
	}
	for _, y := range ys {
		f.ACLs = append(f.ACLs, y.a.ref)
	}
	pre := "ls_in_pre_acl"
	if x.a.stage == outACL {
		pre = "ls_out_pre_acl"
	}
	tier := ""
	if l.tiers {
		tier = fmt.Sprintf(" (tier %d)", tierOf(x))
	}
	f.Message = fmt.Sprintf("%s marks every packet this allow-stateless ACL%s matches stateless (reg0[16], no conntrack) before any ACL is evaluated, whatever its tier or priority, and the stateful ACL(s) listed with it — %s — decide some of those packets first",
		pre, tier, l.describeDeciders(ys))
	switch {
	case mode:
		f.Message += ": ls_out_pre_lb still sends them to conntrack (enable-stateless-acl-with-lb), but ls_out_stateful's priority-110 flow never commits a new connection marked stateless, so the allow/allow-related ACL allows them without committing it and their replies meet the other direction's ACLs as new traffic"
	case egress:
		f.Message += " with the conntrack state the packets carry from the ingress pipeline: untracked when they came through a tunnel (an allow-related ACL then allows them by its flow for untracked packets, reg0[8], and commits nothing, a drop does not block the connection); delivered on the chassis after ingress conntrack, they are decided and committed as if tracked in egress"
	case allows:
		f.Message += ", untracked: an allow/allow-related ACL allows them without committing the connection (its flow for untracked packets, reg0[8]), so their replies meet the other direction's ACLs as new traffic and its label, sample_est and persist-established do not apply"
	default:
		f.Message += ", untracked: a drop/reject ACL drops them without marking an established connection blocked, so its replies are still let through"
	}
	return f, true
}

// sortDeciders sorts the deciding ACLs as a finding lists them: by tier,
// then as the stage does.
func sortDeciders(ys []*inst) {
	slices.SortStableFunc(ys, func(a, b *inst) int {
		return cmpOr(tierOf(a)-tierOf(b), instCmp(a, b))
	})
}

// markPair is a shared ACL y that decides some packets of a class's
// shared allow-stateless ACL x before x, and whether the class's ACLs
// prove those packets decided before y by the full proof (a proof by
// single cubes holds on every switch of the class and is not kept).
type markPair struct {
	y       *inst
	decided bool
}

// markEntry is the class's part of the rule for one shared
// allow-stateless ACL.
type markEntry struct {
	once  sync.Once
	pairs []markPair
	near  map[*layer][]*inst // x's neighbours in the class's layers
}

// classMarks returns the shared ACLs that decide some packets of the
// shared allow-stateless ACL x first on v, with the class's answer where
// none of v's own ACLs above y meets y (none then meets what x and y both
// match, so the proof reads the same cubes), and v's otherwise. It fills
// near with x's neighbours among the class's ACLs.
//
// m, when not nil, keeps the switch's answers per y for the other shared
// ACLs with x's cubes (statelessMark).
func (l *linter) classMarks(v *swView, c *class, x *inst, near *nearACLs, mode bool, pipe []stage, layers func(stage) []*layer, m *markMemo) []*inst {
	e := c.markEntry(x)
	e.once.Do(func() {
		sx := l.setOf(v, x)
		cn := newNear(sx)
		for _, st := range pipe {
			ly := c.st[st]
			only := []*layer{ly}
			var buf qbuf
			ly.idx.candidates(queryOf(&buf, sx.over, hull(sx.over)), 0, len(ly.list), func(_ int, y *inst) bool {
				if !statefulVerdict(y) || !decidesBefore(v, y, x) || intersects(sx, l.setOf(v, y)) != yes {
					return true
				}
				if ok, inside := l.decidedFirst(v, x, y, only, cn); !inside {
					e.pairs = append(e.pairs, markPair{y, ok})
				}
				return true
			})
		}
		e.near = cn.by
	})
	for ly, list := range e.near {
		near.by[ly] = list
	}
	var ys []*inst
	for _, pr := range e.pairs {
		y := pr.y
		if mode && y.a.verdict != vAllow {
			continue
		}
		decided, ok := false, false
		if m != nil {
			decided, ok = m.decided[y]
		}
		if !ok {
			decided = pr.decided
			if l.ownMeetsAbove(v, c, y, near, layers) {
				decided, _ = l.decidedFirst(v, x, y, proofLayers(v, y, layers), near)
			}
			if m != nil {
				m.decided[y] = decided
			}
		}
		if !decided {
			ys = append(ys, y)
		}
	}
	return ys
}

// ownMeetsAbove reports whether one of v's own ACLs of y's stage that
// meets x (near) has a priority above y's and meets y.
func (l *linter) ownMeetsAbove(v *swView, c *class, y *inst, near *nearACLs, layers func(stage) []*layer) bool {
	sy := l.setOf(v, y)
	for _, ly := range layers(y.a.stage) {
		if ly == c.st[y.a.stage] {
			continue
		}
		for _, o := range near.of(l, v, ly) {
			if o.a.acl.Priority <= y.a.acl.Priority {
				break
			}
			if anyIntersect(sy.over, l.setOf(v, o).under) {
				return true
			}
		}
	}
	return false
}

// markEntry returns the class's entry for x.
func (c *class) markEntry(x *inst) *markEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.markCache == nil {
		c.markCache = map[*inst]*markEntry{}
	}
	e := c.markCache[x]
	if e == nil {
		e = &markEntry{}
		c.markCache[x] = e
	}
	return e
}

// statefulVerdict reports whether an ACL decides by conntrack on a
// stateful switch: allow and allow-related commit, drop and reject block
// established connections.
func statefulVerdict(in *inst) bool {
	switch in.a.verdict {
	case vAllow, vDrop, vReject:
		return true
	}
	return false
}

// decidesBefore reports whether y can decide a packet before x on switch
// v: y is in the pipeline's other eval stage (each stage decides on its
// own), or in x's stage at an earlier tier, or in x's tier at a higher
// priority (tiers as v's northd evaluates them: tierOn).
func decidesBefore(v *swView, y, x *inst) bool {
	switch {
	case y.a.stage != x.a.stage:
		return true
	case tierOn(v, y) != tierOn(v, x):
		return tierOn(v, y) < tierOn(v, x)
	}
	return y.a.acl.Priority > x.a.acl.Priority
}

// describeDeciders says where the deciding ACLs sit: `ACL "x" at tier 1,
// priority 1000, allow-related', ... (no tier on a release without).
func (l *linter) describeDeciders(ys []*inst) string {
	var parts []string
	for i, y := range ys {
		if i == 3 {
			return strings.Join(parts, ", ") + fmt.Sprintf(" and %d more", len(ys)-3)
		}
		at := ""
		if l.tiers {
			at = fmt.Sprintf(" at tier %d,", tierOf(y))
		}
		parts = append(parts, fmt.Sprintf("%s%s priority %d, %s", y.a.ref.describeShort(), at, y.a.acl.Priority, y.a.acl.Action))
	}
	return joinList(parts)
}

func joinList(parts []string) string {
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
