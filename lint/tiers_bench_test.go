package lint

import (
	"hash/fnv"
	"os"
	"testing"

	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// tiered gives the port-group ACLs of a generated NB ovn-kubernetes'
// tiers, by a hash of the UUID: a tenth at tier 1 (AdminNetworkPolicy,
// one in five of them pass), most at tier 2 (NetworkPolicy), a tenth at
// tier 3 (BaselineAdminNetworkPolicy); switch ACLs stay at tier 0.
func tiered(s *nbschema.Snapshot) {
	s.Release = release.MustLookup("26.03.1")
	onPG := map[string]bool{}
	for _, pg := range s.PortGroups {
		for _, id := range pg.ACLs {
			onPG[id] = true
		}
	}
	for id, a := range s.ACLs {
		if !onPG[id] {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(id))
		switch x := h.Sum32() % 50; {
		case x < 1:
			a.Tier, a.Action = 1, nbdb.ACLActionPass
		case x < 5:
			a.Tier = 1
		case x < 45:
			a.Tier = 2
		default:
			a.Tier = 3
		}
	}
}

// BenchmarkLintTiers lints the generated NB of BenchmarkLintShape
// (ACLCLINT_SHAPE, ACLCLINT_N; default consecutive at 10k) with tiers on
// its port-group ACLs (tiered), for 26.03: every stage with tiers is
// analysed per switch (tiers.go).
func BenchmarkLintTiers(b *testing.B) {
	p := nbgen.Default()
	if s := os.Getenv("ACLCLINT_SHAPE"); s != "" {
		p.Shape = nbgen.Shape(s)
		p.ACLs, p.Switches, p.PortGroups, p.AddressSets = 2000, 20, 100, 200
	}
	s := nbgen.Generate(p)
	tiered(s)
	findings := 0
	for b.Loop() {
		r, err := Lint(s)
		if err != nil {
			b.Fatal(err)
		}
		findings = len(r.Findings)
	}
	b.ReportMetric(float64(findings), "findings/op")
}
