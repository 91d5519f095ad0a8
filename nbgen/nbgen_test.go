package nbgen_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
)

func small() nbgen.Params {
	p := nbgen.Default()
	p.Switches, p.PortGroups, p.AddressSets, p.ACLs, p.LoadBalancers = 20, 40, 50, 2000, 3
	return p
}

// TestDeterministic: the same parameters give the same NB, byte for byte
// as a fixture; another seed gives another.
func TestDeterministic(t *testing.T) {
	fixture := func(p nbgen.Params) []byte {
		var b bytes.Buffer
		if err := nbschema.WriteFixture(&b, nbgen.Generate(p)); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, b := fixture(small()), fixture(small())
	if !bytes.Equal(a, b) {
		t.Fatal("two runs with the same Params differ")
	}
	p := small()
	p.Seed++
	if bytes.Equal(a, fixture(p)) {
		t.Fatal("another seed gives the same NB")
	}
}

// TestMix checks the sizes and that the verb and match mix is there.
func TestMix(t *testing.T) {
	p := small()
	s := nbgen.Generate(p)
	if len(s.Switches) != p.Switches || len(s.Ports) != p.Switches*p.PortsPerSwitch || len(s.PortGroups) != p.PortGroups ||
		len(s.AddressSets) != p.AddressSets || len(s.ACLs) != p.ACLs || len(s.LoadBalancers) != p.LoadBalancers {
		t.Fatalf("sizes: %d switches, %d ports, %d port groups, %d address sets, %d ACLs, %d LBs",
			len(s.Switches), len(s.Ports), len(s.PortGroups), len(s.AddressSets), len(s.ACLs), len(s.LoadBalancers))
	}
	actions := map[string]int{}
	var logged, metered, labelled int
	matches := map[string]int{}
	for _, a := range s.ACLs {
		actions[a.Action]++
		if a.Log {
			logged++
		}
		if a.Meter != nil {
			metered++
		}
		if a.Label != 0 {
			labelled++
		}
		for _, frag := range []string{"== $as_", "== {$as_", "_ip4", "<= udp.dst <=", "tcp.dst >= ", "icmp4", "ip6", "@pg_", "inport == \"", "outport == \""} {
			if strings.Contains(a.Match, frag) {
				matches[frag]++
			}
		}
	}
	for _, v := range []string{"allow-stateless", "allow-related", "allow", "drop", "reject"} {
		if actions[v] == 0 {
			t.Errorf("no %s ACL: %v", v, actions)
		}
	}
	if f := float64(actions["allow-stateless"]) / float64(p.ACLs); f < p.StatelessFrac-0.05 || f > p.StatelessFrac+0.05 {
		t.Errorf("allow-stateless fraction %.2f, want about %.2f", f, p.StatelessFrac)
	}
	if logged == 0 || metered == 0 || labelled == 0 {
		t.Errorf("%d logged, %d metered, %d labelled ACLs: want some of each", logged, metered, labelled)
	}
	for frag, n := range matches {
		if n == 0 {
			t.Errorf("no match contains %q", frag)
		}
	}
	if len(matches) != 10 {
		t.Errorf("match fragments seen: %v", matches)
	}
}
