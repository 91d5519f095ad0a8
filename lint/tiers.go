package lint

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/aclc/aclc/nbschema/nbdb"
)

// This file holds the tier-aware conflict rules (OVN 23.06+). An eval
// stage evaluates its ACLs tier by tier, lowest first (the tier register
// reg8[30..31] is part of every ACL flow's match on a switch whose stage
// has tiers): inside a tier the highest-priority ACL that matches decides;
// a pass ACL, or no ACL at all, leaves the verdict bits clear, and the
// action stage's priority-500 loop sends the packet back to the eval
// stage for the next tier, up to the highest tier of the stage on that
// switch (nbview's MaxTier: northd's max_acl_tier); after it the action stage's priority-0 flow applies the default
// (allow, or drop with default_acl_drop). So:
//
//   - same-priority overlaps only matter inside a tier;
//   - an ACL is shadowed when every packet it matches is decided first:
//     by higher-priority ACLs of its own tier (a pass among them too: the
//     ACL still never decides), or by the ACLs of earlier tiers that decide
//     (not pass) — what an earlier tier's ACL decides is its match minus
//     the pass ACLs of its tier at its priority or above;
//   - a pass that no later tier picks up meets the stage's default.
//
// A stage with tiers is analysed per switch over all its ACLs (shared and
// own); the class analysis of such a stage is skipped (scope.go).

// RuleUnpickedPass is the rule of a pass ACL whose packets no ACL of a
// later tier can match, so they meet the stage's default verdict.
const RuleUnpickedPass = "pass-to-default"

// tierOf is the ACL's tier (0 on a release without tiers, where the NB has
// none).
func tierOf(in *inst) int { return in.a.acl.Tier }

// tierOn is the tier in's ACL is evaluated at on switch v: its tier, or 0
// where northd ignores the switch's tiers (FDP-1154: swView.tierStop).
func tierOn(v *swView, in *inst) int {
	if v.tierStop != nil {
		return 0
	}
	return tierOf(in)
}

// hasTiers reports whether the ACLs of a stage need the tier semantics:
// one of them is a pass or, unless northd ignores the tiers (flat), at a
// tier above 0.
func hasTiers(list []*inst, flat bool) bool {
	for _, in := range list {
		if in.a.acl.Tier != 0 && !flat || in.a.acl.Action == nbdb.ACLActionPass {
			return true
		}
	}
	return false
}

// tierStage analyses stage st of switch v when it has tiers there (the
// class's shared ACLs or the switch's own have), with every ACL the
// stage has on the switch, and reports whether it did: then the class's
// shadowing findings about the stage's shared ACLs do not hold on v.
func (l *linter) tierStage(v *swView, c *class, st stage, own *layer, out *[]Finding) bool {
	sh := c.st[st]
	if !l.tiers || !c.tiered[st] && !hasTiers(own.list, c.flat) {
		return false
	}
	for _, b := range sh.list {
		c.disturb(b, RuleShadowed, v.name)
	}
	byTier := map[int][]*inst{}
	for _, in := range append(slices.Clone(sh.list), own.list...) {
		if in.e == nil {
			continue
		}
		byTier[tierOn(v, in)] = append(byTier[tierOn(v, in)], in)
	}
	tiers := slices.Sorted(maps.Keys(byTier))
	layers := make([]*layer, len(tiers))
	var decided []*inst // what the earlier tiers decide
	shadowed := map[*inst]bool{}
	for i, t := range tiers {
		ly := l.newLayer(v, byTier[t])
		layers[i] = ly
		*out = append(*out, l.samePriority(v, st, ly, []*layer{ly})...)
		earlier := l.newLayer(v, slices.Clone(decided))
		if v.tierLy[st] == nil {
			v.tierLy[st] = map[int][2]*layer{}
		}
		v.tierLy[st][t] = [2]*layer{ly, earlier}
		for _, b := range ly.list {
			if f, ok := l.shadowCheck(v, st, b, []*layer{ly, earlier}); ok {
				*out = append(*out, tierShadowFinding(f, st, t))
				shadowed[b] = true
			}
		}
		decided = append(decided, l.decidedInsts(v, ly)...)
	}
	for i, t := range tiers {
		for _, p := range layers[i].list {
			if p.a.acl.Action == nbdb.ACLActionPass && !shadowed[p] {
				if f, ok := l.unpickedPass(v, st, p, t, layers[i+1:]); ok {
					*out = append(*out, f)
				}
			}
		}
	}
	return true
}

// tierShadowFinding words a shadowing finding of a stage with tiers.
func tierShadowFinding(f Finding, st stage, tier int) Finding {
	by := fmt.Sprintf("in %s by the higher-priority ACL(s) listed with it", st)
	tb := fmt.Sprintf("in %s by the ACL(s) listed with it (of earlier tiers, or of higher priority in its own tier %d, where a pass also keeps it from deciding)", st, tier)
	f.Message = strings.Replace(f.Message, "matched first "+by, "decided first "+tb, 1)
	f.Message = strings.Replace(f.Message, "shadowed "+by, "shadowed "+tb, 1)
	return f
}

// decidedInsts returns, for each ACL of tier layer ly that decides (not a
// pass), an instance standing for what it decides: its match (from below)
// minus the pass ACLs of the tier at its priority or above (from above),
// at a priority above any ACL's, so that a later tier's ACL counts it as
// deciding first.
func (l *linter) decidedInsts(v *swView, ly *layer) []*inst {
	var passes []*inst
	for _, in := range ly.list {
		if in.a.acl.Action == nbdb.ACLActionPass {
			passes = append(passes, in)
		}
	}
	var out []*inst
	for _, d := range ly.list {
		if d.a.acl.Action == nbdb.ACLActionPass {
			continue
		}
		var above []*inst
		for _, p := range passes {
			if p.a.acl.Priority >= d.a.acl.Priority {
				above = append(above, p)
			}
		}
		acl := *d.a.acl
		acl.Priority = math.MaxInt32
		a := *d.a
		a.acl = &acl
		out = append(out, &inst{a: &a, prio: acl.Priority, e: d.e, set: l.minusPasses(v, l.setOf(v, d), above),
			dec: &decidedBy{orig: d, passes: above, tier: tierOn(v, d)}})
	}
	return out
}

// minusPasses is s minus the pass ACLs' matches: s's cubes from below,
// each cut by the cubes from above of the passes that meet it (a cube
// that would be cut into too many pieces is dropped: still from below).
func (l *linter) minusPasses(v *swView, s *set, passes []*inst) *set {
	exact := s.exact
	var pieces []cube
	cut := false
	for _, c := range s.under {
		rest := []cube{c}
		for _, p := range passes {
			sp := l.setOf(v, p)
			for _, pc := range sp.over {
				var next []cube
				for _, r := range rest {
					if !r.meets(pc) {
						next = append(next, r)
						continue
					}
					cut = true
					exact = exact && sp.exact
					ps, ok := sharp(r, pc)
					if !ok || len(next)+len(ps) > maxPieces {
						next, exact = nil, false
						break
					}
					next = append(next, ps...)
				}
				rest = next
			}
		}
		pieces = append(pieces, rest...)
	}
	if !cut {
		return s
	}
	return &set{over: pieces, under: pieces, exact: exact}
}

// unpickedPass reports a pass ACL p at tier t none of whose packets an ACL
// of the later tiers (later) can match: they meet the stage's default.
func (l *linter) unpickedPass(v *swView, st stage, p *inst, t int, later []*layer) (Finding, bool) {
	sp := l.setOf(v, p)
	if len(sp.over) == 0 {
		return Finding{}, false
	}
	def := "allow (the action stage's priority-0 flow; a new connection is committed as by the default flows)"
	if l.defaultACLDrop {
		def = "drop (default_acl_drop=true)"
	}
	f := Finding{Rule: RuleUnpickedPass, Severity: Warning, ACLs: []ACLRef{p.a.ref},
		Fix: "add the ACL of a later tier that should decide these packets, or say the verdict here (allow-related, drop, ...)"}
	if t >= v.maxTier[st] { // the action stage has no tier loop for t
		f.Message = fmt.Sprintf("pass at the last tier: tier %d is the highest of %s on this switch, so the packets it passes get the stage's default verdict, %s", t, st, def)
		return f, true
	}
	maybeMet := false
	for _, ly := range later {
		for _, c := range sp.over {
			met := false
			ly.idx.candidates(c, 0, len(ly.list), func(_ int, o *inst) bool {
				if anyIntersect([]cube{c}, l.setOf(v, o).over) {
					met = true
				}
				return !met
			})
			if met {
				maybeMet = true
				break
			}
		}
	}
	if maybeMet {
		return Finding{}, false
	}
	f.Message = fmt.Sprintf("no ACL of a later tier of %s on this switch can match the packets this pass hands on, so they get the stage's default verdict, %s", st, def)
	return f, true
}

// decidedFirst reports whether every packet both x and y match is proven
// to be decided before y can decide it by the ACLs of ls (proofLayers),
// and whether each of those packets' cubes lies inside one cube of a
// single ACL above y (then more ACLs cannot change the answer). near holds
// x's neighbours (one per x, reused for each y).
func (l *linter) decidedFirst(v *swView, x, y *inst, ls []*layer, near *nearACLs) (decided, inside bool) {
	sx, sy := l.setOf(v, x), l.setOf(v, y)
	var both []cube
	for _, a := range sx.over {
		for _, b := range sy.over {
			if c, ok := a.and(b); ok {
				both = append(both, c)
			}
		}
	}
	if len(both) == 0 || len(both) > maxPieces {
		return false, false
	}
	// A cube inside one cube (from below) of an ACL above y is covered
	// whatever else meets it (coveredAt's single-cube test and
	// coverValues agree): look for one among the ACLs that meet x (every
	// such cube lies in x), and leave only the others to the full proof.
	p := y.a.acl.Priority
	rest := both[:0]
	for _, c := range both {
		if !near.within(l, v, c, p, ls) {
			rest = append(rest, c)
		}
	}
	if len(rest) == 0 {
		return true, true
	}
	_, fail, _ := coveredBy(rest, func(c cube) []cubeRef { return near.meeting(l, v, c, p, ls) })
	return fail < 0, false
}

// proofLayers returns the layers that decide before y: the higher
// priorities of its tier and the earlier tiers (tierStage's), or its
// stage's layers without tiers.
func proofLayers(v *swView, y *inst, layers func(stage) []*layer) []*layer {
	if m := v.tierLy[y.a.stage]; m != nil {
		p := m[tierOn(v, y)]
		return []*layer{p[0], p[1]}
	}
	return layers(y.a.stage)
}

// nearACLs finds, per layer, the ACLs whose cubes from below meet an ACL
// x's cubes from above, in the layer's order (built on first use): the
// only ones that can hold a packet x matches (the first of each group
// with the same match, layer.reps).
type nearACLs struct {
	sx *set
	by map[*layer][]*inst
}

func newNear(sx *set) *nearACLs { return &nearACLs{sx: sx, by: map[*layer][]*inst{}} }

func (n *nearACLs) of(l *linter, v *swView, ly *layer) []*inst {
	if list, ok := n.by[ly]; ok {
		return list
	}
	var list []*inst
	var buf qbuf
	ly.reps.candidates(queryOf(&buf, n.sx.over, hull(n.sx.over)), 0, len(ly.reps.list), func(_ int, in *inst) bool {
		if anyIntersect(n.sx.over, l.setOf(v, in).under) {
			list = append(list, in)
		}
		return true
	})
	n.by[ly] = list
	return list
}

// within reports whether c (a cube inside x) lies inside one cube (from
// below) of an ACL of the layers with a priority above p.
func (n *nearACLs) within(l *linter, v *swView, c cube, p int, layers []*layer) bool {
	for _, ly := range layers {
		for _, in := range n.of(l, v, ly) {
			if in.a.acl.Priority <= p {
				break
			}
			for _, d := range l.setOf(v, in).under {
				if c.within(d) {
					return true
				}
			}
		}
	}
	return false
}

// meeting is refsMeeting (from below) for c, a cube inside x.
func (n *nearACLs) meeting(l *linter, v *swView, c cube, p int, layers []*layer) []cubeRef {
	var out []cubeRef
	for _, ly := range layers {
		for _, in := range n.of(l, v, ly) {
			if in.a.acl.Priority <= p {
				break
			}
			for _, d := range l.setOf(v, in).under {
				if c.meets(d) {
					out = append(out, cubeRef{d, in})
				}
			}
		}
	}
	return out
}
