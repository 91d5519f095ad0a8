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
func benchCompile(b *testing.B, p nbgen.Params) {
	snap := nbgen.Generate(p)
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := cpuTime()
	b.ReportAllocs()
	b.ResetTimer()
	var flows int
	for i := 0; i < b.N; i++ {
		flows = compile.Compile(snap).Flows.NumFlows()
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
	lflow.WriteText(&buf, compile.Compile(snap).Flows)
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
