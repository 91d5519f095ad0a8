package trace_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/trace"
)

// BenchmarkTrace traces one TCP packet between two ports of a switch of
// the 10k-ACL benchmark NB (flows compiled once, outside the
// loop).
func BenchmarkTrace(b *testing.B) {
	snap := nbgen.Generate(nbgen.Default())
	tr := trace.New(snap, compile.Compile(snap).Flows)
	var macs, names, ips []string
	for _, id := range nbschema.SortedKeys(snap.Switches) {
		macs, names, ips = nil, nil, nil
		for _, pid := range snap.Switches[id].Ports {
			p := snap.Ports[pid]
			if len(p.Addresses) == 0 {
				continue
			}
			f := strings.Fields(p.Addresses[0])
			if len(f) < 2 || strings.Contains(f[1], ":") {
				continue
			}
			macs, names, ips = append(macs, f[0]), append(names, p.Name), append(ips, f[1])
		}
		if len(names) >= 2 {
			break
		}
	}
	if len(names) < 2 {
		b.Skip("no switch with two addressed ports")
	}
	flow := fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip4.src == %s && ip4.dst == %s && tcp && tcp.dst == 80`,
		names[0], macs[0], macs[1], ips[0], ips[1])
	opt := trace.Options{CT: []trace.CTState{trace.CTNew | trace.CTTrk, trace.CTNew | trace.CTTrk}}
	if _, err := tr.Trace(flow, opt); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tr.Trace(flow, opt); err != nil {
			b.Fatal(err)
		}
	}
}
