package compile

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// pgShared is what every switch of one port group shares in a full
// Compile: the port group's ACLs resolved, its contribution to the
// datapath flags, which of its ACLs reference other port groups, and
// its ACL-stage and stateless pre-ACL flows, each computed once (by the
// first switch that needs them) instead of once per switch, and sorted in
// lflow-list order so that a switch merges them instead of sorting them.
//
// Only Compile builds these (global.shared); the incremental engine, which
// mutates the global indexes between compiles, goes through the per-ACL
// path and its per-ACL cache.
type pgShared struct {
	id string // the port group's UUID
	pg *nbdb.PortGroup

	infoOnce    sync.Once
	acls        []*nbdb.ACL // pg.ACLs that exist, in order
	hasStateful bool        // some ACL is allow-related
	foreign     []*nbdb.ACL // ACLs whose match names a port group other than pg
	samples     bool        // some ACL has sample_new or sample_est
	nfGroups    bool        // some ACL has network_function_group
	problems    []Problem   // its ACLs' appendGlobalACLProblems
	touched     uintptr     // touch's result

	// ACL-stage flows, sorted, one list per variant (flowVariant); a
	// stateful variant includes the allow-stateless pre-ACL flows.
	flowOnce [numFlowVariants]sync.Once
	flows    [numFlowVariants][]lflow.Flow
}

// An ACL's flows depend on the datapath only through whether it is
// stateful and, per eval stage, whether it has tiers (considerACL's
// tier prefix): a flow variant is one combination, bit 0 stateful, bit
// 1+i tiers in aclPipes[i].
const numFlowVariants = 1 << (2 + len(aclTiers{}))

func flowVariant(hasStateful bool, tiers aclTiers, noOutFilter bool) int {
	v := 0
	if hasStateful {
		v = 1
	}
	for i, t := range tiers {
		if t > 0 {
			v |= 2 << i
		}
	}
	if noOutFilter {
		v |= 2 << len(tiers)
	}
	return v
}

// newShared prepares the (still empty) per-port-group entries.
func (g *global) newShared() map[string]*pgShared {
	m := make(map[string]*pgShared, len(g.s.PortGroups))
	for id, pg := range g.s.PortGroups {
		m[id] = &pgShared{id: id, pg: pg}
	}
	return m
}

// presentPortGroups returns the port groups present on the switches ids
// (whose switches take their flows from g.shared), each once, and their
// ACLs.
func (g *global) presentPortGroups(ids []string) ([]*pgShared, map[*nbdb.ACL]struct{}) {
	var out []*pgShared
	seen := make(map[*pgShared]bool, len(g.shared))
	n := 0
	for _, id := range ids {
		for _, pg := range g.v.SwitchPortGroups(id) {
			if sh := g.shared[pg]; sh != nil && !seen[sh] {
				seen[sh] = true
				out = append(out, sh)
				n += len(sh.pg.ACLs)
			}
		}
	}
	acls := make(map[*nbdb.ACL]struct{}, n)
	for _, sh := range out {
		for _, acl := range g.v.PortGroupACLs(sh.id) {
			acls[acl] = struct{}{}
		}
	}
	return out, acls
}

// info resolves the port group's ACLs once.
func (sh *pgShared) info(g *global) *pgShared {
	sh.infoOnce.Do(func() {
		sh.acls = g.v.PortGroupACLs(sh.id)
		sh.touched = touch(sh.acls)
		for _, acl := range sh.acls {
			if acl.Action == "allow-related" {
				sh.hasStateful = true
			}
			sh.samples = sh.samples || hasSampleColumn(acl)
			sh.nfGroups = sh.nfGroups || acl.NetworkFunctionGroup != nil
			sh.problems = g.appendGlobalACLProblems(sh.problems, acl)
			for ref := range eachRef(acl.Match, '@') {
				// The port group's own name always resolves on the
				// switches where its ACLs apply: it has ports there.
				if ref != sh.pg.Name {
					sh.foreign = append(sh.foreign, acl)
					break
				}
			}
		}
	})
	return sh
}

// aclStageFlows returns the port group's flows on a datapath that is (or
// is not) stateful and has the given highest tiers, sorted: its ACL-stage
// flows and, on a stateful datapath (a stateful ACL or a load balancer
// VIP, where buildPreACLs adds them), its allow-stateless pre-ACL flows.
func (sh *pgShared) aclStageFlows(g *global, hasStateful bool, tiers aclTiers, noOutFilter bool) []lflow.Flow {
	i := flowVariant(hasStateful, tiers, noOutFilter)
	sh.flowOnce[i].Do(func() {
		sh.info(g)
		out := make([]lflow.Flow, 0, 2*len(sh.acls))
		var scratch []aclFlow
		for _, acl := range sh.acls {
			if hasStateful {
				if f, ok := statelessFilter(acl, noOutFilter); ok {
					f.Stage = g.r.layout.Stage(f.Stage)
					out = append(out, f)
				}
			}
			scratch = g.appendACLFlows(scratch[:0], acl, hasStateful, tiers)
			for _, f := range scratch {
				out = append(out, lflow.Flow{Stage: g.r.layout.Stage(f.stage), Priority: f.priority, Match: f.match, Actions: f.actions, Source: acl.UUID})
			}
		}
		sh.flows[i] = compactFlows(sortFlows(out))
	})
	return sh.flows[i]
}

// statelessFilter is build_stateless_filter: the pre-ACL flow of an
// allow-stateless ACL, which sets reg0[16] so that pre-LB and pre-stateful
// skip conntrack. noOut leaves out the egress one (25.09.0 on a switch in
// the stateless-ACL-with-LB mode: skipsOutFilter).
func statelessFilter(acl *nbdb.ACL, noOut bool) (lflow.Flow, bool) {
	if acl.Action != "allow-stateless" {
		return lflow.Flow{}, false
	}
	st := lflow.OutPreACL
	if acl.Direction == "from-lport" {
		st = lflow.InPreACL
	} else if noOut {
		return lflow.Flow{}, false
	}
	return lflow.Flow{Stage: st, Priority: acl.Priority + aclPriorityOffset, Match: acl.Match,
		Actions: regbitACLStateless + " = 1; next;", Source: acl.UUID}, true
}

// hasSampleColumn reports whether acl names a Sample (24.09+).
func hasSampleColumn(acl *nbdb.ACL) bool { return acl.SampleNew != nil || acl.SampleEst != nil }

// flowKey orders flows of one layout as lflow.Compare does on its first
// two fields: stage kind ascending, then priority descending. Flows with
// equal keys are ordered by lflow.Compare (match, then actions).
func flowKey(f *lflow.Flow) uint64 {
	return uint64(f.Stage.Kind())<<32 | uint64(math.MaxUint32-uint32(f.Priority))
}

// compareFlows is lflow.Compare on the flows of one layout, integer keys
// first.
func compareFlows(a, b *lflow.Flow) int {
	if ka, kb := flowKey(a), flowKey(b); ka != kb {
		return cmp.Compare(ka, kb)
	}
	return cmp.Or(strings.Compare(a.Match, b.Match), strings.Compare(a.Actions, b.Actions))
}

// keyed is a flow's position and flowKey, what sortFlows sorts.
type keyed struct {
	key uint64
	i   int
}

// keyedPool holds sortFlows' index arrays for reuse.
var keyedPool = sync.Pool{New: func() any { return new([]keyed) }}

// sortFlows sorts flows (of one layout) in lflow-list order
// (lflow.Compare) and returns them. It sorts a small index by integer keys
// first, then moves each 64-byte flow once (following the permutation's
// cycles).
func sortFlows(flows []lflow.Flow) []lflow.Flow {
	if len(flows) < 2 {
		return flows
	}
	kp := keyedPool.Get().(*[]keyed)
	defer keyedPool.Put(kp)
	ks := slices.Grow((*kp)[:0], len(flows))[:len(flows)]
	*kp = ks
	for i := range flows {
		ks[i] = keyed{flowKey(&flows[i]), i}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if a.key != b.key {
			return cmp.Compare(a.key, b.key)
		}
		fa, fb := &flows[a.i], &flows[b.i]
		return cmp.Or(strings.Compare(fa.Match, fb.Match), strings.Compare(fa.Actions, fb.Actions))
	})
	// flows[j] must become the old flows[ks[j].i]; a done position gets
	// ks[j].i = j.
	for j := range ks {
		if ks[j].i == j {
			continue
		}
		tmp, cur := flows[j], j
		for {
			next := ks[cur].i
			ks[cur].i = cur
			if next == j {
				flows[cur] = tmp
				break
			}
			flows[cur] = flows[next]
			cur = next
		}
	}
	return flows
}

// compactFlows removes the exact duplicates (sameFlow) from sorted flows,
// keeping the first of each, in place, and returns them.
func compactFlows(flows []lflow.Flow) []lflow.Flow {
	return slices.CompactFunc(flows, func(a, b lflow.Flow) bool { return sameFlow(&a, &b) })
}

// mergeSorted merges the sorted runs (flows of one layout), each free of
// exact duplicates (compactFlows), into one sorted slice without exact
// duplicates (as Datapath.Sort leaves it), in one pass: a heap of the runs
// ordered by their first flow, integer keys first. Equal flows are
// adjacent in the output and never come from one run, so a flow is
// compared with the previous one only when that came from another run
// with the same key. The runs are not modified.
func mergeSorted(runs [][]lflow.Flow) []lflow.Flow {
	n := 0
	h := make(runHeap, 0, len(runs))
	for i, r := range runs {
		if len(r) > 0 {
			h = append(h, runHead{flowKey(&r[0]), i, r})
			n += len(r)
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	out := make([]lflow.Flow, 0, n)
	lastRun, lastKey := -1, uint64(0)
	for len(h) > 0 {
		top := &h[0]
		f := &top.run[0]
		if top.id == lastRun || top.key != lastKey || !sameFlow(&out[len(out)-1], f) {
			out = append(out, *f)
			lastRun, lastKey = top.id, top.key
		}
		if top.run = top.run[1:]; len(top.run) == 0 {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		} else {
			top.key = flowKey(&top.run[0])
		}
		h.down(0)
	}
	return out
}

// sameFlow reports whether a and b have the same key.
func sameFlow(a, b *lflow.Flow) bool {
	return a.Stage == b.Stage && a.Priority == b.Priority && a.Match == b.Match && a.Actions == b.Actions
}

// runHead is a non-empty sorted run and the flowKey of its first flow.
type runHead struct {
	key uint64
	id  int // the run's index in mergeSorted's runs
	run []lflow.Flow
}

func (r *runHead) less(o *runHead) bool {
	if r.key != o.key {
		return r.key < o.key
	}
	return compareFlows(&r.run[0], &o.run[0]) < 0
}

// runHeap is a min-heap of runs by their first flow.
type runHeap []runHead

func (h runHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && h[r].less(&h[l]) {
			m = r
		}
		if !h[m].less(&h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// anyApplied reports whether an ACL that applies on od satisfies own: one
// of the switch's own or of its port groups' (through has, the port
// group's precomputed fact, in a full Compile).
func (g *global) anyApplied(od *datapath, own func(*nbdb.ACL) bool, has func(*pgShared) bool) bool {
	for _, acl := range od.ACLs {
		if own(acl) {
			return true
		}
	}
	for _, pg := range od.PortGroups {
		if sh := g.shared[pg.UUID]; sh != nil {
			if has(sh.info(g)) {
				return true
			}
			continue
		}
		for _, id := range pg.ACLs {
			if acl, ok := g.s.ACLs[id]; ok && own(acl) {
				return true
			}
		}
	}
	return false
}
