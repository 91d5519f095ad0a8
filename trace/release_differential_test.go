package trace_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/trace"
)

// tierFixtures are the fixtures with ACL tiers and pass that the release
// differential test traces through (ANP pass → NP allow/deny, BANP
// fallback, pass at the last tier, stateless in tiers, ...).
var tierFixtures = []string{
	"tiers-anp-np-banp", "tiers-pass-last-tier", "tiers-allow-stateless", "pass-without-tiers",
	"tiers-switch-acls", "tiers-egress-only", "tiers-default-acl-drop", "tiers-reject-log-meter",
	"tiers-label", "tiers-pg-multi-switch",
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
// switch does not know it) and to an outside address, over several
// L4 destinations, as a new connection and one of them established.
func releasePackets(snap *nbschema.Snapshot) []packet {
	var ps []packet
	for _, eps := range endpoints(snap) {
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
				dmac := d.mac
				for _, l4 := range []string{"tcp && tcp.dst == 80", "tcp && tcp.dst == 22", "tcp && tcp.dst == 8080", "tcp && tcp.dst == 443", "tcp && tcp.dst == 23", "udp && udp.dst == 53"} {
					f := between(src.name, d.name, src.mac, dmac, src.ip, d.ip, l4)
					name := src.name + "-" + d.name + "-" + strings.ReplaceAll(strings.Fields(l4)[2]+strings.Fields(l4)[4], ".", "")
					ps = append(ps, packet{name + "-new", f, []string{"new", "new", "new", "new"}})
					if l4 == "tcp && tcp.dst == 80" {
						ps = append(ps, packet{name + "-est", f, []string{"est", "est", "est", "est"}})
					}
				}
			}
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
	for _, r := range []*release.Release{release.OVN2603, release.OVN2503} {
		t.Run(r.Series(), func(t *testing.T) {
			testenv.NeedRelease(t, r)
			sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{Release: r})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(sb.Stop)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
			defer cancel()
			total, fixtures, notTraced := 0, 0, 0
			for _, name := range tierFixtures {
				t.Run(name, func(t *testing.T) {
					snap, err := nbschema.LoadFixtureWith("../testdata/fixtures/"+name+".yaml", nbschema.FixtureOptions{Release: r})
					if err != nil {
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
					for _, p := range releasePackets(live) {
						t.Run(p.name, func(t *testing.T) {
							if diffOnePacket(t, ctx, sb, tr, p) {
								total++
							} else {
								notTraced++
							}
						})
					}
				})
			}
			if total < 60 || fixtures < 10 {
				t.Errorf("differential test too small: %d packets over %d fixtures (want ≥ 60 traced over ≥ 10)", total, fixtures)
			}
			t.Logf("OVN %s: %d packets identical to ovn-trace over %d fixtures; %d not traced", r, total, fixtures, notTraced)
		})
	}
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
	minimal, err := sb.Run(ctx, "ovn-trace", append(append([]string{}, args...), "--minimal", p.flow)...)
	if err != nil {
		t.Fatal(err)
	}
	detailed, err := sb.Run(ctx, "ovn-trace", append(append([]string{}, args...), "--detailed", p.flow)...)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tr.Trace(p.flow, opt)
	if err != nil {
		t.Fatalf("aclc trace: %v", err)
	}
	if res.Verdict == trace.VerdictNotTraced {
		// aclc says it cannot follow the packet (never a verdict
		// it cannot stand by): nothing to compare.
		t.Logf("not traced: %s", res.NotTraced)
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

// TestReleaseNotTraced: on 25.03/26.03 what aclc models only as northd
// 23.03 writes it (routers, load balancers) or not at all (flooding to
// _MC_flood_l2) ends "not traced", never in a verdict.
func TestReleaseNotTraced(t *testing.T) {
	for _, r := range []*release.Release{release.OVN2503, release.OVN2603} {
		for _, c := range []struct{ fixture, flow, want string }{
			{"../testdata/routers/two-switches.yaml", `inport == "p1" && eth.src == 00:00:00:00:00:01 && eth.dst == 00:00:00:00:ff:01 && ip4.src == 10.0.0.1 && ip4.dst == 10.1.0.3 && ip.ttl == 64 && tcp && tcp.dst == 80`, "aclc traces routers of OVN 23.03 only"},
			{"../testdata/fixtures/tiers-apply-after-lb.yaml", between("p1", "", "00:00:00:00:00:01", "00:00:00:00:00:02", "10.0.0.1", "192.168.0.10", "tcp && tcp.dst == 80"), "has load balancers"},
			{"../testdata/fixtures/tiers-egress-only.yaml", between("p1", "", "00:00:00:00:00:01", "ff:ff:ff:ff:ff:ff", "10.0.0.1", "10.0.0.2", "tcp && tcp.dst == 80"), "_MC_flood_l2"},
		} {
			t.Run(r.Series()+"/"+c.want, func(t *testing.T) {
				snap, err := nbschema.LoadFixtureWith(c.fixture, nbschema.FixtureOptions{Release: r})
				if err != nil {
					t.Fatal(err)
				}
				res, err := trace.New(snap, nil).Trace(c.flow, trace.Options{CT: []trace.CTState{trace.DefaultCTState, trace.DefaultCTState, trace.DefaultCTState}})
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
