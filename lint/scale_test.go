package lint

import (
	"os"
	"strconv"
	"testing"

	"github.com/aclc/aclc/nbgen"
)

// TestLintClusterShape lints an ovn-kubernetes-shaped NB (a cluster-wide
// port group of every port, namespaces over all switches); ACLCLINT_N
// scales it for profiling.
func TestLintClusterShape(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	p := nbgen.Default()
	p.Shape = nbgen.ShapeCluster
	p.ACLs, p.Switches, p.PortGroups, p.AddressSets = 2000, 40, 100, 200
	if n, err := strconv.Atoi(os.Getenv("ACLCLINT_N")); err == nil {
		p.ACLs, p.Switches, p.PortGroups, p.AddressSets = n, n/50, n/20, n/10
	}
	s := nbgen.Generate(p)
	r, err := Lint(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d ACLs on %d switches in %v; %d findings", r.Stats.ACLs, r.Stats.Switches, r.Stats.Elapsed, len(r.Findings))
}
