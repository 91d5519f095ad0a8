package compile_test

import (
	"bytes"
	"testing"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbgen"
)

func benchCompile(b *testing.B, p nbgen.Params) {
	snap := nbgen.Generate(p)
	b.ReportAllocs()
	b.ResetTimer()
	var flows int
	for i := 0; i < b.N; i++ {
		flows = compile.Compile(snap).Flows.NumFlows()
	}
	b.StopTimer()
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(float64(flows), "flows")
	b.ReportMetric(float64(flows)/sec, "flows/s")
	var buf bytes.Buffer
	lflow.WriteText(&buf, compile.Compile(snap).Flows)
	b.ReportMetric(float64(buf.Len())/float64(flows), "text-B/flow")
}

// BenchmarkCompile10k is the core issue's target NB: 10k ACLs, 200
// switches, 500 port groups, 1,000 address sets.
func BenchmarkCompile10k(b *testing.B) { benchCompile(b, nbgen.Default()) }

// BenchmarkCompile50k is the scale target: 50k ACLs, 500 switches, 2,500
// port groups, 5,000 address sets.
func BenchmarkCompile50k(b *testing.B) {
	p := nbgen.Default()
	p.ACLs, p.Switches, p.PortGroups, p.AddressSets = 50000, 500, 2500, 5000
	benchCompile(b, p)
}
