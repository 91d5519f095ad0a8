package reach

import (
	"os"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
)

// The benchmarks of issue 23's reach targets, each printing its time
// against compiling the same NB in the same run (compile.CompileWith, the
// work of `aclc compile'): reach/compile is the reach work alone (the
// flows given), command/compile what `aclc reach' costs over `aclc
// compile' (it compiles, then reaches).
//
//	go test ./reach -run '^$' -bench 'ReachPairs' -benchtime 1x
//
// ACLCREACH_SHAPE picks the nbgen shape of BenchmarkReachPortGroup50k
// (default cluster); ACLCREACH_N its ACL count (default 50000).

// BenchmarkReachPairs answers the ordered pairs of ports of one switch
// (the first by name) of a cluster-shaped NB of ACLCREACH_N ACLs (default
// 100, what the suite's one-iteration run can afford: about 20 s here;
// the point is ACLCREACH_N=10000), from its first ACLCREACH_FROMS ports (default 1;
// every port: ACLCREACH_FROMS=all).
func BenchmarkReachPairs(b *testing.B) {
	p := nbgen.Default()
	p.Shape = nbgen.ShapeCluster
	n := 100
	if x, err := strconv.Atoi(os.Getenv("ACLCREACH_N")); err == nil {
		n = x
	}
	if n != p.ACLs {
		p.ACLs, p.Switches, p.PortGroups, p.AddressSets = n, max(20, n/100), n/20, n/10
	}
	snap := nbgen.Generate(p)
	benchReach(b, snap, func(e *Engine) ([]string, []string) {
		ports := e.Ports()
		var sws []string
		for sw := range ports {
			sws = append(sws, sw)
		}
		slices.Sort(sws)
		froms := ports[sws[0]]
		k := 1
		if x, err := strconv.Atoi(os.Getenv("ACLCREACH_FROMS")); err == nil {
			k = x
		} else if os.Getenv("ACLCREACH_FROMS") == "all" {
			k = len(froms)
		}
		froms = froms[:min(k, len(froms))]
		return froms, ports[sws[0]]
	})
}

// BenchmarkReachPortGroup answers one port group (the first by name
// but the cluster-wide one) against every other port of a 50k NB: its
// ports' pairs on their own switches are executed, the others have no
// path (nbgen makes no routers).
func BenchmarkReachPortGroup(b *testing.B) {
	p := nbgen.Default()
	p.Shape = nbgen.ShapeCluster
	if s := os.Getenv("ACLCREACH_SHAPE"); s != "" {
		p.Shape = nbgen.Shape(s)
	}
	// The point is ACLCREACH_N=50000; unset, the suite's
	// one-iteration run skips it (even 100 ACLs take minutes here).
	n, err := strconv.Atoi(os.Getenv("ACLCREACH_N"))
	if err != nil {
		b.Skip("set ACLCREACH_N (the issue's point: 50000)")
	}
	p.ACLs, p.Switches, p.PortGroups, p.AddressSets = n, max(20, n/100), n/20, n/10
	snap := nbgen.Generate(p)
	benchReach(b, snap, func(e *Engine) ([]string, []string) {
		var names []string
		for _, pg := range snap.PortGroups {
			if pg.Name != nbgen.ClusterPG && len(pg.Ports) > 0 {
				names = append(names, pg.Name)
			}
		}
		slices.Sort(names)
		froms, err := e.Endpoints("@" + names[0])
		if err != nil {
			b.Fatal(err)
		}
		tos := slices.DeleteFunc(e.DefaultPorts(), func(p string) bool { return slices.Contains(froms, p) })
		return froms, tos
	})
}

// benchReach compiles snap, then answers the pairs endpoints chooses,
// each b.N times, and reports both times, the ratios, and the pairs and
// parts.
func benchReach(b *testing.B, snap *nbschema.Snapshot, endpoints func(*Engine) ([]string, []string)) {
	var compileT, reachT, compileCPU, reachCPU time.Duration
	pairs, executed, parts := 0, 0, 0
	for b.Loop() {
		t0, c0 := time.Now(), cpuTime()
		flows := compile.CompileWith(snap, compile.Options{Release: snap.Release}).Flows
		compileT += time.Since(t0)
		compileCPU += cpuTime() - c0
		t0, c0 = time.Now(), cpuTime()
		e, err := New(snap, flows)
		if err != nil {
			b.Fatal(err)
		}
		froms, tos := endpoints(e)
		pairs, executed, parts = 0, 0, 0
		err = e.Pairs(froms, tos, Options{}, func(o *Outcome) error {
			pairs++
			if o.Result != nil {
				executed++
				parts += len(o.Result.Parts)
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		reachT += time.Since(t0)
		reachCPU += cpuTime() - c0
	}
	n := float64(b.N)
	b.ReportMetric(compileT.Seconds()/n, "compile-s/op")
	b.ReportMetric(reachT.Seconds()/n, "reach-s/op")
	b.ReportMetric(float64(reachT)/float64(compileT), "reach/compile")
	b.ReportMetric(float64(reachT+compileT)/float64(compileT), "command/compile")
	b.ReportMetric(compileCPU.Seconds()/n, "compile-cpu-s/op")
	b.ReportMetric(reachCPU.Seconds()/n, "reach-cpu-s/op")
	b.ReportMetric(float64(reachCPU)/float64(compileCPU), "reach/compile-cpu")
	b.ReportMetric(float64(pairs), "pairs")
	b.ReportMetric(float64(executed), "executed")
	b.ReportMetric(float64(parts), "parts")
}

// cpuTime is the CPU time (user+system) the process has used: with the
// machine shared, CPU time is the steadier measure.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
