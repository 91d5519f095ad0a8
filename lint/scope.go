package lint

import (
	"crypto/sha256"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/aclc/aclc/internal/par"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
)

// This file is how lint shares work between switches. An ACL is *shared*
// on a switch when its cubes there are the same as on any other switch:
// its references all resolve and every port group it names holds every
// port of the switch (ovn-kubernetes' cluster-wide port group, or no port
// group at all). Switches that see the same shared ACLs (and are alike
// stateful) form a class. The rules run once per class over its shared
// ACLs, and once per switch over the switch's own ACLs against both; a
// shared ACL is looked at again on a switch only where one of the
// switch's own ACLs can meet it ("disturbs" it). So an ACL of a port group
// spanning 500 switches is analysed against the other cluster-wide ACLs
// once, not 500 times.

// layer is the ACLs of one stage at one level (a class's shared ACLs, or a
// switch's own), sorted as the stage lists them, with an index.
type layer struct {
	list []*inst
	idx  *aclIndex
	// reps indexes the first of each group of list's ACLs with the same
	// match text (all shared or all the switch's own: their cubes are the
	// same), the one with the highest priority; idx when there are no
	// such groups. For what lies above a priority (refsMeeting, nearACLs)
	// the others add nothing: a cube of one lies in the same cube of the
	// first, which comes before it in every proof (coveredBy), so no proof
	// uses it and no packet is in it alone. Cluster-wide port groups list
	// the same match at hundreds of priorities (ovn-kubernetes' `ip4 &&
	// icmp4', `ip4.src == $cluster_ip4'). It is idx with the others no
	// longer live (aclIndex.without), not an index of its own.
	reps       *aclIndex
	dups       map[*inst][]*inst // the first of a group → the others, in list order
	maxInexact int               // the highest priority of an inexact ACL; math.MinInt if none
	// passes says whether list has a pass ACL: the rules that look for
	// one (passedFirst, passMeetsReplies) skip a layer without, most of
	// them (no CMS in nbgen's shapes writes pass ACLs).
	passes bool
}

func (l *linter) newLayer(v *swView, list []*inst) *layer {
	slices.SortStableFunc(list, instCmp)
	ly := &layer{list: list, maxInexact: math.MinInt}
	for _, in := range list {
		if !l.setOf(v, in).exact {
			ly.maxInexact = max(ly.maxInexact, in.a.acl.Priority)
		}
		ly.passes = ly.passes || in.a.pass
	}
	ly.idx = newACLIndex(list, func(in *inst) ([]cube, cube) { return l.setOf(v, in).over, in.hull })
	ly.reps = ly.idx
	type key struct {
		match  int32 // aclInfo.match: the match text
		shared bool
	}
	first := make(map[key]*inst, len(list))
	var dups []int // the others' places in list
	for i, in := range list {
		k := key{in.a.match, in.shared}
		if f := first[k]; f != nil {
			if ly.dups == nil {
				ly.dups = map[*inst][]*inst{}
			}
			ly.dups[f] = append(ly.dups[f], in)
			dups = append(dups, i)
			continue
		}
		first[k] = in
	}
	if dups != nil {
		ly.reps = ly.idx.without(dups)
	}
	return ly
}

// class is the switches that see the same shared ACLs.
type class struct {
	views    []*swView // until analysed
	names    []string  // the switches' names
	shared   []*inst
	stateful bool
	st       [nStages]*layer
	replies  [nStages]*aclIndex // the replies of the stage's stateless ACLs
	tiered   [nStages]bool      // the stage has tiers: each switch analyses it (tiers.go)
	// flat: on the class's switches northd ignores every tier (its
	// FDP-1154 scan stopped: swView.tierStop), so their ACLs are analysed
	// as one tier, 0, whatever their tier column says (tierOn).
	flat bool

	replyDone map[*inst]bool // replies allowed by a shared ACL: never a finding
	shadow    map[*inst]shadowState
	// changeable indexes, per stage, the shared ACLs whose shadowing
	// verdict a switch's own ACLs might change (shadowChanges); the others
	// (proven shadowed by the class, every cube covered) need no look.
	changeable [nStages]*aclIndex

	definite []Finding // hold on every switch of the class
	// tentative findings hold on every switch of the class except those
	// where the ACL is disturbed (there the switch decides).
	tentative []tentative

	mu        sync.Mutex
	disturbed map[disturbKey]map[string]bool // switches where an ACL is disturbed, per rule
	markCache map[*inst]*markEntry           // statelessmark.go
	marks     [2]*aclIndex                   // per pipeline, the shared ACLs of classMarkFindings, one per markKey
	markDups  map[*inst][]*inst              // an ACL of marks → the others with its markKey
	markYs    map[*inst][]*inst              // an ACL of marks → the class's deciders, sorted (its tentative finding's)
}

type tentative struct {
	f  Finding
	in *inst
}

type disturbKey struct {
	in   *inst
	rule string
}

// classKey identifies the class of a switch: whether it is stateful,
// and the set of its shared ACLs (each once) by the XOR of their UUIDs'
// SHA-256 digests, so that a switch costs no sort of the cluster-wide
// ACLs.
func classKey(v *swView, shared []*inst) [32]byte {
	var k [32]byte
	for _, in := range shared {
		for i, b := range in.sh.key {
			k[i] ^= b
		}
	}
	h := sha256.New()
	h.Write(k[:])
	if v.stateful {
		h.Write([]byte{1})
	} else {
		h.Write([]byte{0})
	}
	if v.tierStop != nil {
		// northd ignores the switch's tiers (FDP-1154): another analysis
		h.Write([]byte{'f'})
	}
	h.Write([]byte{byte(len(shared)), byte(len(shared) >> 8), byte(len(shared) >> 16), byte(len(shared) >> 24)})
	h.Sum(k[:0])
	return k
}

// isShared reports whether a is shared on v: a port group that covers
// the switch lists it (so that the classes are few: a switch's own ACLs,
// and those of port groups with some of its ports, are its own), its match
// parses NB-wide, its address sets exist and each port group it names
// covers the switch, so its cubes are those of every such switch.
func (v *swView) isShared(a *aclInfo) bool {
	if a.syntax != nil || a.global == nil || a.pgOwner == "" || !v.cover[a.pgOwner] {
		return false
	}
	for _, name := range a.asRefs {
		if _, ok := v.res.AddressSets[name]; !ok {
			return false
		}
	}
	for _, pg := range a.pgRefs {
		if !v.cover[pg] {
			return false
		}
	}
	return true
}

// applied fills v's ACLs: those nbview's AppliedACLs lists (the
// switch's, then each port group's present on it, each once), each the
// switch's own or shared. A port group's ACLs are classified once per
// cover of the port groups they depend on (pgBlock): a cluster-wide port
// group's thousands of ACLs are not looked at again on every switch.
func (l *linter) applied(v *swView, sw *nbview.Switch) {
	var seen map[*aclInfo]bool // of the ACLs two rows list
	first := func(a *aclInfo) bool {
		if a.listed < 2 {
			return true
		}
		if seen[a] {
			return false
		}
		if seen == nil {
			seen = map[*aclInfo]bool{}
		}
		seen[a] = true
		return true
	}
	var slab []inst // the switch's own instances, carved from blocks
	add := func(a *aclInfo, sh *inst) {
		if sh != nil {
			v.shared = append(v.shared, sh)
			return
		}
		if len(slab) == 0 {
			slab = make([]inst, 32)
		}
		in := &slab[0]
		slab = slab[1:]
		in.a, in.prio = a, a.acl.Priority
		v.own = append(v.own, in)
	}
	for _, acl := range sw.ACLs {
		if a := l.acls[acl.UUID]; first(a) {
			var sh *inst
			if v.isShared(a) {
				sh = l.sharedInst(a)
			}
			add(a, sh)
		}
	}
	for _, pg := range sw.PortGroups {
		b := l.blockOf(v, pg)
		for i, a := range b.infos {
			if first(a) {
				add(a, b.shared[i])
			}
		}
	}
}

// pgBlock is a port group's ACLs (that exist) on the switches where the
// port groups they depend on (their owners and references) cover alike:
// each ACL's info and its shared instance, nil where it is the switch's
// own.
type pgBlock struct {
	infos  []*aclInfo
	shared []*inst
}

// pgDeps is a port group's ACLs that exist (l.pgACLs) and the port
// groups whose cover isShared reads for them (their owners and
// references), sorted.
type pgDeps struct {
	infos []*aclInfo
	deps  []string
}

// blockOf returns pg's block on v.
func (l *linter) blockOf(v *swView, pg *nbdb.PortGroup) *pgBlock {
	var pa *pgDeps
	if x, ok := l.blocks.Load(pg.UUID); ok {
		pa = x.(*pgDeps)
	} else {
		pa = &pgDeps{infos: l.pgACLs[pg.UUID]}
		deps := map[string]bool{}
		for _, a := range pa.infos {
			deps[a.pgOwner] = true
			for _, r := range a.pgRefs {
				deps[r] = true
			}
		}
		pa.deps = slices.Sorted(maps.Keys(deps))
		x, _ := l.blocks.LoadOrStore(pg.UUID, pa)
		pa = x.(*pgDeps)
	}
	var key strings.Builder
	key.WriteString("cover|" + pg.UUID)
	for _, name := range pa.deps {
		if v.cover[name] {
			key.WriteString("|+" + name)
		}
	}
	if b, ok := l.blocks.Load(key.String()); ok {
		return b.(*pgBlock)
	}
	b := &pgBlock{infos: pa.infos, shared: make([]*inst, len(pa.infos))}
	for i, a := range pa.infos {
		if v.isShared(a) {
			b.shared[i] = l.sharedInst(a)
		}
	}
	x, _ := l.blocks.LoadOrStore(key.String(), b)
	return x.(*pgBlock)
}

// sharedInst returns the one instance of a shared ACL.
func (l *linter) sharedInst(a *aclInfo) *inst {
	if x, ok := l.shared.Load(a); ok {
		return x.(*inst)
	}
	x, _ := l.shared.LoadOrStore(a, &inst{a: a, prio: a.acl.Priority, e: a.global, shared: true, sh: &sharedPart{key: sha256.Sum256([]byte(a.acl.UUID))}})
	return x.(*inst)
}

// analyse runs the rules over the class's shared ACLs alone.
func (l *linter) analyse(c *class) {
	v := c.views[0]
	for _, in := range c.shared {
		c.definite = append(c.definite, l.matchFindings(v, in)...)
	}
	var byStage [nStages][]*inst
	for _, in := range c.shared {
		byStage[in.a.stage] = append(byStage[in.a.stage], in)
	}
	for st := range byStage {
		c.st[st] = l.newLayer(v, byStage[st])
	}
	c.replyDone, c.shadow = map[*inst]bool{}, map[*inst]shadowState{}
	c.disturbed = map[disturbKey]map[string]bool{}
	for st, ly := range c.st {
		layers := []*layer{ly}
		if c.tiered[st] = l.tiers && hasTiers(ly.list, c.flat); c.tiered[st] {
			layers = nil // no overlaps or shadowing across tiers here: tierStage
		}
		c.definite = append(c.definite, l.samePriority(v, stage(st), ly, layers)...)
		shadow := make([]*Finding, len(ly.list))
		states := make([]shadowState, len(ly.list))
		par.For(len(ly.list), 1, func(i int) {
			f, ok, ss := l.shadowEval(v, stage(st), ly.list[i], layers)
			if ok {
				shadow[i] = &f
			}
			states[i] = ss
		})
		var changeable []*inst
		for i, in := range ly.list {
			c.shadow[in] = states[i]
			if mayChange(states[i]) {
				changeable = append(changeable, in)
			}
		}
		c.changeable[st] = ly.idx
		if len(changeable) < len(ly.list) {
			c.changeable[st] = newACLIndex(changeable, func(in *inst) ([]cube, cube) { return l.setOf(v, in).over, in.hull })
		}
		for i, f := range shadow {
			// Tentative even when proven: where a switch's own ACL above
			// it can meet it, the switch decides which ACLs shadow it.
			if f != nil {
				c.tentative = append(c.tentative, tentative{*f, ly.list[i]})
			}
		}
		var stateless []*inst
		for _, in := range ly.list {
			if in.a.verdict != vStateless {
				continue
			}
			f, found, allowed := l.noReply(v, stage(st), in, func(st stage) []*layer { return []*layer{c.st[st]} })
			switch {
			case allowed:
				c.replyDone[in] = true
				continue
			case found:
				c.tentative = append(c.tentative, tentative{f, in})
			}
			stateless = append(stateless, in)
		}
		c.replies[st] = newACLIndex(stateless, func(in *inst) ([]cube, cube) {
			cs := l.replyOf(v, in).over
			return cs, hull(cs)
		})
		if c.stateful {
			for _, in := range ly.list {
				if in.a.verdict == vReject {
					if f, ok := l.rejectOr(v, in); ok {
						c.definite = append(c.definite, f)
					}
				}
			}
		}
	}
	l.classMarkFindings(v, c)
	c.views = nil // the switches' views go once each is linted
}

// disturb records that in is disturbed for rule on switch sw.
func (c *class) disturb(in *inst, rule, sw string) {
	c.mu.Lock()
	k := disturbKey{in, rule}
	m := c.disturbed[k]
	if m == nil {
		m = map[string]bool{}
		c.disturbed[k] = m
	}
	m[sw] = true
	c.mu.Unlock()
}

// findings returns the class's findings, each with the switches where it
// holds.
func (c *class) findings() []Finding {
	names := c.names
	var out []Finding
	for _, f := range c.definite {
		f.Switches = names
		out = append(out, f)
	}
	for _, t := range c.tentative {
		f := t.f
		d := c.disturbed[disturbKey{t.in, t.f.Rule}]
		for _, n := range names {
			if !d[n] {
				f.Switches = append(f.Switches, n)
			}
		}
		if len(f.Switches) > 0 {
			out = append(out, f)
		}
	}
	return out
}

// opposite returns the stages that see the replies of a stage's traffic.
func opposite(st stage) []stage {
	if st == outACL {
		return []stage{inACL, inAfterLB}
	}
	return []stage{outACL}
}

// lintSwitch runs every per-switch rule on one switch of class c: the
// switch's own ACLs against all, and the shared ACLs its own disturb.
func (l *linter) lintSwitch(v *swView, c *class) []Finding {
	var out []Finding
	var buf qbuf // the queries of the switch's own ACLs (queryOf)
	if v.contest != nil {
		out = append(out, l.undecidedTiers(v))
	} else if v.tierStop != nil {
		out = append(out, l.ignoredTiers(v))
	}
	var byStage [nStages][]*inst
	for _, in := range v.own {
		out = append(out, l.matchFindings(v, in)...)
		if in.e != nil {
			byStage[in.a.stage] = append(byStage[in.a.stage], in)
		}
	}
	var own [nStages]*layer
	for st := range own {
		own[st] = l.newLayer(v, byStage[st])
	}
	both := func(st stage) []*layer { return []*layer{c.st[st], own[st]} }
	for st := range own {
		if l.tierStage(v, c, stage(st), own[st], &out) {
			continue
		}
		out = append(out, l.samePriority(v, stage(st), own[st], both(stage(st)))...)
		for _, b := range own[st].list {
			if f, ok := l.shadowCheck(v, stage(st), b, both(stage(st))); ok {
				out = append(out, f)
			}
		}
		// Shared ACLs below one of the switch's own that can meet it, and
		// whose verdict it might change.
		sh := c.changeable[st]
		dist := map[*inst]int{} // shared ACL → the highest own ACL above it that may meet it
		for _, a := range own[st].list {
			if sh.empty() || len(dist) == len(sh.list) {
				break // the own ACLs come by priority: the first to meet one is the highest
			}
			_, lo := sh.span(a.a.acl.Priority)
			sh.candidates(l.queryOf(&buf, v, a), lo, len(sh.list), func(_ int, b *inst) bool {
				if p, ok := dist[b]; !ok || a.a.acl.Priority > p {
					dist[b] = a.a.acl.Priority
				}
				return true
			})
		}
		for _, b := range sortedInsts(dist) {
			if !l.shadowChanges(v, b, c.shadow[b], both(stage(st)), own[st]) {
				continue
			}
			c.disturb(b, RuleShadowed, v.name)
			if f, ok := l.shadowCheck(v, stage(st), b, both(stage(st))); ok {
				out = append(out, f)
			}
		}

	}
	for st := range own {
		for _, b := range own[st].list {
			if b.a.verdict != vStateless {
				continue
			}
			if f, found, _ := l.noReply(v, stage(st), b, both); found {
				out = append(out, f)
			}
		}
		// Shared stateless ACLs whose replies one of the switch's own can meet.
		rx := c.replies[st]
		if rx.empty() {
			continue
		}
		dist := map[*inst]int{}
		for _, ost := range opposite(stage(st)) {
			for _, a := range own[ost].list {
				if len(dist) == len(rx.list) {
					break
				}
				rx.candidates(l.queryOf(&buf, v, a), 0, len(rx.list), func(_ int, b *inst) bool {
					dist[b] = 0
					return true
				})
			}
		}
		ownOnly := func(st stage) []*layer { return []*layer{own[st]} }
		for _, b := range sortedInsts(dist) {
			// Only the switch's own ACLs can change the class's verdict:
			// one that allows a reply, or one more that drops them.
			f, found, allowed := l.noReply(v, stage(st), b, ownOnly)
			if !allowed && !(found && len(f.ACLs) > 1) && !l.passMeetsReplies(v, stage(st), b, ownOnly) {
				continue
			}
			c.disturb(b, RuleStatelessNoReply, v.name)
			if f, found, _ := l.noReply(v, stage(st), b, both); found {
				out = append(out, f)
			}
		}
	}
	out = append(out, l.statelessMarks(v, both)...)
	if v.lbVIP {
		for _, st := range []stage{inACL, inAfterLB} {
			for _, ly := range both(st) {
				for _, in := range ly.list {
					if in.a.verdict == vStateless {
						out = append(out, l.lbVIP(v, in)...)
					}
				}
			}
		}
	}
	if v.stateful {
		for _, ly := range own {
			for _, in := range ly.list {
				if in.a.verdict == vReject {
					if f, ok := l.rejectOr(v, in); ok {
						out = append(out, f)
					}
				}
			}
		}
	}
	if l.defaultACLDrop && v.hasACLs {
		out = append(out, l.defaultDropAfterLB(v, both(inACL), both(inAfterLB))...)
	}
	for i := range out {
		out[i].Switches = []string{v.name}
	}
	return out
}

// sortedInsts returns the map's ACLs in stage order.
func sortedInsts[V any](m map[*inst]V) []*inst {
	out := make([]*inst, 0, len(m))
	for in := range m {
		out = append(out, in)
	}
	slices.SortFunc(out, instCmp)
	return out
}
