// Package compile is aclc's pipeline stage: it turns an NB Snapshot into the
// logical flows that the ovn-northd of the snapshot's exact OVN release
// (package release: 23.03.1 and every 24.03, 25.03, 25.09, 26.03 and 26.09
// version aclc verifies) writes for the ACL-related stages of every
// logical switch (pre-ACL, pre-LB, pre-stateful, ACL hints, the ACL eval,
// sample and action stages and their after-LB twins, network functions
// and stateful, in both pipelines, laid out as that release numbers them),
// and for the logical routers of the releases whose router pipeline it
// verifies (router*.go).
//
// The compiler follows northd's own construction (northd.c build_pre_acls,
// build_pre_lb, build_pre_stateful, build_acl_hints, build_acls,
// consider_acl, build_stateful) and is checked flow for flow against the
// real daemon by the golden and differential tests. Like northd, it copies
// ACL matches verbatim; it reports cheap-to-detect problems alongside.
package compile

import (
	"cmp"
	"slices"
	"strings"

	"github.com/aclc/aclc/internal/par"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// Result is the output of one compile.
type Result struct {
	// Flows holds one Datapath per logical switch, sorted as lflow-list
	// prints them.
	Flows *lflow.Listing
	// Problems found in the NB while compiling (dangling references, empty
	// matches). Flows are produced regardless, exactly as northd would.
	Problems []Problem
}

// Compile builds the ACL-stage flows of every logical switch in s as the
// northd of s.Release does (a live NB's detected release, a fixture's):
// CompileWith with that release.
func Compile(s *nbschema.Snapshot) *Result { return CompileWith(s, Options{Release: s.Release}) }

// CompileWith builds the ACL-stage flows of every logical switch in s as
// the northd of opts.Release does.
func CompileWith(s *nbschema.Snapshot, opts Options) *Result {
	opts.Release = opts.releaseOf(s)
	if opts.ACLIDs != nil || !newRules(opts.Release).persist {
		return CompileView(nbview.NewFor(s, opts.Release), opts)
	}
	// The ACL ids read only the ACLs: allocate them while the view is
	// built.
	ids := make(chan map[string]int, 1)
	go func() { ids <- AllocateACLIDs(s) }()
	v := nbview.NewFor(s, opts.Release)
	opts.ACLIDs = <-ids
	return CompileView(v, opts)
}

// CompileView is CompileWith on a view already built.
func CompileView(v *nbview.View, opts Options) *Result {
	s := v.Snapshot()
	g := newGlobal(v)
	g.target(opts)
	g.shared = g.newShared()
	ids := nbschema.SortedKeys(s.Switches)
	dps := make([]*lflow.Datapath, len(ids))
	probs := make([][]Problem, len(ids))

	// The NB-wide checks read only what newGlobal built: run them while
	// the switches compile. Those of the ACLs of a port group present on
	// a switch are made while its flows are (pgShared.info), with the ACL
	// at hand.
	var global []Problem
	var present []*pgShared
	done := make(chan struct{})
	go func() {
		var checked map[*nbdb.ACL]struct{}
		present, checked = g.presentPortGroups(ids)
		global = g.globalProblemsExcept(checked)
		close(done)
	}()

	// Switches are independent: compile them on every core.
	par.For(len(ids), 1, func(i int) { dps[i], probs[i] = g.compileSwitch(ids[i]) })

	// Each datapath's flows are sorted already (compileSwitch with
	// g.shared); put the datapaths in lflow-list order.
	res := &Result{Flows: &lflow.Listing{Datapaths: dps}}
	slices.SortFunc(dps, func(a, b *lflow.Datapath) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.UUID, b.UUID))
	})
	for _, p := range probs {
		res.Problems = append(res.Problems, p...)
	}
	<-done
	res.Problems = append(res.Problems, global...)
	for _, sh := range present {
		res.Problems = append(res.Problems, sh.info(g).problems...)
	}
	res.Problems = sortProblems(res.Problems)
	return res
}

// releaseOf is the release to compile s for: Options.Release, else the
// snapshot's own.
func (o Options) releaseOf(s *nbschema.Snapshot) *release.Release {
	if o.Release != nil {
		return o.Release
	}
	return s.Release
}

// target sets what g compiles for.
func (g *global) target(opts Options) {
	g.r = newRules(opts.releaseOf(g.s))
	g.lacking = opts.Lacking
	g.sb = opts.SB
	if IgnoresChassisFeatures(g.s) {
		g.lacking = ChassisFeatures{}
	}
	if g.r.sampling {
		g.samplingApps = samplingApps(g.s)
		if d := g.samplingApps[nbdb.SamplingAppTypeDrop]; d != 0 {
			g.debugDrop(uint64(d))
		}
	}
	if g.r.persist {
		g.aclIDs = opts.ACLIDs
		if g.aclIDs == nil {
			g.aclIDs = AllocateACLIDs(g.s)
		}
	}
}

// CompileSwitch builds the flows of the one logical switch with NB UUID id,
// for s.Release. It is what the incremental engine calls for each affected
// datapath.
func CompileSwitch(s *nbschema.Snapshot, id string) (*lflow.Datapath, []Problem) {
	return CompileSwitchWith(s, id, Options{})
}

// CompileSwitchWith is CompileSwitch for opts.Release.
func CompileSwitchWith(s *nbschema.Snapshot, id string, opts Options) (*lflow.Datapath, []Problem) {
	g := newGlobal(nbview.NewFor(s, opts.Release))
	g.target(opts)
	dp, probs := g.compileSwitch(id)
	dp.Sort()
	return dp, probs
}
