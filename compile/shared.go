package compile

import (
	"slices"
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
	pg *nbdb.PortGroup

	infoOnce    sync.Once
	acls        []*nbdb.ACL // pg.ACLs that exist, in order
	hasStateful bool        // some ACL is allow-related
	foreign     []*nbdb.ACL // ACLs whose match names a port group other than pg

	flowOnce [2]sync.Once
	flows    [2][]lflow.Flow // ACL-stage flows, sorted; [1]: stateful datapath
	preOnce  sync.Once
	pre      []lflow.Flow // allow-stateless pre-ACL flows, sorted
}

// newShared prepares the (still empty) per-port-group entries.
func (g *global) newShared() map[string]*pgShared {
	m := make(map[string]*pgShared, len(g.s.PortGroups))
	for id, pg := range g.s.PortGroups {
		m[id] = &pgShared{pg: pg}
	}
	return m
}

// info resolves the port group's ACLs once.
func (sh *pgShared) info(g *global) *pgShared {
	sh.infoOnce.Do(func() {
		sh.acls = make([]*nbdb.ACL, 0, len(sh.pg.ACLs))
		for _, id := range sh.pg.ACLs {
			acl, ok := g.s.ACLs[id]
			if !ok {
				continue
			}
			sh.acls = append(sh.acls, acl)
			if acl.Action == "allow-related" {
				sh.hasStateful = true
			}
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

// aclStageFlows returns the port group's ACL-stage flows on a datapath that
// is (or is not) stateful, sorted.
func (sh *pgShared) aclStageFlows(g *global, hasStateful bool) []lflow.Flow {
	i := 0
	if hasStateful {
		i = 1
	}
	sh.flowOnce[i].Do(func() {
		sh.info(g)
		out := make([]lflow.Flow, 0, 2*len(sh.acls))
		for _, acl := range sh.acls {
			for _, f := range g.aclFlows(acl, hasStateful, aclTiers{}) {
				out = append(out, lflow.Flow{Stage: g.r.layout.Stage(f.stage), Priority: f.priority, Match: f.match, Actions: f.actions, Source: acl.UUID})
			}
		}
		slices.SortFunc(out, lflow.Compare)
		sh.flows[i] = out
	})
	return sh.flows[i]
}

// statelessFlows returns the port group's allow-stateless pre-ACL flows,
// sorted.
func (sh *pgShared) statelessFlows(g *global) []lflow.Flow {
	sh.preOnce.Do(func() {
		sh.info(g)
		var out []lflow.Flow
		for _, acl := range sh.acls {
			if f, ok := statelessFilter(acl); ok {
				f.Stage = g.r.layout.Stage(f.Stage)
				out = append(out, f)
			}
		}
		slices.SortFunc(out, lflow.Compare)
		sh.pre = out
	})
	return sh.pre
}

// statelessFilter is the pre-ACL flow of an allow-stateless ACL: it sets
// reg0[16] so that pre-LB and pre-stateful skip conntrack.
func statelessFilter(acl *nbdb.ACL) (lflow.Flow, bool) {
	if acl.Action != "allow-stateless" {
		return lflow.Flow{}, false
	}
	st := lflow.OutPreACL
	if acl.Direction == "from-lport" {
		st = lflow.InPreACL
	}
	return lflow.Flow{Stage: st, Priority: acl.Priority + aclPriorityOffset, Match: acl.Match,
		Actions: regbitACLStateless + " = 1; next;", Source: acl.UUID}, true
}

// mergeSorted merges the sorted runs into one sorted slice without exact
// duplicates (as Datapath.Sort leaves it), in one pass: a heap of the
// runs ordered by their first flow. The runs are not modified.
func mergeSorted(runs [][]lflow.Flow) []lflow.Flow {
	n := 0
	h := make(runHeap, 0, len(runs))
	for _, r := range runs {
		if len(r) > 0 {
			h = append(h, r)
			n += len(r)
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
	out := make([]lflow.Flow, 0, n)
	for len(h) > 0 {
		f := &h[0][0]
		if len(out) == 0 || !sameFlow(&out[len(out)-1], f) {
			out = append(out, *f)
		}
		if h[0] = h[0][1:]; len(h[0]) == 0 {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		h.down(0)
	}
	return out
}

// sameFlow reports whether a and b have the same key.
func sameFlow(a, b *lflow.Flow) bool {
	return a.Stage == b.Stage && a.Priority == b.Priority && a.Match == b.Match && a.Actions == b.Actions
}

// runHeap is a min-heap of non-empty sorted runs by their first flow.
type runHeap [][]lflow.Flow

func (h runHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		m := l
		if r := l + 1; r < len(h) && lflow.Compare(h[r][0], h[l][0]) < 0 {
			m = r
		}
		if lflow.Compare(h[m][0], h[i][0]) >= 0 {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
