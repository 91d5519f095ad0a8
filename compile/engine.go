package compile

import (
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/aclc/aclc/internal/par"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

type set = nbview.Set

// refIndex maps a row UUID (or a name) to the rows that reference it.
type refIndex = nbview.RefIndex

// Engine compiles an NB incrementally. It keeps its own copy of the NB
// rows, the NB-wide indexes the compiler uses (maintained row by row), the
// reverse references that say which switches a row affects, and the
// current flows of every switch. Apply takes a batch of row changes and
// rebuilds only the switches they affect.
//
// An Engine is not safe for concurrent use.
type Engine struct {
	g    *global
	opts Options // what it compiles for

	dps   map[string]*dpFlows  // switch UUID -> sorted flows
	probs map[string][]Problem // switch UUID -> its problems
	flags map[string]dpFlags   // switch UUID -> what its fixed flows depend on
	// undecided: the switches whose flags have a tier contest
	// (dpFlags.contest), for Undecided.
	undecided set

	// Reverse references, kept whether or not the target row exists
	// (those the view's facts need are the view's).
	lbSwitches  refIndex // LB -> switches listing it
	lbGroups    refIndex // LB -> LB groups listing it
	lbgSwitches refIndex // LB group -> switches listing it
	dhcpPorts   refIndex // DHCP_Options -> LSPs using it
	dnsSwitches refIndex // DNS -> switches listing it
	peerPorts   refIndex // LRP name -> LSPs whose options:router-port names it
	meterACLs   fanIndex // meter name -> ACLs using it
	portsByName refIndex // LSP name -> LSPs
	// shareACLs indexes ACLs by the keys of the flows they may share
	// with other ACLs (shareKeys).
	shareACLs fanMap[shareKey]

	// Later releases' references (engine_release.go).
	sampleACLs       fanIndex // Sample -> ACLs naming it in sample_new or sample_est
	collectorSamples fanIndex // Sample_Collector -> Samples listing it
	sampled          set      // ACLs with a sample_new or sample_est
	nfgACLs          fanIndex // Network_Function_Group -> ACLs naming it
	nfGroups         refIndex // Network_Function -> groups listing it (or as active)
	portNFs          refIndex // LSP -> network functions whose inport or outport it is
	mirrorPorts      refIndex // Mirror -> LSPs listing it in mirror_rules
	sinkMirrors      refIndex // port name -> Mirrors whose sink it is
	// ids are the ACL ids of persist-established ACLs (25.03+), kept
	// from batch to batch as northd keeps its SB ACL_ID rows; nil on
	// releases without.
	ids *aclIDs
	// newRelease: SetRelease changed the release; the next Apply
	// rebuilds every switch.
	newRelease bool
}

// SetRelease makes the engine compile for release r from the next Apply
// on, which rebuilds every switch: another ovn-northd took over the NB (an
// upgrade changes NB_Global options:northd_internal_version, and that
// change is in the batch).
func (e *Engine) SetRelease(r *release.Release) {
	if r == nil || r.Equal(e.opts.Release) {
		return
	}
	e.opts.Release, e.g.s.Release = r, r
	e.newRelease = true
	switch persist := newRules(r).persist; {
	case persist && e.ids == nil:
		e.ids = newACLIDs(e.opts.ACLIDs, e.g.s)
	case !persist:
		e.ids = nil
	}
}

// Release is the release the engine compiles for.
func (e *Engine) Release() *release.Release { return e.opts.Release }

// NewEngine compiles s in full (for s.Release) and
// returns an engine holding it; the
// engine takes ownership of s (sets must be sorted, as every Snapshot
// source leaves them).
func NewEngine(s *nbschema.Snapshot) *Engine { return NewEngineWith(s, Options{Release: s.Release}) }

// NewEngineWith is NewEngine for opts.Release.
func NewEngineWith(s *nbschema.Snapshot, opts Options) *Engine {
	opts.Release = opts.releaseOf(s)
	e := &Engine{opts: opts}
	if newRules(opts.Release).persist {
		e.ids = newACLIDs(opts.ACLIDs, s)
	}
	e.reset(s)
	return e
}

func (e *Engine) reset(s *nbschema.Snapshot) {
	e.g = newGlobal(nbview.NewIncrementalFor(s, e.opts.Release))
	o := e.opts
	if e.ids != nil {
		o.ACLIDs = e.ids.byACL
	}
	e.g.target(o)
	// Rows come and go: compile every switch's sample flows, not only
	// when some ACL has a sample now (build_acl_sample_flows makes none
	// for an ACL without).
	e.g.anySamples = e.g.r.sampling
	e.dps = make(map[string]*dpFlows, len(s.Switches))
	e.probs = make(map[string][]Problem, len(s.Switches))
	e.flags = make(map[string]dpFlags, len(s.Switches))
	e.undecided = set{}
	e.lbSwitches = refIndex{}
	e.lbGroups = refIndex{}
	e.lbgSwitches = refIndex{}
	e.dhcpPorts = refIndex{}
	e.dnsSwitches = refIndex{}
	e.peerPorts = refIndex{}
	e.meterACLs = fanIndex{}
	e.portsByName = refIndex{}
	e.shareACLs = fanMap[shareKey]{}
	e.sampleACLs = fanIndex{}
	e.collectorSamples = fanIndex{}
	e.sampled = set{}
	e.nfgACLs = fanIndex{}
	e.nfGroups = refIndex{}
	e.portNFs = refIndex{}
	e.mirrorPorts = refIndex{}
	e.sinkMirrors = refIndex{}
	for _, t := range nbschema.Tables() {
		for id, row := range t.Rows(s) {
			e.refs(id, row, true)
		}
	}
	for id, a := range s.ACLs {
		e.share(id, a, true)
	}
	e.recompile(nbschema.SortedKeys(s.Switches))
}

// Snapshot returns the engine's current NB rows. Callers must not modify
// them.
func (e *Engine) Snapshot() *nbschema.Snapshot { return e.g.s }

// Listing returns the current flows of every switch, sorted as lflow-list
// prints them. Datapaths are shared with the engine: do not modify them.
func (e *Engine) Listing() *lflow.Listing {
	l := &lflow.Listing{Datapaths: make([]*lflow.Datapath, 0, len(e.dps))}
	for _, dp := range e.dps {
		l.Datapaths = append(l.Datapaths, dp.datapath())
	}
	sortDatapaths(l)
	return l
}

// NumFlows returns the current number of flows over all switches.
func (e *Engine) NumFlows() int {
	n := 0
	for _, dp := range e.dps {
		n += dp.flows.Len()
	}
	return n
}

// Problems returns the problems of the current NB, as Compile would.
func (e *Engine) Problems() []Problem {
	var out []Problem
	for _, p := range e.probs {
		out = append(out, p...)
	}
	out = append(out, e.g.globalProblems()...)
	return sortProblems(out)
}

// Undecided returns the switches (NB UUIDs, ascending) whose flows the
// release's northd may write otherwise, depending on its own state
// (KindNorthdUndecided): the engine's flows for them are one outcome.
func (e *Engine) Undecided() []string { return slices.Sorted(maps.Keys(e.undecided)) }

// NeedsConntrack reports whether switch id has a stateful ACL or a load
// balancer VIP (so its traffic goes through conntrack).
func (e *Engine) NeedsConntrack(id string) bool { return e.flags[id].needCT() }

// SwitchPortNames returns the names of the existing ports of switch id.
func (e *Engine) SwitchPortNames(id string) []string {
	ls, ok := e.g.s.Switches[id]
	if !ok {
		return nil
	}
	var out []string
	for _, p := range ls.Ports {
		if lsp, ok := e.g.s.Ports[p]; ok {
			out = append(out, lsp.Name)
		}
	}
	sort.Strings(out)
	return out
}

// ForEachRow calls fn for every row of table the engine holds. fn must not
// modify the row or call back into the engine.
func (e *Engine) ForEachRow(table string, fn func(uuid string, row model.Model)) {
	t := nbschema.TableByName(table)
	if t == nil {
		return
	}
	for id, row := range t.Rows(e.g.s) {
		fn(id, row)
	}
}

// Row returns the engine's current row UUID of table, or nil.
func (e *Engine) Row(table, uuid string) model.Model {
	t := nbschema.TableByName(table)
	if t == nil {
		return nil
	}
	r, ok := t.Row(e.g.s, uuid)
	if !ok {
		return nil
	}
	return r
}

// globalOptionKeys are the NB_Global options the compiler reads.
var globalOptionKeys = []string{"use_ct_inv_match", "default_acl_drop", "controller_event",
	"debug_drop_collector_set", "debug_drop_domain_id", "install_ls_lb_from_router", "acl_ct_translation", "ignore_chassis_features"}

func globalOptions(g *nbdb.NBGlobal) []string {
	out := make([]string, len(globalOptionKeys))
	if g == nil {
		return out
	}
	for i, k := range globalOptionKeys {
		out[i] = g.Options[k]
	}
	return out
}

// Apply applies one batch of row changes and returns the delta of flows.
// Changes of tables the engine does not follow are ignored, as are rows
// whose content did not change.
func (e *Engine) Apply(changes []RowChange) *Delta {
	s := e.g.s
	d := &Delta{}
	type step struct {
		t        *nbschema.Table
		id       string
		old, new model.Model
	}
	var steps []step
	seen := map[[2]string]int{}
	for _, ch := range changes {
		t := nbschema.TableByName(ch.Table)
		if t == nil {
			continue
		}
		if ch.Row != nil {
			t.SortSets(ch.Row)
		}
		k := [2]string{ch.Table, ch.UUID}
		if i, dup := seen[k]; dup {
			steps[i].new = ch.Row // the last state of a row wins
			continue
		}
		old, _ := t.Row(s, ch.UUID)
		seen[k] = len(steps)
		steps = append(steps, step{t: t, id: ch.UUID, old: old, new: ch.Row})
	}
	kept := steps[:0]
	for _, st := range steps {
		if (st.old == nil && st.new == nil) || (st.old != nil && st.new != nil && reflect.DeepEqual(st.old, st.new)) {
			continue
		}
		op := "update"
		switch {
		case st.old == nil:
			op = "insert"
		case st.new == nil:
			op = "delete"
		}
		d.Changes = append(d.Changes, RowOp{Table: st.t.Name, UUID: st.id, Op: op})
		kept = append(kept, st)
	}
	steps = kept
	slices.SortFunc(d.Changes, func(a, b RowOp) int {
		if c := strings.Compare(a.Table, b.Table); c != 0 {
			return c
		}
		return strings.Compare(a.UUID, b.UUID)
	})
	if len(steps) == 0 {
		return d
	}

	// A new release, or a changed NB_Global option, changes every switch:
	// rebuild all.
	if e.newRelease {
		d.Full, e.newRelease = true, false
	}
	for _, st := range steps {
		if st.t.Name != nbdb.NBGlobalTable {
			continue
		}
		var o, n *nbdb.NBGlobal
		if st.old != nil {
			o = st.old.(*nbdb.NBGlobal)
		}
		if st.new != nil {
			n = st.new.(*nbdb.NBGlobal)
		}
		if !slices.Equal(globalOptions(o), globalOptions(n)) {
			d.Full = true
		}
	}
	for _, st := range steps {
		if e.fullRebuild(st.t.Name, st.old, st.new) {
			d.Full = true
		}
	}
	// With install_ls_lb_from_router, a switch's load balancers include
	// those of the routers it connects to, which the indexes do not
	// follow: any change on that path rebuilds all.
	if e.g.installLSLBFromRouter {
		for _, st := range steps {
			switch st.t.Name {
			case nbdb.LoadBalancerTable, nbdb.LoadBalancerGroupTable, nbdb.LogicalRouterTable,
				nbdb.LogicalRouterPortTable, nbdb.LogicalSwitchPortTable:
				d.Full = true
			}
		}
	}

	// A port two switches list goes to the first in northd's datapath
	// hash table, whose size follows the number of switches and routers:
	// when that changes the table's mask, every such port may move.
	if v := e.g.v; v.HasDuplicates() {
		n := len(s.Switches) + len(s.Routers)
		for _, st := range steps {
			if st.t.Name == nbdb.LogicalSwitchTable || st.t.Name == nbdb.LogicalRouterTable {
				switch {
				case st.old == nil:
					n++
				case st.new == nil:
					n--
				}
			}
		}
		if nbview.DatapathMaskOf(n) != v.DatapathMask() {
			d.Full = true
		}
	}

	var oldFlags map[string]dpFlags
	deletedPorts := map[string]string{} // LSP UUID -> name
	c := newCollector()
	// Old state: what the rows reached before the batch. A new sample
	// row reaches the ACLs that name it already (dangling until now):
	// the patch needs them before the batch too.
	for _, st := range steps {
		switch {
		case st.old != nil:
			e.affected(c, st.t.Name, st.id, st.old)
		case isSampleTable(st.t.Name):
			e.affected(c, st.t.Name, st.id, st.new)
		}
	}
	if d.Full {
		oldFlags = maps.Clone(e.flags)
	} else {
		oldFlags = map[string]dpFlags{}
	}
	// ACL fast path: when the batch only changes ACLs and which ACLs
	// switches and port groups list, a switch whose flags stay the same
	// gets its flows patched ACL by ACL instead of rebuilt.
	var fast *aclPatch
	if !d.Full {
		rcs := make([]rowChange, len(steps))
		for i, st := range steps {
			rcs[i] = rowChange{table: st.t.Name, id: st.id, old: st.old, new: st.new}
		}
		fast = e.newACLPatch(rcs, c.deps)
	}
	// The ACLs whose share keys may change: changed ones and those whose
	// samples change. Unindexed on the old rows, indexed on the new.
	rekey := maps.Clone(c.deps)
	var changedACLs []string
	appsChanged := false
	for _, st := range steps {
		switch st.t.Name {
		case nbdb.ACLTable:
			rekey[st.id] = struct{}{}
			changedACLs = append(changedACLs, st.id)
		case nbdb.SamplingAppTable:
			appsChanged = true
		}
	}
	for id := range rekey {
		if a, ok := s.ACLs[id]; ok {
			e.share(id, a, false)
		}
	}
	for _, st := range steps {
		if st.old != nil {
			e.refs(st.id, st.old, false)
		}
		if st.new != nil {
			e.refs(st.id, st.new, true)
		}
		st.t.Set(s, st.id, st.new)
		if st.t.Name == nbdb.LogicalSwitchPortTable && st.new == nil {
			deletedPorts[st.id] = st.old.(*nbdb.LogicalSwitchPort).Name
		}
	}
	if e.ids != nil {
		e.ids.update(s, changedACLs)
	}
	if appsChanged && e.g.r.sampling {
		e.g.samplingApps = samplingApps(s)
	}
	for id := range rekey {
		if a, ok := s.ACLs[id]; ok {
			e.share(id, a, true)
		}
	}
	// New state: what they reach now.
	for _, st := range steps {
		if st.new != nil {
			e.affected(c, st.t.Name, st.id, st.new)
		}
	}

	var ids []string
	if d.Full {
		oldDps := e.dps
		e.reset(s)
		for id := range oldDps {
			if _, ok := e.dps[id]; !ok {
				c.Switches[id] = struct{}{}
			}
		}
		// Diff every switch against its previous flows.
		d.Recompiled = len(s.Switches)
		ids = nbschema.SortedKeys(s.Switches)
		for id := range oldDps {
			if _, ok := s.Switches[id]; !ok {
				ids = append(ids, id)
			}
		}
		sort.Strings(ids)
		newDps := e.dps
		for _, id := range ids {
			if dd, ok := diffDatapath(id, oldDps[id], newDps[id]); ok {
				d.Datapaths = append(d.Datapaths, dd)
			}
		}
	} else {
		e.updateIndexes(c)
		ids = make([]string, 0, len(c.Switches))
		for id := range c.Switches {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		oldDps := make(map[string]*dpFlows, len(ids))
		for _, id := range ids {
			oldDps[id] = e.dps[id]
		}
		for _, id := range ids {
			oldFlags[id] = e.flags[id]
		}
		slow := ids
		var patched map[string]DatapathDelta
		if fast != nil {
			slow, patched = e.patchACLs(fast, ids)
		}
		e.recompile(slow)
		d.Recompiled = len(ids)
		d.Patched = len(patched)
		for _, id := range ids {
			if dd, ok := patched[id]; ok {
				// A patch knows what it changed: no need to compare.
				if len(dd.Added) > 0 || len(dd.Removed) > 0 {
					d.Datapaths = append(d.Datapaths, dd)
				}
				continue
			}
			if dd, ok := diffDatapath(id, oldDps[id], e.dps[id]); ok {
				d.Datapaths = append(d.Datapaths, dd)
			}
		}
	}

	for _, id := range ids {
		if oldFlags[id].needCT() && !e.flags[id].needCT() {
			if _, ok := s.Switches[id]; ok {
				d.ConntrackReleased = append(d.ConntrackReleased, ConntrackRelease{Switch: s.Switches[id].Name, Ports: e.SwitchPortNames(id)})
			}
		}
	}
	for _, name := range deletedPorts {
		d.DeletedPorts = append(d.DeletedPorts, name)
	}
	sort.Strings(d.DeletedPorts)
	return d
}

// updateIndexes brings the view and the compiler's per-ACL flow cache up
// to date for what c says the batch touched.
func (e *Engine) updateIndexes(c *collector) {
	for _, name := range e.g.v.Refresh(c.Touched) {
		e.refreshProblems(name)
	}
	for a := range c.ACLs {
		e.g.pgACLFlows.Delete(aclFlowKey{a, false})
		e.g.pgACLFlows.Delete(aclFlowKey{a, true})
	}
}

// refreshProblems recomputes the problems of the switches that have a
// problem about port group name: it appearing or disappearing changes
// what switchProblems says about @name on switches whose flows do not
// change.
func (e *Engine) refreshProblems(name string) {
	for id, probs := range e.probs {
		for _, p := range probs {
			if (p.Kind == KindNoPortGroup || p.Kind == KindPortGroupNotHere) && p.Ref == name {
				if _, ok := e.g.s.Switches[id]; ok {
					e.probs[id] = e.g.switchProblems(e.g.v.Switch(id))
				}
				break
			}
		}
	}
}

// recompile rebuilds the flows of the given switches (deleting those that
// no longer exist), on every core when there are many.
func (e *Engine) recompile(ids []string) {
	s := e.g.s
	type result struct {
		dp    *lflow.Datapath
		probs []Problem
		flags dpFlags
	}
	res := make([]result, len(ids))
	one := func(i int) {
		if _, ok := s.Switches[ids[i]]; !ok {
			return
		}
		dp, probs := e.g.compileSwitch(ids[i])
		dp.Sort()
		if cap(dp.Flows) > len(dp.Flows)+len(dp.Flows)/8 {
			// The builder over-allocates and Sort drops duplicates: keep
			// only what is used, the engine holds these for good.
			dp.Flows = slices.Clone(dp.Flows)
		}
		od := e.g.v.Switch(ids[i])
		res[i] = result{dp, probs, e.g.flagsOf(od)}
	}
	par.For(len(ids), 8, one)
	for i, id := range ids {
		if res[i].dp == nil {
			delete(e.dps, id)
			delete(e.probs, id)
			delete(e.flags, id)
			delete(e.undecided, id)
			continue
		}
		if res[i].flags.contest != "" {
			e.undecided[id] = struct{}{}
		} else {
			delete(e.undecided, id)
		}
		e.dps[id] = newDPFlows(res[i].dp)
		if len(res[i].probs) > 0 {
			e.probs[id] = res[i].probs
		} else {
			delete(e.probs, id)
		}
		e.flags[id] = res[i].flags
	}
}
