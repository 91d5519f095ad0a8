package compile_test

import (
	"runtime"
	"runtime/debug"
	"slices"
	"testing"
	"time"

	"github.com/ovn-kubernetes/libovsdb/model"
	"golang.org/x/sys/unix"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// Params50k is the scale NB: 50k ACLs, 500 switches, 2,500 port
// groups, 5,000 address sets.
func params50k() nbgen.Params {
	p := nbgen.Default()
	p.ACLs, p.Switches, p.PortGroups, p.AddressSets = 50000, 500, 2500, 5000
	return p
}

// benchACLChange measures Engine.Apply for a batch that changes one ACL
// (its priority), as the watcher sees it for one NB commit, rotating over
// ACLs spread across the NB. With nbCfg the batch also bumps
// NB_Global.nb_cfg, as `ovn-nbctl --wait` and CMSs do in the same
// transaction.
func benchACLChange(b *testing.B, p nbgen.Params, onPG, nbCfg bool) {
	benchACLChangeCache(b, p, release.MustLookup("23.03.1"), onPG, nbCfg, false)
}

// thrash evicts the CPU caches, as ovn-northd's multi-second recompute on
// the same cores does between two NB commits in a live deployment, and
// returns the free heap to the OS, as the Go scavenger does in a watcher
// idle for seconds: the next change then pays a page fault for every fresh
// page it allocates (which is how a 40 KB copy per patched switch cost
// more than a millisecond inside the watcher).
var thrashBuf = make([]byte, 64<<20)

func thrash() {
	for i := 0; i < len(thrashBuf); i += 64 {
		thrashBuf[i]++
	}
	debug.FreeOSMemory()
}

func benchACLChangeCache(b *testing.B, p nbgen.Params, rel *release.Release, onPG, nbCfg, cold bool) {
	benchACLChangeOn(b, nbgen.Generate(p), rel, onPG, nbCfg, cold, nil)
}

// benchACLChangeOn is benchACLChangeCache on snap; change, when not nil,
// makes change i of an ACL instead of a priority change.
func benchACLChangeOn(b *testing.B, snap *nbschema.Snapshot, rel *release.Release, onPG, nbCfg, cold bool, change func(a *nbdb.ACL, i int)) {
	snap.Release = rel
	snap.Global = &nbdb.NBGlobal{UUID: nbschema.DerivedUUID(nbdb.NBGlobalTable, ""), Options: map[string]string{}}
	// Many targets, spread over the NB: each change hits other switches,
	// whose flows are not in the CPU caches, as in a live NB.
	var targets []*nbdb.ACL
	owned := map[string]bool{}
	for _, id := range nbschema.SortedKeys(snap.PortGroups) {
		for _, a := range snap.PortGroups[id].ACLs {
			owned[a] = true
		}
	}
	for i, id := range nbschema.SortedKeys(snap.ACLs) {
		if owned[id] == onPG && i%97 == 0 {
			targets = append(targets, snap.ACLs[id])
		}
	}
	e := compile.NewEngine(snap)
	b.ReportAllocs()
	b.ResetTimer()
	var flows int
	lat := make([]time.Duration, 0, b.N)
	cpu := make([]time.Duration, 0, b.N)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i := 0; i < b.N; i++ {
		target := targets[i%len(targets)]
		row := model.Clone(target).(*nbdb.ACL)
		if change != nil {
			change(row, i/len(targets))
		} else {
			row.Priority = target.Priority + 1 + (i/len(targets))%2
		}
		batch := []compile.RowChange{{Table: nbdb.ACLTable, UUID: row.UUID, Row: row}}
		if nbCfg {
			g := model.Clone(snap.Global).(*nbdb.NBGlobal)
			g.NbCfg = i + 1
			batch = append(batch, compile.RowChange{Table: nbdb.NBGlobalTable, UUID: g.UUID, Row: g})
		}
		if cold {
			b.StopTimer()
			thrash()
			b.StartTimer()
		}
		c0 := threadCPU()
		start := time.Now()
		d := e.Apply(batch)
		lat = append(lat, time.Since(start))
		cpu = append(cpu, threadCPU()-c0)
		flows += d.NumAdded() + d.NumRemoved()
	}
	b.ReportMetric(float64(flows)/float64(b.N), "flows-changed/op")
	// On a shared, loaded machine the mean says more about the neighbours
	// than about the engine: report the median and the minimum too.
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds()), "p90-µs")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
	b.ReportMetric(float64(lat[0].Microseconds()), "min-µs")
	slices.Sort(cpu)
	b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds()), "cpu-median-µs")
}

// threadCPU is the CPU time the calling thread has used.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// BenchmarkEngineACLChange50k: one port group ACL changed in the 50k NB.
func BenchmarkEngineACLChange50k(b *testing.B) { benchACLChange(b, params50k(), true, false) }

// BenchmarkEngineACLChangeCold50k: a port group ACL change with the CPU
// caches evicted and the free heap returned to the OS before each one, as
// inside a watcher whose host also runs northd.
func BenchmarkEngineACLChangeCold50k(b *testing.B) {
	benchACLChangeCache(b, params50k(), release.MustLookup("23.03.1"), true, false, true)
}

// BenchmarkEngineACLChangeNbCfg50k: the same with an nb_cfg bump in the
// batch, which must stay on the ACL fast path.
func BenchmarkEngineACLChangeNbCfg50k(b *testing.B) { benchACLChange(b, params50k(), true, true) }

// BenchmarkEngineSwitchACLChange50k: one switch ACL changed in the 50k NB.
func BenchmarkEngineSwitchACLChange50k(b *testing.B) { benchACLChange(b, params50k(), false, false) }

// BenchmarkEngineACLChange50k2603 and BenchmarkEngineACLChange50k2503:
// one port group ACL changed in the 50k NB, compiled for OVN 26.03.1 and
// 25.03.0.
func BenchmarkEngineACLChange50k2603(b *testing.B) {
	benchACLChangeCache(b, params50k(), release.MustLookup("26.03.1"), true, false, false)
}

func BenchmarkEngineACLChange50k2503(b *testing.B) {
	benchACLChangeCache(b, params50k(), release.MustLookup("25.03.0"), true, false, false)
}

// BenchmarkEngineSwitchACLChange50k2603: one switch ACL changed, 26.03.1.
func BenchmarkEngineSwitchACLChange50k2603(b *testing.B) {
	benchACLChangeCache(b, params50k(), release.MustLookup("26.03.1"), false, false, false)
}

// observed makes the 50k NB look like ovn-kubernetes with observability
// on: port group ACLs in tiers 1-3 (admin, network and baseline admin
// policies), and every ACL sampling new connections with a Sample of its
// own, all through one collector (so that every ACL of a switch shares its
// generic sample flows).
func observed() *nbschema.Snapshot {
	s := nbgen.Generate(params50k())
	c := &nbdb.SampleCollector{UUID: nbschema.DerivedUUID(nbdb.SampleCollectorTable, "c"), ID: 1, SetID: 42, Probability: 65535, Name: "c"}
	s.SampleCollectors[c.UUID] = c
	for i, typ := range []string{nbdb.SamplingAppTypeACLNew, nbdb.SamplingAppTypeACLEst} {
		app := &nbdb.SamplingApp{UUID: nbschema.DerivedUUID(nbdb.SamplingAppTable, typ), Type: typ, ID: 2 + i}
		s.SamplingApps[app.UUID] = app
	}
	for _, pg := range s.PortGroups {
		for _, a := range pg.ACLs {
			s.ACLs[a].Tier = 1 + int(a[0])%3
		}
	}
	for i, id := range nbschema.SortedKeys(s.ACLs) {
		smp := &nbdb.Sample{UUID: nbschema.DerivedUUID(nbdb.SampleTable, id), Metadata: i + 1, Collectors: []string{c.UUID}}
		s.Samples[smp.UUID] = smp
		s.ACLs[id].SampleNew = &smp.UUID
	}
	return s
}

// BenchmarkEngineACLChangeObserved50k2603: one port group ACL changed in
// the observed 50k NB, 26.03.1.
func BenchmarkEngineACLChangeObserved50k2603(b *testing.B) {
	benchACLChangeOn(b, observed(), release.MustLookup("26.03.1"), true, false, false, nil)
}

// BenchmarkEngineTierFlip50k2603: one port group ACL of the 50k NB (no
// tiers) moved to tier 1 and back, 26.03.1: each change turns the tier
// loops of its switches on or off, so they are rebuilt, not patched.
func BenchmarkEngineTierFlip50k2603(b *testing.B) {
	benchACLChangeOn(b, nbgen.Generate(params50k()), release.MustLookup("26.03.1"), true, false, false,
		func(a *nbdb.ACL, i int) { a.Tier = 1 - i%2 })
}

// BenchmarkEnginePersist50k2603: one port group ACL of the 50k NB made
// allow-related with options:persist-established and back, 26.03.1: it
// takes (and frees) an ACL id, touching its own flows only.
func BenchmarkEnginePersist50k2603(b *testing.B) {
	benchACLChangeOn(b, nbgen.Generate(params50k()), release.MustLookup("26.03.1"), true, false, false,
		func(a *nbdb.ACL, i int) {
			if i%2 == 0 {
				a.Action = "allow-related"
				a.Options = map[string]string{"persist-established": "true"}
			}
		})
}

// BenchmarkEngineACLChangeCold50k2603 is BenchmarkEngineACLChangeCold50k
// for 26.03.1.
func BenchmarkEngineACLChangeCold50k2603(b *testing.B) {
	benchACLChangeCache(b, params50k(), release.MustLookup("26.03.1"), true, false, true)
}
