package trace_test

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/trace"
)

// releaseFixtures are the fixtures the release differential test traces
// every port's packets through (releasePackets): the tier fixtures (ANP
// pass → NP allow/deny, BANP fallback, pass at the last tier, stateless in
// tiers, ...), sampling, persist-established, apply-after-lb, load
// balancers, stateless with LB and network functions. A fixture the
// release cannot express (a feature it lacks) is left out for it.
var releaseFixtures = []string{
	"../testdata/fixtures/tiers-anp-np-banp.yaml", "../testdata/fixtures/tiers-pass-last-tier.yaml",
	"../testdata/fixtures/tiers-allow-stateless.yaml", "../testdata/fixtures/pass-without-tiers.yaml",
	"../testdata/fixtures/tiers-switch-acls.yaml", "../testdata/fixtures/tiers-egress-only.yaml",
	"../testdata/fixtures/tiers-default-acl-drop.yaml", "../testdata/fixtures/tiers-reject-log-meter.yaml",
	"../testdata/fixtures/tiers-label.yaml", "../testdata/fixtures/tiers-pg-multi-switch.yaml",
	"testdata/tiers-sampling.yaml", "testdata/tiers-persist.yaml", "testdata/tiers-after-lb.yaml",
	"testdata/lb-unmodelled.yaml",
	"../testdata/fixtures/sample-new-est.yaml", "../testdata/fixtures/sample-stateless.yaml",
	"../testdata/fixtures/sample-multi-collector.yaml", "../testdata/fixtures/persist-established.yaml",
	"../testdata/fixtures/persist-established-multi.yaml", "../testdata/fixtures/tiers-apply-after-lb.yaml",
	"../testdata/fixtures/apply-after-lb.yaml", "../testdata/fixtures/stateless-with-lb.yaml",
	"../testdata/fixtures/stateless-acl-with-lb-mode.yaml", "../testdata/fixtures/lb-vip.yaml",
	"../testdata/fixtures/lb-group.yaml", "../testdata/fixtures/lb-empty-backends.yaml",
	"../testdata/fixtures/network-function.yaml", "../testdata/fixtures/network-function-health.yaml",
}

// endpoint is a port with the MAC and IPv4 address a packet from or to it
// carries.
type endpoint struct{ name, mac, ip string }

// endpoints lists the ports of each switch of snap, in switch order, with
// their first MAC and IPv4 address or made-up ones for ports without.
func endpoints(snap *nbschema.Snapshot) [][]endpoint {
	var out [][]endpoint
	n := 0
	for _, sid := range nbschema.SortedKeys(snap.Switches) {
		var eps []endpoint
		for _, pid := range snap.Switches[sid].Ports {
			p := snap.Ports[pid]
			if p == nil {
				continue
			}
			n++
			ep := endpoint{name: p.Name, mac: fmt.Sprintf("00:00:00:00:10:%02x", n), ip: fmt.Sprintf("10.0.0.%d", n)}
			if len(p.Addresses) > 0 {
				if f := strings.Fields(p.Addresses[0]); len(f) >= 2 {
					ep.mac, ep.ip = f[0], f[1]
				}
			}
			eps = append(eps, ep)
		}
		out = append(out, eps)
	}
	return out
}

// releasePackets builds the packets traced through snap: from every port
// to every other port of its switch (to its MAC, or broadcast when the
// switch does not know it), to an outside address and to each IPv4 VIP of
// the switch's load balancers, over several L4 destinations, as a new
// connection and one of them established.
func releasePackets(snap *nbschema.Snapshot) []packet {
	var ps []packet
	v := nbview.New(snap)
	for i, eps := range endpoints(snap) {
		sw := snap.Switches[nbschema.SortedKeys(snap.Switches)[i]]
		for _, src := range eps {
			dsts := []endpoint{{name: "ext", mac: "ff:ff:ff:ff:ff:ff", ip: "8.8.8.8"}}
			for _, d := range eps {
				if d.name != src.name {
					dsts = append(dsts, d)
				}
			}
			for _, d := range dsts {
				// a port without addresses has a MAC the switch does not
				// know: ls_in_l2_unknown decides (and the outside one is
				// broadcast, which floods)
				for _, l4 := range []string{"tcp && tcp.dst == 80", "tcp && tcp.dst == 22", "tcp && tcp.dst == 8080", "tcp && tcp.dst == 443", "tcp && tcp.dst == 23", "udp && udp.dst == 53"} {
					f := between(src.name, d.name, src.mac, d.mac, src.ip, d.ip, l4)
					name := src.name + "-" + d.name + "-" + strings.ReplaceAll(strings.Fields(l4)[2]+strings.Fields(l4)[4], ".", "")
					ps = append(ps, packet{name + "-new", f, []string{"new", "new", "new", "new"}})
					if l4 == "tcp && tcp.dst == 80" {
						ps = append(ps, packet{name + "-est", f, []string{"est", "est", "est", "est"}})
					}
				}
			}
			for _, d := range eps {
				if d.name == src.name {
					continue
				}
				// ARP requests for d's address, broadcast and unicast
				// (26.03 answers broadcast ones only)
				for _, dmac := range []string{"ff:ff:ff:ff:ff:ff", d.mac} {
					f := fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && arp.op == 1 && arp.sha == %s && arp.spa == %s && arp.tpa == %s`,
						src.name, src.mac, dmac, src.mac, src.ip, d.ip)
					ps = append(ps, packet{src.name + "-" + d.name + "-arp-" + strings.ReplaceAll(dmac, ":", ""), f, nil})
				}
			}
			ps = append(ps, vipPackets(v, sw, src, eps)...)
		}
	}
	return ps
}

// vipPackets are the packets from src to each IPv4 VIP of the load
// balancers on sw, new and established, addressed to the MAC of another
// port of the switch; --lb-dst picks the first backend when there are
// several (ovn-trace picks one at random).
func vipPackets(v *nbview.View, sw *nbdb.LogicalSwitch, src endpoint, eps []endpoint) []packet {
	lbDsts := lbDst
	mac := "00:00:00:00:ff:fe"
	for _, d := range eps {
		if d.name != src.name {
			mac = d.mac
			break
		}
	}
	var ps []packet
	for _, lb := range v.SwitchLBs(sw, false) {
		proto := nbview.LBProtocol(lb)
		for _, vip := range nbview.VIPs(lb) {
			if !vip.IP.Is4() {
				continue
			}
			l4 := "tcp && tcp.dst == 80"
			if vip.Port != 0 {
				l4 = proto + " && " + proto + ".dst == " + vip.PortString()
			}
			lbDst := ""
			if len(vip.Backends) > 1 {
				lbDst = vip.Backends[0].String()
			}
			f := between(src.name, "", src.mac, mac, src.ip, vip.IP.String(), l4)
			name := src.name + "-vip-" + vip.Key
			if lbDst != "" {
				lbDsts[name+"-new"], lbDsts[name+"-est"] = lbDst, lbDst
			}
			ps = append(ps, packet{name + "-new", f, []string{"new", "new", "new", "new"}},
				packet{name + "-est", f, []string{"est", "est", "est", "est"}})
		}
	}
	return ps
}

// TestDifferentialOVNTraceRelease is TestDifferentialOVNTrace for the
// releases with tiers: the tier fixtures' packets through that release's
// northd + ovn-trace and through aclc trace on the flows aclc compiles
// for the release from the same live NB; the same --minimal output,
// conntrack actions and verdict.
func TestDifferentialOVNTraceRelease(t *testing.T) {
	forEachRelease(t, func(t *testing.T, sb *ovnsandbox.Sandbox, r *release.Release) {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		cases := diffCases()
		for _, fx := range releaseFixtures {
			cases = append(cases, diffCase{fixture: fx})
		}
		identical, fixtures, notTraced, lacking := 0, 0, 0, 0
		for _, c := range cases {
			t.Run(strings.TrimSuffix(filepath.Base(c.fixture), ".yaml"), func(t *testing.T) {
				snap, err := nbschema.LoadFixtureWith(c.fixture, nbschema.FixtureOptions{Release: r})
				if err != nil {
					if loadsOnAnother(c.fixture, r) {
						lacking++
						return // uses a feature the release lacks
					}
					t.Fatal(err)
				}
				loadNB(t, ctx, sb, snap)
				live, err := nbschema.LoadLive(ctx, nbschema.Options{Remotes: sb.NB})
				if err != nil {
					t.Fatal(err)
				}
				if live.Release != r {
					t.Fatalf("live NB detected as OVN %v, want %s", live.Release, r)
				}
				tr := trace.New(live, compile.Compile(live).Flows)
				fixtures++
				packets := c.packets
				if packets == nil {
					packets = releasePackets(live)
				}
				for _, p := range packets {
					t.Run(p.name, func(t *testing.T) {
						if diffOnePacket(t, ctx, sb, tr, p) {
							identical++
						} else {
							notTraced++
						}
					})
				}
			})
		}
		if identical < 60 || fixtures < 15 {
			t.Errorf("differential test too small: %d packets over %d fixtures (want ≥ 60 traced over ≥ 15)", identical, fixtures)
		}
		t.Logf("OVN %s: %d packets over %d fixtures: %d identical to ovn-trace, %d not traced (checked); %d fixtures use what the release lacks",
			r, identical+notTraced, fixtures, identical, notTraced, lacking)
	})
}

// diffOnePacket traces p with ovn-trace (--minimal and --detailed) and
// with tr, and compares the --minimal text, conntrack actions and verdict.
// It reports whether aclc traced the packet (false: "not traced").
func diffOnePacket(t *testing.T, ctx context.Context, sb *ovnsandbox.Sandbox, tr *trace.Tracer, p packet) bool {
	t.Helper()
	args := []string{"--db=" + sb.SB}
	opt := trace.Options{LBDst: lbDst[p.name]}
	if opt.LBDst != "" {
		args = append(args, "--lb-dst", opt.LBDst)
	}
	for _, s := range p.ct {
		args = append(args, "--ct", s)
		st, err := trace.ParseCTState(s)
		if err != nil {
			t.Fatal(err)
		}
		opt.CT = append(opt.CT, st)
	}
	minimal, detailed := ovnTrace(t, ctx, sb, args, p.flow)
	res, err := tr.Trace(p.flow, opt)
	if err != nil {
		t.Fatalf("aclc trace: %v", err)
	}
	if res.Verdict == trace.VerdictNotTraced {
		// aclc says it cannot follow the packet (never a verdict
		// it cannot stand by): nothing to compare.
		checkNotTraced(t, res, detailed)
		return false
	}
	if diff := cmp.Diff(minimalBody(minimal), minimalBody(res.Minimal())); diff != "" {
		t.Errorf("--minimal differs (-ovn-trace +aclc):\n%s", diff)
	}
	if diff := cmp.Diff(ctOpsOfDetailed(detailed), res.CTOps, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("conntrack actions differ (-ovn-trace +aclc):\n%s", diff)
	}
	if got, want := res.Verdict, verdictOfMinimal(minimal); got != want {
		t.Errorf("verdict: aclc %s, ovn-trace %s", got, want)
	}
	if t.Failed() {
		var b strings.Builder
		res.WriteDetailed(&b)
		t.Logf("ovn-trace --detailed:\n%s\naclc trace --detailed:\n%s", detailed, b.String())
	}
	return true
}

// TestReleaseNotTraced: on a version whose router pipeline aclc does not
// verify (26.03.2, 25.09.4) a packet reaching a router, and on 25.03/26.03
// what aclc does not model (load balancers with session affinity or
// selection_fields), ends "not traced", never in a verdict.
func TestReleaseNotTraced(t *testing.T) {
	type notTraced struct{ fixture, flow, want string }
	toRouter := `inport == "p1" && eth.src == 00:00:00:00:00:01 && eth.dst == 00:00:00:00:ff:01 && ip4.src == 10.0.0.1 && ip4.dst == 10.1.0.3 && ip.ttl == 64 && tcp && tcp.dst == 80`
	cases := map[string][]notTraced{}
	for _, v := range []string{"26.03.2", "25.09.4"} {
		cases[v] = append(cases[v], notTraced{"../testdata/routers/two-switches.yaml", toRouter,
			"aclc traces routers of OVN " + compile.RouterReleaseNames() + " only, the NB is OVN " + v + "'s"})
	}
	for _, v := range []string{"25.03.0", "26.03.1"} {
		cases[v] = append(cases[v],
			notTraced{"testdata/lb-unmodelled.yaml", between("a", "", "00:00:00:00:23:01", "00:00:00:00:23:02", "10.23.0.1", "10.23.0.100", "tcp && tcp.dst == 80"), "session affinity"},
			notTraced{"testdata/lb-unmodelled.yaml", between("a", "", "00:00:00:00:23:01", "00:00:00:00:23:02", "10.23.0.1", "10.23.0.101", "tcp && tcp.dst == 80"), "selection_fields"})
	}
	for _, v := range slices.Sorted(maps.Keys(cases)) {
		r := release.MustLookup(v)
		for _, c := range cases[v] {
			t.Run(v+"/"+c.want, func(t *testing.T) {
				snap, err := nbschema.LoadFixtureWith(c.fixture, nbschema.FixtureOptions{Release: r})
				if err != nil {
					t.Fatal(err)
				}
				newCT, _ := trace.ParseCTState("new")
				res, err := trace.New(snap, nil).Trace(c.flow, trace.Options{CT: []trace.CTState{newCT, newCT, newCT}})
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict != trace.VerdictNotTraced || !strings.Contains(res.NotTraced, c.want) {
					t.Errorf("verdict %s (%s), want not traced: ...%s...", res.Verdict, res.NotTraced, c.want)
				}
			})
		}
	}
}
