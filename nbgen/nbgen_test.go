package nbgen_test

import (
	"bytes"
	"fmt"
	"slices"
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

// TestRandomSpan checks ShapeRandomSpan: deterministic for a seed; port
// group "cluster" of every port with the four default-deny ACLs; every
// other port group on 2–8 distinct switches, not all consecutive; address
// sets mixing pod IPs, /24s and outside addresses; matches with {$a, $b},
// $<pg>_ip4 and port ranges.
func TestRandomSpan(t *testing.T) {
	p := small()
	p.Shape = nbgen.ShapeRandomSpan
	fixture := func(p nbgen.Params) []byte {
		var b bytes.Buffer
		if err := nbschema.WriteFixture(&b, nbgen.Generate(p)); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a := fixture(p)
	if !bytes.Equal(a, fixture(p)) {
		t.Fatal("two runs with the same Params differ")
	}
	q := p
	q.Seed++
	if bytes.Equal(a, fixture(q)) {
		t.Fatal("another seed gives the same NB")
	}
	if bytes.Equal(a, fixture(small())) {
		t.Fatal("random-span gives the consecutive NB")
	}

	s := nbgen.Generate(p)
	if len(s.Switches) != p.Switches || len(s.Ports) != p.Switches*p.PortsPerSwitch || len(s.PortGroups) != p.PortGroups ||
		len(s.AddressSets) != p.AddressSets || len(s.ACLs) != p.ACLs {
		t.Fatalf("sizes: %d switches, %d ports, %d port groups, %d address sets, %d ACLs",
			len(s.Switches), len(s.Ports), len(s.PortGroups), len(s.AddressSets), len(s.ACLs))
	}
	switchOf := map[string]int{} // port UUID -> switch number
	for _, ls := range s.Switches {
		var n int
		if _, err := fmt.Sscanf(ls.Name, "sw%d", &n); err != nil {
			t.Fatal(err)
		}
		for _, u := range ls.Ports {
			switchOf[u] = n
		}
	}
	var cluster bool
	nonConsecutive := 0
	for _, pg := range s.PortGroups {
		if pg.Name == nbgen.ClusterPG {
			cluster = true
			if len(pg.Ports) != len(s.Ports) || len(pg.ACLs) != 4 {
				t.Errorf("port group cluster: %d ports of %d, %d ACLs, want every port and 4 default ACLs", len(pg.Ports), len(s.Ports), len(pg.ACLs))
			}
			for _, u := range pg.ACLs {
				if a := s.ACLs[u]; a.Priority < 1000 || a.Priority > 1001 || (a.Action != "drop" && a.Action != "allow") {
					t.Errorf("cluster ACL %+v is not a default-deny one", a)
				}
			}
			continue
		}
		var sws []int
		for _, u := range pg.Ports {
			w, ok := switchOf[u]
			if !ok {
				t.Fatalf("port group %s: port %s is on no switch", pg.Name, u)
			}
			if slices.Contains(sws, w) {
				t.Errorf("port group %s: two ports on switch %d", pg.Name, w)
			}
			sws = append(sws, w)
		}
		if len(sws) < 2 || len(sws) > 8 {
			t.Errorf("port group %s spans %d switches, want 2–8", pg.Name, len(sws))
		}
		slices.Sort(sws)
		if sws[len(sws)-1]-sws[0] != len(sws)-1 {
			nonConsecutive++
		}
	}
	if !cluster {
		t.Error("no port group cluster")
	}
	if nonConsecutive < p.PortGroups/2 {
		t.Errorf("%d of %d port groups span non-consecutive switches, want most", nonConsecutive, p.PortGroups-1)
	}
	kinds := map[string]int{}
	for _, as := range s.AddressSets {
		if len(as.Addresses) != p.AddrsPerSet {
			t.Errorf("address set %s has %d addresses, want %d", as.Name, len(as.Addresses), p.AddrsPerSet)
		}
		for _, a := range as.Addresses {
			switch {
			case strings.HasSuffix(a, "/24"):
				kinds["/24"]++
			case strings.HasPrefix(a, "10."):
				kinds["pod"]++
			default:
				kinds["outside"]++
			}
		}
	}
	if len(kinds) != 3 {
		t.Errorf("address kinds: %v, want pod IPs, /24s and outside addresses", kinds)
	}
	matches := map[string]int{}
	for _, a := range s.ACLs {
		for _, frag := range []string{"== {$as_", "== $as_", "_ip4", "<= udp.dst <=", "tcp.dst >= ", "@pg_", "@cluster"} {
			if strings.Contains(a.Match, frag) {
				matches[frag]++
			}
		}
	}
	if len(matches) != 7 {
		t.Errorf("match fragments seen: %v", matches)
	}
}

// TestClusterRouter: with ClusterRouter every switch has one router port
// to ovn_cluster_router, whose port there holds the switch's /24 (the
// subnet of its VM ports), and the rest of the NB is unchanged.
func TestClusterRouter(t *testing.T) {
	p := small()
	plain := nbgen.Generate(p)
	p.ClusterRouter = true
	s := nbgen.Generate(p)
	if len(s.Routers) != 1 || len(s.ACLs) != len(plain.ACLs) || len(s.Ports) != len(plain.Ports)+p.Switches {
		t.Fatalf("%d routers, %d ACLs (plain %d), %d ports (plain %d)", len(s.Routers), len(s.ACLs), len(plain.ACLs), len(s.Ports), len(plain.Ports))
	}
	lrps := map[string]string{} // name -> network
	for _, id := range s.Routers[nbschema.SortedKeys(s.Routers)[0]].Ports {
		lrps[s.RouterPorts[id].Name] = s.RouterPorts[id].Networks[0]
	}
	for _, id := range nbschema.SortedKeys(s.Switches) {
		ls := s.Switches[id]
		var routerPorts []string
		var vmIP string
		for _, pid := range ls.Ports {
			lsp := s.Ports[pid]
			if lsp.Type == "router" {
				routerPorts = append(routerPorts, lsp.Options["router-port"])
			} else if f := strings.Fields(lsp.Addresses[0]); len(f) > 1 {
				vmIP = f[1]
			}
		}
		if len(routerPorts) != 1 {
			t.Fatalf("switch %s: router ports %v", ls.Name, routerPorts)
		}
		nw, ok := lrps[routerPorts[0]]
		if !ok || routerPorts[0] != "rtos-"+ls.Name {
			t.Fatalf("switch %s: router port %s is not the router's rtos-%s", ls.Name, routerPorts[0], ls.Name)
		}
		if pfx := strings.TrimSuffix(nw, "254/24"); !strings.HasPrefix(vmIP, pfx) {
			t.Errorf("switch %s: VM %s outside its router port's network %s", ls.Name, vmIP, nw)
		}
	}
}
