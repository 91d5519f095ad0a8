package compile

import (
	"reflect"
	"strings"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// dpFlags are the per-switch facts northd's ls_get_acl_flags and LB check
// derive; every flow of a switch that no ACL produces depends only on
// them, the switch's ports and rows other than ACLs.
type dpFlags struct {
	hasACLs, hasStateful, hasLBVIP bool
	// tiers: the highest ACL tier of each ACL stage (23.06+), on which
	// every ACL flow and the action stages depend.
	tiers aclTiers
	// noOutFilter: the egress stateless filters are left out
	// (skipsOutFilter).
	noOutFilter bool
	// contest: the port groups whose order in northd's hash table decides
	// the tiers (nbview.Switch.TierContest, joined), which the switch's
	// KindNorthdUndecided problem names.
	contest string
}

func (g *global) flagsOf(od *datapath) dpFlags {
	return dpFlags{od.HasACLs, od.HasStatefulACL, od.HasLBVIP, g.maxACLTiers(od), g.skipsOutFilter(od), strings.Join(od.TierContest, ",")}
}

// needCT reports whether the switch's traffic goes through conntrack.
func (f dpFlags) needCT() bool { return f.hasStateful || f.hasLBVIP }

// rowChange is one row of a batch with its state before and after.
type rowChange struct {
	table    string
	id       string
	old, new model.Model
}

// aclPatch is an ACL-only batch: the ACLs it changes (content, where
// they are listed, or rows they name), with their rows, the switches they
// reached before, and what they produced there.
type aclPatch struct {
	acls   map[string][2]*nbdb.ACL // ACL -> old, new row (nil: absent)
	oldDPs map[string]set          // ACL -> switches it reached before
	// oldFlows are each ACL's flows before the batch, by the flags of the
	// switches it reached; oldKeys its share keys then.
	oldFlows map[string]map[dpFlags][]lflow.Flow
	oldKeys  map[string][]shareKey
}

// newACLPatch returns the patch of a batch, computed on the state before
// the batch, or nil when the batch changes anything but ACLs, the ACL
// columns of switches and port groups, address sets and samples (deps:
// the ACLs whose samples change).
func (e *Engine) newACLPatch(changes []rowChange, deps set) *aclPatch {
	p := &aclPatch{acls: map[string][2]*nbdb.ACL{}, oldDPs: map[string]set{},
		oldFlows: map[string]map[dpFlags][]lflow.Flow{}, oldKeys: map[string][]shareKey{}}
	listed := func(id string) {
		if _, ok := p.acls[id]; !ok {
			a := e.g.s.ACLs[id]
			p.acls[id] = [2]*nbdb.ACL{a, a}
		}
	}
	for _, ch := range changes {
		switch ch.table {
		case nbdb.AddressSetTable, nbdb.SampleTable, nbdb.SampleCollectorTable, nbdb.SamplingAppTable:
		case nbdb.NBGlobalTable:
			// Only changes that leave the compiler's options alone reach
			// here (others make the batch a full rebuild): nb_cfg bumps,
			// which ovn-nbctl --wait and CMSs commit with their changes.
		case nbdb.ACLTable:
			var o, n *nbdb.ACL
			if ch.old != nil {
				o = ch.old.(*nbdb.ACL)
			}
			if ch.new != nil {
				n = ch.new.(*nbdb.ACL)
			}
			p.acls[ch.id] = [2]*nbdb.ACL{o, n}
		case nbdb.LogicalSwitchTable, nbdb.PortGroupTable:
			diff, ok := aclsOnlyDiff(ch.old, ch.new)
			if !ok {
				return nil
			}
			for _, a := range diff {
				listed(a)
			}
		default:
			return nil
		}
	}
	for a := range deps {
		listed(a)
	}
	for _, rows := range p.acls {
		if e.g.aclNeedsRebuild(rows[0]) || e.g.aclNeedsRebuild(rows[1]) {
			return nil
		}
	}
	for id, rows := range p.acls {
		dps := e.aclDPs(id)
		p.oldDPs[id] = dps
		if rows[0] == nil {
			continue
		}
		p.oldKeys[id] = e.g.shareKeys(nil, rows[0])
		byFlags := map[dpFlags][]lflow.Flow{}
		for sw := range dps {
			fl := e.flags[sw]
			if _, ok := byFlags[fl]; !ok {
				byFlags[fl] = e.g.aclDPFlows(rows[0], fl)
			}
		}
		p.oldFlows[id] = byFlags
	}
	return p
}

// aclsOnlyDiff returns the ACLs listed by exactly one of two versions of
// a switch or port group row, and whether the versions differ in nothing
// else.
func aclsOnlyDiff(old, cur model.Model) ([]string, bool) {
	switch o := old.(type) {
	case *nbdb.LogicalSwitch:
		n, ok := cur.(*nbdb.LogicalSwitch)
		if !ok {
			return nil, false
		}
		oc, nc := *o, *n
		oc.ACLs, nc.ACLs = nil, nil
		return symDiff(o.ACLs, n.ACLs), reflect.DeepEqual(oc, nc)
	case *nbdb.PortGroup:
		n, ok := cur.(*nbdb.PortGroup)
		if !ok {
			return nil, false
		}
		oc, nc := *o, *n
		oc.ACLs, nc.ACLs = nil, nil
		return symDiff(o.ACLs, n.ACLs), reflect.DeepEqual(oc, nc)
	}
	return nil, false
}

// symDiff returns the elements of exactly one of two sorted lists.
func symDiff(a, b []string) []string {
	var out []string
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			i++
			j++
		case a[i] < b[j]:
			out = append(out, a[i])
			i++
		default:
			out = append(out, b[j])
			j++
		}
	}
	out = append(out, a[i:]...)
	return append(out, b[j:]...)
}

// aclDPs returns the existing switches whose flows ACL id is part of, as
// the compiler's indexes say now.
func (e *Engine) aclDPs(id string) set {
	s, g := e.g.s, e.g
	out := set{}
	for _, sw := range e.g.v.SwitchesOfACL(id) {
		if _, ok := s.Switches[sw]; ok {
			out[sw] = struct{}{}
		}
	}
	for _, pgID := range e.g.v.PortGroupsOfACL(id) {
		pg, ok := s.PortGroups[pgID]
		if !ok {
			continue
		}
		for _, p := range pg.Ports {
			if sw := g.v.PortSwitch(p); sw != "" {
				out[sw] = struct{}{}
			}
		}
	}
	return out
}

// aclOnDP reports whether ACL id is part of the flows of switch sw.
func (e *Engine) aclOnDP(id, sw string) bool {
	if e.g.v.SwitchesOfACL(id).Has(sw) {
		return true
	}
	for _, pg := range e.g.v.SwitchPortGroups(sw) {
		if e.g.v.PortGroupsOfACL(id).Has(pg) {
			return true
		}
	}
	return false
}

// aclDPFlows returns every flow ACL a adds to a switch with flags fl: its
// pre-ACL stateless filter (buildStatelessFilters), its ACL-stage flows
// (consider_acl) and, from 24.09, its sample-stage flows
// (build_acl_sample_flows).
func (g *global) aclDPFlows(a *nbdb.ACL, fl dpFlags) []lflow.Flow {
	var out []lflow.Flow
	lay := g.r.layout
	if fl.hasStateful || fl.hasLBVIP {
		if f, ok := statelessFilter(a, fl.noOutFilter); ok {
			f.Stage = lay.Stage(f.Stage)
			out = append(out, f)
		}
	}
	for _, f := range g.aclFlows(a, fl.hasStateful || fl.hasLBVIP, fl.tiers) {
		out = append(out, lflow.Flow{Stage: lay.Stage(f.stage), Priority: f.priority, Match: f.match, Actions: f.actions, Source: a.UUID})
	}
	for _, f := range g.aclSampleFlows(fl.hasStateful, a) {
		out = append(out, lflow.Flow{Stage: lay.Stage(f.stage), Priority: f.priority, Match: f.match, Actions: f.actions, Source: a.UUID})
	}
	return out
}

// patchACLs patches the flows of the switches in ids whose flags did not
// change, and returns the others, which need a full rebuild, and the
// deltas of the patched ones. It runs on the state after the batch.
func (e *Engine) patchACLs(p *aclPatch, ids []string) ([]string, map[string]DatapathDelta) {
	patched := map[string]DatapathDelta{}
	g := e.g
	newDPs := make(map[string]set, len(p.acls))
	for id := range p.acls {
		newDPs[id] = e.aclDPs(id)
	}
	var slow []string
	for _, sw := range ids {
		old, ok := e.dps[sw]
		if _, exists := g.s.Switches[sw]; !ok || !exists {
			slow = append(slow, sw)
			continue
		}
		od := g.v.SwitchFlags(sw)
		fl := g.flagsOf(od)
		if fl != e.flags[sw] {
			slow = append(slow, sw)
			continue
		}
		var add, rm []lflow.Flow
		adding := map[lflow.Key]bool{}
		for id, rows := range p.acls {
			if _, on := newDPs[id][sw]; on && rows[1] != nil {
				for _, f := range g.aclDPFlows(rows[1], fl) {
					add = append(add, f)
					adding[f.Key()] = true
				}
			}
		}
		for id, rows := range p.acls {
			if _, on := p.oldDPs[id][sw]; !on || rows[0] == nil {
				continue
			}
			for _, f := range p.oldFlows[id][fl] {
				if !adding[f.Key()] && !e.otherProducer(p, rows[0], p.oldKeys[id], f, sw, fl) {
					rm = append(rm, f)
				}
			}
		}
		fs, added, removed := old.flows.patch(add, rm)
		e.dps[sw] = &dpFlows{name: old.name, name2: old.name2, uuid: old.uuid, flows: fs}
		patched[sw] = DatapathDelta{UUID: sw, Name: old.name, Name2: old.name2, Added: added, Removed: removed}
		e.patchProblems(p, od, newDPs)
	}
	return slow, patched
}

// otherProducer reports whether an ACL the batch did not change, on switch
// sw, also produces flow f, which a changed ACL produced (its row a, its
// share keys keys, before the batch). Only an ACL with the key that f's
// kind holds can: the priority and match for pre-ACL and ACL-stage flows,
// the label for log-related ones, the observation point or collector for
// sample flows. The candidates are the ACLs under that key or, when it has
// more ACLs than the switch (a collector every sample uses), the switch's
// ACLs that could have it.
func (e *Engine) otherProducer(p *aclPatch, a *nbdb.ACL, keys []shareKey, f lflow.Flow, sw string, fl dpFlags) bool {
	g := e.g
	k := f.Key()
	sampleFlow := isSampleStage(f.Stage)
	var want []shareKey // the keys a producer must have one of
	switch {
	case sampleFlow:
		want = keys[1:]
	case f.Priority == logRelatedPriority:
		if a.Label != 0 {
			want = keys[1:2] // the label key follows the match key
		}
	default:
		want = keys[:1]
	}
	// could reports whether acl may have one of the wanted keys (a cheap
	// test for the scan of a switch's ACLs).
	could := func(acl *nbdb.ACL) bool {
		switch {
		case sampleFlow:
			return acl.SampleNew != nil || acl.SampleEst != nil
		case f.Priority == logRelatedPriority:
			return acl.Label == a.Label
		}
		return acl.Priority == a.Priority && acl.Match == a.Match
	}
	produces := func(b string) bool {
		if _, changed := p.acls[b]; changed {
			return false
		}
		acl, ok := g.s.ACLs[b]
		if !ok || !could(acl) {
			return false
		}
		if sampleFlow {
			for _, sf := range g.aclSampleFlows(fl.hasStateful, acl) {
				if (lflow.Flow{Stage: g.r.layout.Stage(sf.stage), Priority: sf.priority, Match: sf.match, Actions: sf.actions}).Key() == k {
					return true
				}
			}
			return false
		}
		for _, of := range g.aclDPFlows(acl, fl) {
			if of.Key() == k {
				return true
			}
		}
		return false
	}
	n := 0
	for _, key := range want {
		n += len(e.shareACLs.Get(key))
	}
	if n > scanFrom && n > e.switchACLCount(sw) {
		found := false
		e.forSwitchACLs(sw, func(b string) bool {
			found = produces(b)
			return !found
		})
		return found
	}
	for _, key := range want {
		for _, b := range e.shareACLs.Get(key) {
			if e.aclOnDP(b, sw) && produces(b) {
				return true
			}
		}
	}
	return false
}

// scanFrom is how many candidates a key must have before otherProducer
// compares it with the switch's ACL count (a variable for tests).
var scanFrom = 16

// logRelatedPriority is the priority of build_acl_log_related_flows.
const logRelatedPriority = 65533

// isSampleStage reports whether st is an ACL sample stage.
func isSampleStage(st lflow.Stage) bool {
	switch st.Kind() {
	case lflow.InACLSample, lflow.InACLAfterLBSample, lflow.OutACLSample:
		return true
	}
	return false
}

// switchACLCount is how many ACLs switch sw and its port groups list.
func (e *Engine) switchACLCount(sw string) int {
	n := 0
	if ls, ok := e.g.s.Switches[sw]; ok {
		n = len(ls.ACLs)
	}
	for _, pg := range e.g.v.SwitchPortGroups(sw) {
		n += len(e.g.s.PortGroups[pg].ACLs)
	}
	return n
}

// forSwitchACLs calls fn with every ACL switch sw and its port groups
// list, until fn returns false.
func (e *Engine) forSwitchACLs(sw string, fn func(string) bool) {
	if ls, ok := e.g.s.Switches[sw]; ok {
		for _, a := range ls.ACLs {
			if !fn(a) {
				return
			}
		}
	}
	for _, pg := range e.g.v.SwitchPortGroups(sw) {
		for _, a := range e.g.s.PortGroups[pg].ACLs {
			if !fn(a) {
				return
			}
		}
	}
}

// patchProblems replaces, in the problems of switch od, those of the ACLs
// of the patch by their new ones.
func (e *Engine) patchProblems(p *aclPatch, od *datapath, newDPs map[string]set) {
	sw := od.ID
	var out []Problem
	for _, pr := range e.probs[sw] {
		if _, changed := p.acls[pr.ACL]; !changed {
			out = append(out, pr)
		}
	}
	for id, rows := range p.acls {
		if _, on := newDPs[id][sw]; !on || rows[1] == nil {
			continue
		}
		// An ACL listed twice on the switch is checked twice, as
		// switchProblems does; sortProblems compacts the copies.
		out = e.g.appendACLProblems(out, od, rows[1])
	}
	if len(out) > 0 {
		e.probs[sw] = out
	} else {
		delete(e.probs, sw)
	}
}
