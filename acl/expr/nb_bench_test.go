package expr_test

import (
	"os"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// BenchmarkParseNB parses every ACL match of the NB lint's
// BenchmarkLintShape generates (ACLCLINT_N ACLs, default 50000; both
// shapes) the way lint's newInfo does: the default release's dialect, the
// NB-wide resolver with a fresh member cache per run. It reports the CPU
// time per run (cpu-s/op) besides ns/op and the allocations.
func BenchmarkParseNB(b *testing.B) {
	for _, shape := range []nbgen.Shape{nbgen.ShapeConsecutive, nbgen.ShapeCluster} {
		b.Run(string(shape), func(b *testing.B) {
			nb := benchNB(b, shape)
			var cpu time.Duration
			for b.Loop() {
				cpu0 := cpuTime()
				res := nb.res
				res.Members = expr.NewMemberCache()
				for _, m := range nb.matches {
					// As newInfo: a match naming a port group without
					// ports anywhere is parsed again without a resolver.
					if _, err := nb.d.Parse(m, &res); err != nil {
						if _, err := nb.d.Parse(m, nil); err != nil {
							b.Fatal(err)
						}
					}
				}
				cpu += cpuTime() - cpu0
			}
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}

type parseNB struct {
	d       *expr.Dialect
	res     expr.MapResolver
	matches []string
}

var parseNBs sync.Map // nbgen.Shape → *parseNB

func benchNB(b *testing.B, shape nbgen.Shape) *parseNB {
	if x, ok := parseNBs.Load(shape); ok {
		return x.(*parseNB)
	}
	n := 50000
	if x, err := strconv.Atoi(os.Getenv("ACLCLINT_N")); err == nil {
		n = x
	}
	p := nbgen.Default()
	p.Shape = shape
	p.ACLs, p.Switches, p.PortGroups, p.AddressSets = n, max(20, n/100), n/20, n/10
	s := nbgen.Generate(p)
	res, err := nbview.New(s).Resolver("")
	if err != nil {
		b.Fatal(err)
	}
	d := compile.Dialect(release.Default())
	nb := &parseNB{d: d, res: res}
	ids := make([]string, 0, len(s.ACLs))
	for id := range s.ACLs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		nb.matches = append(nb.matches, s.ACLs[id].Match)
	}
	parseNBs.Store(shape, nb)
	return nb
}

// cpuTime is the CPU time (user+system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
