package compile

import (
	"math/bits"
	"slices"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// What the engine does with the inputs of releases after 23.03: the ACL
// columns and tables that sampling, persist-established and network
// functions add. (Tiers are a switch flag, dpFlags.tiers.)
//
//   - A Sample, Sample_Collector or Sampling_App change changes the flows
//     of the ACLs that reach it (sample_new, sample_est → Sample →
//     collectors; every sampled ACL for an app): they are patched like
//     changed ACLs, unless the drop app may change the drop action
//     (debug_drop_collector_set), which rebuilds all.
//   - A Network_Function_Group, a Network_Function or a port one names
//     rebuilds the switches of the ACLs that name the group: the network
//     function stages' flows are per group on a switch.
//   - A Mirror, the mirror_rules of a port, or a port (switch or router)
//     named as a mirror's sink rebuilds the switches of the ports that
//     list the mirror: whether its serving port exists decides the
//     ls_out_pre_acl flow (buildMirror).
//   - ACL ids (options:persist-established) are kept from batch to batch
//     as northd keeps its SB ACL_ID rows: an ACL keeps its id while it
//     persists, a new one takes the lowest free id (en_acl_id_run).

// fullRebuild reports whether a row change makes the engine recompile
// every switch.
func (e *Engine) fullRebuild(table string, old, cur model.Model) bool {
	return table == nbdb.SamplingAppTable && e.g.r.sampling && e.g.s.GlobalOption("debug_drop_collector_set") != ""
}

// isSampleTable reports whether table is one whose rows change only the
// flows of the ACLs that reach them (patched like those ACLs).
func isSampleTable(table string) bool {
	return table == nbdb.SampleTable || table == nbdb.SampleCollectorTable || table == nbdb.SamplingAppTable
}

// aclNeedsRebuild reports whether a change of ACL a cannot be patched into
// its switches' flows: a network function group adds flows per group to
// the network function stages.
func (g *global) aclNeedsRebuild(a *nbdb.ACL) bool {
	return a != nil && g.r.nf && a.NetworkFunctionGroup != nil
}

// aclRefs adds or removes the references of ACL id a to the rows later
// releases add.
func (e *Engine) aclRefs(id string, a *nbdb.ACL, add bool) {
	for _, ref := range [2]*string{a.SampleNew, a.SampleEst} {
		if ref != nil {
			refOp(e.sampleACLs, *ref, id, add)
		}
	}
	if a.SampleNew != nil || a.SampleEst != nil {
		if add {
			e.sampled[id] = struct{}{}
		} else {
			delete(e.sampled, id)
		}
	}
	if a.NetworkFunctionGroup != nil {
		refOp(e.nfgACLs, *a.NetworkFunctionGroup, id, add)
	}
}

// refOp adds (add) or removes the reference of v to k.
func refOp(m interface {
	Add(k, v string)
	Del(k, v string)
}, k, v string, add bool) {
	if add {
		m.Add(k, v)
	} else {
		m.Del(k, v)
	}
}

// releaseRefs adds or removes the references of one row of the tables
// later releases add (and of a port, which a network function names).
func (e *Engine) releaseRefs(id string, row model.Model, add bool) {
	switch r := row.(type) {
	case *nbdb.Sample:
		for _, c := range r.Collectors {
			refOp(e.collectorSamples, c, id, add)
		}
	case *nbdb.NetworkFunctionGroup:
		for _, nf := range r.NetworkFunction {
			refOp(e.nfGroups, nf, id, add)
		}
		if r.NetworkFunctionActive != nil {
			refOp(e.nfGroups, *r.NetworkFunctionActive, id, add)
		}
	case *nbdb.NetworkFunction:
		refOp(e.portNFs, r.Inport, id, add)
		if r.Outport != nil { // optional from 26.09 (vtap)
			refOp(e.portNFs, *r.Outport, id, add)
		}
	case *nbdb.LogicalSwitchPort:
		for _, m := range r.MirrorRules {
			refOp(e.mirrorPorts, m, id, add)
		}
	case *nbdb.Mirror:
		refOp(e.sinkMirrors, r.Sink, id, add)
	}
}

// mirrorSwitches adds the switches of the ports that list mirror m.
func (e *Engine) mirrorSwitches(c *collector, m string) {
	for _, p := range e.mirrorPorts[m] {
		for _, sw := range e.g.v.SwitchesOfPort(p) {
			c.Switches[sw] = struct{}{}
		}
	}
}

// sinkSwitches adds the switches whose mirrors' serving ports a port
// called name (a switch or router port) makes exist.
func (e *Engine) sinkSwitches(c *collector, name string) {
	for _, m := range e.sinkMirrors[name] {
		e.mirrorSwitches(c, m)
	}
}

// releaseAffected adds to c what a row of the tables later releases add
// reaches (in its current state in the engine), and for a port the
// network functions that name it.
func (e *Engine) releaseAffected(c *collector, id string, row model.Model) {
	dep := func(a string) {
		c.ACLs[a] = struct{}{}
		c.deps[a] = struct{}{}
		e.aclOwnerSwitches(c, a)
	}
	nfGroup := func(g string) {
		for _, a := range e.nfgACLs.Get(g) {
			dep(a)
		}
	}
	nf := func(nf string) {
		for _, g := range e.nfGroups[nf] {
			nfGroup(g)
		}
	}
	switch r := row.(type) {
	case *nbdb.Mirror:
		e.mirrorSwitches(c, id)
	case *nbdb.Sample:
		for _, a := range e.sampleACLs.Get(id) {
			dep(a)
		}
	case *nbdb.SampleCollector:
		for _, smp := range e.collectorSamples.Get(id) {
			for _, a := range e.sampleACLs.Get(smp) {
				dep(a)
			}
		}
	case *nbdb.SamplingApp:
		for a := range e.sampled {
			dep(a)
		}
	case *nbdb.NetworkFunctionGroup:
		nfGroup(id)
	case *nbdb.NetworkFunction:
		nf(id)
	case *nbdb.LogicalSwitchPort:
		for _, f := range e.portNFs[id] {
			nf(f)
		}
		e.sinkSwitches(c, r.Name)
	}
}

// shareKeys appends the keys of the flows ACL a may have in common with
// another ACL: only ACLs with a key in common can produce the same flow.
// Its ACL-stage and pre-ACL flows hold its priority and match; the
// log-related flows its label; its sample flows its observation point
// (label or sample metadata) or, generic ones, the sample's collector id.
func (g *global) shareKeys(out []shareKey, a *nbdb.ACL) []shareKey {
	out = append(out, shareKey{n: a.Priority, match: a.Match})
	if a.Label != 0 {
		out = append(out, shareKey{kind: 'l', n: a.Label})
	}
	if !g.r.sampling || (a.SampleNew == nil && a.SampleEst == nil) {
		return out
	}
	for _, isNew := range [2]bool{true, false} {
		smp := g.aclSample(a, isNew)
		if smp == nil {
			continue
		}
		out = append(out, shareKey{kind: 'm', n: smp.Metadata})
		if len(smp.Collectors) == 1 {
			out = append(out, shareKey{kind: 'c', n: smp.Collectors[0].ID})
		}
	}
	return out
}

// share indexes (add) or unindexes ACL id by its share keys, computed on
// the rows as they are now.
func (e *Engine) share(id string, a *nbdb.ACL, add bool) {
	var buf [4]shareKey
	for _, k := range e.g.shareKeys(buf[:0], a) {
		if add {
			e.shareACLs.Add(k, id)
		} else {
			e.shareACLs.Del(k, id)
		}
	}
}

// shareKey is one share key: kind 0 is an ACL's priority (n) and match,
// 'l' a label, 'm' an observation point, 'c' a collector id (n). The match
// is the ACL row's own string: a key built by concatenation would copy
// every ACL's match once more (4 MB at 50k ACLs).
type shareKey struct {
	kind  byte
	n     int
	match string
}

// maxACLID is MAX_ACL_ID.
const maxACLID = 65535

// aclIDs are the ids of persist-established ACLs, as northd's SB ACL_ID
// table holds them.
type aclIDs struct {
	byACL map[string]int
	used  []uint64 // bit i: id i is taken
}

// newACLIDs starts from the ids given (a live SB's, or none), keeping
// those of ACLs that persist, and allocates the others in UUID order.
func newACLIDs(given map[string]int, s *nbschema.Snapshot) *aclIDs {
	x := &aclIDs{byACL: map[string]int{}, used: make([]uint64, (maxACLID+64)/64)}
	x.used[0] = 1 // id 0 is never handed out
	for _, id := range nbschema.SortedKeys(given) {
		n := given[id]
		if a, ok := s.ACLs[id]; ok && persistsEstablished(a) && n >= 1 && n <= maxACLID && !x.taken(n) {
			x.set(id, n)
		}
	}
	for _, id := range nbschema.SortedKeys(s.ACLs) {
		if _, ok := x.byACL[id]; !ok && persistsEstablished(s.ACLs[id]) {
			x.alloc(id)
		}
	}
	return x
}

func (x *aclIDs) taken(n int) bool { return x.used[n/64]&(1<<(n%64)) != 0 }

func (x *aclIDs) set(acl string, n int) {
	x.byACL[acl] = n
	x.used[n/64] |= 1 << (n % 64)
}

// alloc gives acl the lowest free id; none when all are taken ("Exhausted
// all ACL IDs").
func (x *aclIDs) alloc(acl string) {
	for w, bitsUsed := range x.used {
		if free := ^bitsUsed; free != 0 {
			if n := w*64 + bits.TrailingZeros64(free); n <= maxACLID {
				x.set(acl, n)
			}
			return
		}
	}
}

func (x *aclIDs) free(acl string) {
	if n, ok := x.byACL[acl]; ok {
		delete(x.byACL, acl)
		x.used[n/64] &^= 1 << (n % 64)
	}
}

// update frees the ids of the changed ACLs that no longer persist and
// allocates ids, in UUID order, for those that now do.
func (x *aclIDs) update(s *nbschema.Snapshot, changed []string) {
	var alloc []string
	for _, id := range changed {
		a, ok := s.ACLs[id]
		switch {
		case !ok || !persistsEstablished(a):
			x.free(id)
		default:
			if _, has := x.byACL[id]; !has {
				alloc = append(alloc, id)
			}
		}
	}
	slices.Sort(alloc)
	for _, id := range alloc {
		x.alloc(id)
	}
}

// ACLIDs returns the ACL ids the engine's flows use (ACL UUID -> id),
// nil on releases without persist-established. The map is a copy.
func (e *Engine) ACLIDs() map[string]int {
	if e.ids == nil {
		return nil
	}
	out := make(map[string]int, len(e.ids.byACL))
	for k, v := range e.ids.byACL {
		out[k] = v
	}
	return out
}
