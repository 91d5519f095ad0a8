package pset

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbview"
)

// BenchmarkNBMatches converts every distinct ACL match of a generated NB
// (PSET_BENCH_N ACLs, default 50,000, sized by nbgen.Scale) of
// each nbgen shape into sets on the resolver of the NB's first switch by
// name, its ports the domain, and unites them all; one Manager per
// iteration. Matches that do not parse there (a port group with no port
// on the switch) are skipped, as ovn-controller skips them.
func BenchmarkNBMatches(b *testing.B) {
	n := 50000
	if x, err := strconv.Atoi(os.Getenv("PSET_BENCH_N")); err == nil {
		n = x
	}
	for _, shape := range nbgen.Shapes {
		b.Run(string(shape), func(b *testing.B) {
			snap := nbgen.Generate(nbgen.Scale(n, shape))
			var sw string
			for _, ls := range snap.Switches {
				if sw == "" || ls.Name < sw {
					sw = ls.Name
				}
			}
			r, err := nbview.New(snap).Resolver(sw)
			if err != nil {
				b.Fatal(err)
			}
			d := expr.OVN2303()
			seen := map[string]bool{}
			var roots []expr.Node
			skipped := 0
			for _, acl := range snap.ACLs {
				if seen[acl.Match] {
					continue
				}
				seen[acl.Match] = true
				e, err := d.Parse(acl.Match, r)
				if err != nil {
					skipped++
					continue
				}
				roots = append(roots, e.Root)
			}
			var ports []string
			for port := range r.Ports {
				ports = append(ports, port)
			}
			slices.Sort(ports)
			sp, err := NewSpace(d, ports, "")
			if err != nil {
				b.Fatal(err)
			}
			var nodes, unionSize, inexact int
			b.ResetTimer()
			for range b.N {
				m := NewManager(sp)
				c := m.Converter(r)
				sets := make([]Set, 0, len(roots))
				inexact = 0
				for _, root := range roots {
					s, err := c.Convert(root)
					if ne := (*NotExactError)(nil); errors.As(err, &ne) {
						inexact++
						continue
					} else if err != nil {
						b.Fatal(err)
					}
					sets = append(sets, s)
				}
				u := m.OrAll(sets)
				nodes, unionSize = m.NodeCount(), m.Size(u)
			}
			b.ReportMetric(float64(len(roots)), "matches")
			b.ReportMetric(float64(skipped), "unparsed")
			b.ReportMetric(float64(inexact), "not-exact")
			b.ReportMetric(float64(nodes), "nodes")
			b.ReportMetric(float64(unionSize), "union-nodes")
			b.Logf("%s: switch %s, %d ports, %d distinct matches converted, %d not parsed there", shape, sw, len(ports), len(roots), skipped)
		})
	}
}
