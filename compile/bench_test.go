package compile_test

import (
	"bytes"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/release"
)

// cpuTime is the process's user + system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchCompile reports, besides ns/op: flows per compile, flows/s, B/flow
// (bytes allocated per flow), cpu-ms/op (user + system CPU time of the
// process, GC included: steadier than wall time on a shared machine) and
// text-B/flow (lflow-list bytes per flow).
func benchCompile(b *testing.B, p nbgen.Params) { benchCompileFor(b, p, nil) }

// benchCompileFor is benchCompile for release r (nil: the snapshot's, 23.03.1).
func benchCompileFor(b *testing.B, p nbgen.Params, r *release.Release) {
	snap := nbgen.Generate(p)
	opts := compile.Options{Release: r}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime()
	b.ReportAllocs()
	b.ResetTimer()
	var flows int
	for i := 0; i < b.N; i++ {
		flows = compile.CompileWith(snap, opts).Flows.NumFlows()
	}
	b.StopTimer()
	cpu := cpuTime() - cpu0
	runtime.ReadMemStats(&m1)
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(flows), "flows")
	b.ReportMetric(float64(flows)/sec, "flows/s")
	b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/float64(b.N)/float64(flows), "B/flow")
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
	var buf bytes.Buffer
	lflow.WriteText(&buf, compile.CompileWith(snap, opts).Flows)
	b.ReportMetric(float64(buf.Len())/float64(flows), "text-B/flow")
}

func sized(n, switches, pgs, ass int) nbgen.Params {
	p := nbgen.Default()
	p.ACLs, p.Switches, p.PortGroups, p.AddressSets = n, switches, pgs, ass
	return p
}

// BenchmarkCompile1k is the small NB of bench/northd-vs-aclc: 1k ACLs, 50
// switches, 100 port groups, 200 address sets.
func BenchmarkCompile1k(b *testing.B) { benchCompile(b, sized(1000, 50, 100, 200)) }

// BenchmarkCompile10k is the core issue's target NB: 10k ACLs, 200
// switches, 500 port groups, 1,000 address sets.
func BenchmarkCompile10k(b *testing.B) { benchCompile(b, nbgen.Default()) }

// BenchmarkCompile50k is the scale target: 50k ACLs, 500 switches, 2,500
// port groups, 5,000 address sets.
func BenchmarkCompile50k(b *testing.B) { benchCompile(b, sized(50000, 500, 2500, 5000)) }

// BenchmarkCompile2603_10k and _50k are the 10k and 50k NBs compiled for
// 26.03.1 (tiers, verdict bits, action stages, sampling), the issue's
// speed target; _Cluster50k is the 50k NB in nbgen's ovn-kubernetes
// shape (one port group on every switch).
func BenchmarkCompile2603_10k(b *testing.B) {
	benchCompileFor(b, nbgen.Default(), release.MustLookup("26.03.1"))
}

func BenchmarkCompile2603_50k(b *testing.B) {
	benchCompileFor(b, sized(50000, 500, 2500, 5000), release.MustLookup("26.03.1"))
}

func BenchmarkCompile2603_Cluster50k(b *testing.B) {
	p := sized(50000, 500, 2500, 5000)
	p.Shape = nbgen.ShapeCluster
	benchCompileFor(b, p, release.MustLookup("26.03.1"))
}

// BenchmarkCompileStep2603_50k is the compile step as bench/northd-vs-aclc
// times it: a collection before each compile (not timed), so that, as
// there, the compile itself runs with the snapshot's heap and no garbage
// of earlier compiles. cpu-ms/op counts the compiles only.
func BenchmarkCompileStep2603_50k(b *testing.B) {
	snap := nbgen.Generate(sized(50000, 500, 2500, 5000))
	opts := compile.Options{Release: release.MustLookup("26.03.1")}
	var cpu time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		runtime.GC()
		b.StartTimer()
		c := cpuTime()
		compile.CompileWith(snap, opts)
		cpu += cpuTime() - c
	}
	b.ReportMetric(float64(cpu.Microseconds())/1e3/float64(b.N), "cpu-ms/op")
}

// BenchmarkWriteText10k is lflow.WriteText of the 10k NB's flows into a
// bytes.Buffer, as `aclc compile` writes them (MB/s of lflow-list text).
func BenchmarkWriteText10k(b *testing.B) {
	flows := compile.Compile(nbgen.Generate(nbgen.Default())).Flows
	var buf bytes.Buffer
	lflow.WriteText(&buf, flows)
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var out bytes.Buffer
		lflow.WriteText(&out, flows)
	}
}

// BenchmarkValidate2603_50k is ValidateMatchesFor (what `aclc compile`
// runs after the compile) on the 50k NB's 26.03 flows.
func BenchmarkValidate2603_50k(b *testing.B) {
	snap := nbgen.Generate(sized(50000, 500, 2500, 5000))
	flows := compile.CompileWith(snap, compile.Options{Release: release.MustLookup("26.03.1")}).Flows
	cpu0 := cpuTime()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		compile.ValidateMatchesFor(snap, flows, release.MustLookup("26.03.1"))
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
}
