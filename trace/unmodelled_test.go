package trace_test

import (
	"strings"
	"testing"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/trace"
)

// TestUnmodelledNotTraced: on every verified release, the packets of a
// Neutron tenant network that OVN's own lookups and responders handle
// and the model does not — a packet from the provider network to a
// distributed floating IP's MAC (looked up where the VM is resident), an
// ND solicitation (the ND responder) — end "not traced" instead of being
// flooded or dropped, while a plain packet between two VMs is still
// traced, and a DHCP discover is answered by OVN's DHCP responder
// (trace/dhcp.go; it was flooded, a wrong answer with exit 0, then not
// traced). TestModelCoversNorthd proves the model against each live
// northd, TestTopologySweep the answers against each live ovn-trace.
func TestUnmodelledNotTraced(t *testing.T) {
	cases := []struct{ name, microflow, why string }{
		{"floating IP", `inport == "provnet-ext" && eth.src == 00:00:00:00:aa:01 && eth.dst == fa:16:3e:00:02:01 && ip4.src == 8.8.8.8 && ip4.dst == 172.24.4.100 && ip.ttl == 64 && tcp && tcp.dst == 22`,
			"floating IP 172.24.4.100's MAC"},
		// (the gateway port's MAC is modelled at L2 — on the
		// resident chassis, as ovn-trace assumes — and reaches the
		// router, whose NAT is not traced)
		{"gateway port MAC", `inport == "provnet-ext" && eth.src == 00:00:00:00:aa:01 && eth.dst == fa:16:3e:00:01:02 && ip4.src == 8.8.8.8 && ip4.dst == 172.24.4.1 && ip.ttl == 64 && icmp4`,
			"neutron-r1"},
		{"nd solicitation", `inport == "vm1" && eth.src == fa:16:3e:00:00:01 && eth.dst == 33:33:ff:00:01:01 && ip6.src == fe80::f816:3eff:fe00:1 && ip6.dst == ff02::1:ff00:101 && nd_ns && nd.target == fe80::f816:3eff:fe00:101 && ip.ttl == 255`,
			"IPv6 neighbor solicitation"},
	}
	for _, r := range release.All() {
		snap, err := nbschema.LoadFixtureWith("../testdata/topologies/neutron-dvr.yaml", nbschema.FixtureOptions{Release: r})
		if err != nil {
			t.Fatalf("OVN %s: %v", r.Name(), err)
		}
		tr := trace.New(snap, nil)
		for _, c := range cases {
			res, err := tr.Trace(c.microflow, trace.Options{})
			if err != nil {
				t.Fatalf("OVN %s %s: %v", r.Name(), c.name, err)
			}
			if res.Verdict != trace.VerdictNotTraced || !strings.Contains(res.NotTraced, c.why) || len(res.Outputs) != 0 {
				t.Errorf("OVN %s %s: verdict %s %q outputs %v, want not traced: %s", r.Name(), c.name, res.Verdict, res.NotTraced, res.Outputs, c.why)
			}
		}
		res, err := tr.Trace(`inport == "vm1" && eth.src == fa:16:3e:00:00:01 && eth.dst == fa:16:3e:00:00:02 && ip4.src == 10.0.0.11 && ip4.dst == 10.0.0.12 && ip.ttl == 64 && tcp && tcp.dst == 22`, trace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != trace.VerdictOutput {
			t.Errorf("OVN %s vm1 -> vm2 ssh: verdict %s (%s), want output", r.Name(), res.Verdict, res.NotTraced)
		}
		res, err = tr.Trace(`inport == "vm1" && eth.src == fa:16:3e:00:00:01 && eth.dst == ff:ff:ff:ff:ff:ff && ip4.src == 0.0.0.0 && ip4.dst == 255.255.255.255 && ip.ttl == 64 && udp.src == 68 && udp.dst == 67`, trace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		// (the reply's whole text is checked against each live
		// ovn-trace by the sweeps: here, that it is one, to vm1, offering
		// vm1's address)
		if want := "put_dhcp_opts(offerip = 10.0.0.11, "; res.Verdict != trace.VerdictOutput ||
			len(res.Outputs) != 1 || res.Outputs[0] != "vm1" || !strings.Contains(res.Minimal(), want) || !strings.Contains(res.Minimal(), "eth.dst = fa:16:3e:00:00:01;") {
			t.Errorf("OVN %s dhcp discover: verdict %s %q outputs %v, want the DHCP responder's reply to vm1 (%s):\n%s", r.Name(), res.Verdict, res.NotTraced, res.Outputs, want, res.Minimal())
		}
	}
}

// TestMicroflowOutportNotForced: an outport in the microflow does not
// choose the output port — ls_in_l2_lkup overwrites it from eth.dst, as
// ovn-trace does (a packet to a MAC no port has, on a switch without
// unknown-address ports, is dropped there); only --outport forces it.
func TestMicroflowOutportNotForced(t *testing.T) {
	snap, err := nbschema.LoadFixtureWith("../testdata/fixtures/seed-stateless.yaml", nbschema.FixtureOptions{Release: release.MustLookup("26.03.1")})
	if err != nil {
		t.Fatal(err)
	}
	tr := trace.New(snap, nil)
	mf := `inport == "lsp1" && outport == "lsp2" && eth.src == 00:00:00:00:00:01 && eth.dst == 00:00:00:00:00:77 && ip4.src == 42.42.42.1 && ip4.dst == 42.42.42.2 && ip.ttl == 64 && tcp && tcp.dst == 80`
	res, err := tr.Trace(mf, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != trace.VerdictDrop || len(res.Outputs) != 0 {
		t.Errorf("microflow outport: verdict %s outputs %v, want drop at the L2 lookup", res.Verdict, res.Outputs)
	}
	res, err = tr.Trace(mf, trace.Options{Outport: "lsp2"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != trace.VerdictOutput {
		t.Errorf("--outport lsp2: verdict %s, want output", res.Verdict)
	}
}

// TestRouterLBsOnSwitch: with install_ls_lb_from_router, a switch's
// ls_in_lb has its routers' load balancers (release.LBFromDatapath), so a
// new connection to such a VIP is load-balanced — the model read them
// from a switch value without its router ports and traced the packet
// past the VIP untouched.
func TestRouterLBsOnSwitch(t *testing.T) {
	for _, name := range []string{"25.03.0"} {
		snap, err := nbschema.LoadFixtureWith("../testdata/fixtures/lb-from-router.yaml", nbschema.FixtureOptions{Release: release.MustLookup(name)})
		if err != nil {
			t.Fatal(err)
		}
		tr := trace.New(snap, nil)
		res, err := tr.Trace(`inport == "p1" && eth.src == 00:00:00:00:00:01 && eth.dst == 00:00:00:00:ff:01 && ip4.src == 10.0.0.1 && ip4.dst == 172.16.0.1 && ip.ttl == 64 && tcp && tcp.dst == 80`,
			trace.Options{CT: []trace.CTState{trace.CTNew | trace.CTTrk}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(res.Minimal(), "ct_lb_mark") {
			t.Errorf("OVN %s: a new connection to the router's VIP 172.16.0.1:80 is not load-balanced on sw0:\n%s", name, res.Minimal())
		}
	}
}

// TestVirtualParentARPNotTraced: the gratuitous ARP of a virtual port's
// IP from one of its virtual parents (keepalived's VIP on a Neutron
// allowed-address pair) meets northd's bind_vport() flow in
// ls_in_arp_rsp and ends "not traced" on every verified release; it was
// answered by the priority-0 `next;' and flooded (TestModelCoversNorthd
// found it on neutron-trunk-vip.yaml). The parent's ARP for another
// address is still traced.
func TestVirtualParentARPNotTraced(t *testing.T) {
	const garp = `inport == "7e000000-0000-4000-8000-000000000012" && eth.src == fa:16:3e:20:00:12 && eth.dst == ff:ff:ff:ff:ff:ff && arp.op == 1 && arp.sha == fa:16:3e:20:00:12 && arp.spa == 10.20.0.100 && arp.tpa == 10.20.0.100`
	const other = `inport == "7e000000-0000-4000-8000-000000000012" && eth.src == fa:16:3e:20:00:12 && eth.dst == ff:ff:ff:ff:ff:ff && arp.op == 1 && arp.sha == fa:16:3e:20:00:12 && arp.spa == 10.20.0.12 && arp.tpa == 10.20.0.13`
	for _, r := range release.All() {
		snap, err := nbschema.LoadFixtureWith("../testdata/topologies/neutron-trunk-vip.yaml", nbschema.FixtureOptions{Release: r})
		if err != nil {
			t.Fatalf("OVN %s: %v", r.Name(), err)
		}
		tr := trace.New(snap, nil)
		res, err := tr.Trace(garp, trace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != trace.VerdictNotTraced || !strings.Contains(res.NotTraced, "bind_vport()") || len(res.Outputs) != 0 {
			t.Errorf("OVN %s: the parent's GARP of the VIP: verdict %s %q outputs %v, want not traced at bind_vport()", r.Name(), res.Verdict, res.NotTraced, res.Outputs)
		}
		if res, err = tr.Trace(other, trace.Options{}); err != nil {
			t.Fatal(err)
		}
		if res.Verdict == trace.VerdictNotTraced && strings.Contains(res.NotTraced, "bind_vport()") {
			t.Errorf("OVN %s: the parent's ARP for a neighbour: not traced at bind_vport(): %s", r.Name(), res.NotTraced)
		}
	}
}
