package lint

import (
	"fmt"
	"slices"
	"strings"

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
	for _, pipe := range pipelines {
		var xs []*inst
		for _, st := range pipe {
			for _, ly := range layers(st) {
				for _, in := range ly.list {
					if in.a.verdict == vStateless && in.e != nil {
						xs = append(xs, in)
					}
				}
			}
		}
		for _, x := range xs {
			if f, ok := l.statelessMark(v, x, pipe, layers); ok {
				out = append(out, f)
			}
		}
	}
	return out
}

func (l *linter) statelessMark(v *swView, x *inst, pipe []stage, layers func(stage) []*layer) (Finding, bool) {
	sx := l.setOf(v, x)
	if len(sx.over) == 0 {
		return Finding{}, false
	}
	// In egress the packet carries the conntrack state of the ingress
	// pipeline (none after a tunnel); in the stateless-ACL-with-LB mode
	// ls_out_pre_lb sends it to conntrack after all, and only
	// ls_out_stateful's refusal to commit it is left.
	egress := x.a.stage == outACL
	mode := egress && len(v.lbs) > 0 && compile.LBStatelessMode(l.rel, v.ls)
	q := hull(sx.over)
	near := newNear(sx)
	var ys []*inst
	allows := false
	for _, st := range pipe {
		for _, ly := range layers(st) {
			ly.idx.candidates(q, 0, len(ly.list), func(_ int, y *inst) bool {
				if !statefulVerdict(y) || !decidesBefore(y, x) || slices.Contains(ys, y) || mode && y.a.verdict != vAllow {
					return true
				}
				if intersects(sx, l.setOf(v, y)) == yes && !l.decidedFirst(v, x, y, layers, near) {
					ys = append(ys, y)
					allows = allows || y.a.verdict == vAllow
				}
				return true
			})
		}
	}
	if len(ys) == 0 {
		return Finding{}, false
	}
	slices.SortStableFunc(ys, func(a, b *inst) int {
		return cmpOr(tierOf(a)-tierOf(b), instCmp(a, b))
	})
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

// decidesBefore reports whether y can decide a packet before x: y is in
// the pipeline's other eval stage (each stage decides on its own), or in
// x's stage at an earlier tier, or in x's tier at a higher priority.
func decidesBefore(y, x *inst) bool {
	switch {
	case y.a.stage != x.a.stage:
		return true
	case tierOf(y) != tierOf(x):
		return tierOf(y) < tierOf(x)
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
