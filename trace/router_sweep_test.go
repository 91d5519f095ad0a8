package trace_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
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

// gatewayMAC returns the MAC of the router port a switch's first router
// port leads to, or "".
func gatewayMAC(snap *nbschema.Snapshot, sw string) string {
	for _, pid := range snap.Switches[sw].Ports {
		p := snap.Ports[pid]
		if p == nil || p.Type != "router" {
			continue
		}
		for _, rp := range snap.RouterPorts {
			if rp.Name == p.Options["router-port"] {
				return rp.MAC
			}
		}
	}
	return ""
}

// TestDifferentialRoutedSweep traces, in every router fixture, a grid of
// packets from every VM to every VM of another switch, through the
// sender's router: tcp, udp and icmp over IPv4 (and tcp over IPv6 where
// both have an IPv6 address) with no conntrack, new states and est,rpl
// states; aclc and ovn-trace must agree on the --minimal text, the
// conntrack actions and the verdict. Where aclc says "not traced",
// ovn-trace must have gone into the router aclc does not compile or asked
// the SB for a MAC binding. It runs on 23.03.1; ACLC_TRACE_SWEEP=full
// runs it on every version whose router pipeline aclc verifies too (about
// a minute each).
func TestDifferentialRoutedSweep(t *testing.T) {
	for _, r := range compile.RouterReleases() {
		if r.Name() != "23.03.1" && os.Getenv("ACLC_TRACE_SWEEP") != "full" {
			continue
		}
		t.Run(r.Name(), func(t *testing.T) { routedSweep(t, releaseSandbox(t, r), r) })
	}
}

func routedSweep(t *testing.T, sb *ovnsandbox.Sandbox, r *release.Release) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	files, _ := filepath.Glob("../testdata/routers/*.yaml")
	total, notTraced := 0, 0
	for _, fx := range files {
		t.Run(strings.TrimSuffix(filepath.Base(fx), ".yaml"), func(t *testing.T) {
			tr, live := releaseTracer(t, ctx, sb, fx, r)
			for _, swA := range nbschema.SortedKeys(live.Switches) {
				gw := gatewayMAC(live, swA)
				if gw == "" {
					continue
				}
				for _, swB := range nbschema.SortedKeys(live.Switches) {
					if swB == swA {
						continue
					}
					for _, a := range realAddrs(live, swA) {
						for _, b := range realAddrs(live, swB) {
							var flows []string
							if a.ip4 != "" && b.ip4 != "" {
								base := fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip4.src == %s && ip4.dst == %s && ip.ttl == 64`, a.name, a.mac, gw, a.ip4, b.ip4)
								flows = append(flows, base+" && tcp && tcp.dst == 80", base+" && udp && udp.dst == 53", base+" && icmp4 && icmp4.type == 8")
							}
							if a.ip6 != "" && b.ip6 != "" {
								flows = append(flows, fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip6.src == %s && ip6.dst == %s && ip.ttl == 64 && tcp && tcp.dst == 443`, a.name, a.mac, gw, a.ip6, b.ip6))
							}
							for _, flow := range flows {
								for _, cts := range [][]string{nil, {"new", "new", "new", "new"}, {"est,rpl", "est,rpl", "est,rpl", "est,rpl"}} {
									total++
									name := fmt.Sprintf("%s>%s/%s/%s", a.name, b.name, flow[strings.LastIndex(flow, "&& ")+3:], strings.Join(cts, "+"))
									t.Run(name, func(t *testing.T) {
										if sweepOne(t, ctx, sb, tr, flow, cts) {
											notTraced++
										}
									})
								}
							}
						}
					}
				}
			}
		})
	}
	if total < 200 {
		t.Errorf("routed sweep too small: %d packets", total)
	}
	t.Logf("OVN %s: %d routed packets (%d not traced by aclc, each checked against ovn-trace's path)", r, total, notTraced)
}

// realAddrs are a switch's VM ports with the addresses the fixture gives
// them (portAddrs makes addresses up for the others).
func realAddrs(snap *nbschema.Snapshot, sw string) []portAddr {
	var out []portAddr
	for _, pid := range snap.Switches[sw].Ports {
		p := snap.Ports[pid]
		if p == nil || p.Type != "" || len(p.Addresses) == 0 {
			continue
		}
		f := strings.Fields(p.Addresses[0])
		a := portAddr{name: p.Name, mac: f[0]}
		for _, x := range f[1:] {
			if ip, err := netip.ParseAddr(x); err == nil && ip.Is4() {
				a.ip4 = x
			} else if err == nil {
				a.ip6 = x
			}
		}
		if a.ip4 != "" || a.ip6 != "" {
			out = append(out, a)
		}
	}
	return out
}

// sweepOne traces one packet with ovn-trace and aclc and compares them;
// it reports whether aclc said "not traced", which it may only for a
// packet ovn-trace takes into a router aclc does not compile (or whose
// next hop it resolves through the SB).
func sweepOne(t *testing.T, ctx context.Context, sb *ovnsandbox.Sandbox, tr *trace.Tracer, flow string, cts []string) bool {
	return sweepOneLB(t, ctx, sb, tr, flow, cts, "")
}

// sweepOneLB is sweepOne with a load balancer destination (--lb-dst IP or
// IP:PORT; "" for none): ovn-trace picks a backend at random without one.
func sweepOneLB(t *testing.T, ctx context.Context, sb *ovnsandbox.Sandbox, tr *trace.Tracer, flow string, cts []string, lbDst string) bool {
	args := []string{"--db=" + sb.SB}
	var opt trace.Options
	if lbDst != "" {
		args = append(args, "--lb-dst="+lbDst)
		opt.LBDst = lbDst
	}
	for _, s := range cts {
		args = append(args, "--ct", s)
		st, _ := trace.ParseCTState(s)
		opt.CT = append(opt.CT, st)
	}
	minimal, detailed, crash := ovnTraceOrCrash(t, ctx, sb, args, flow)
	res, err := tr.Trace(flow, opt)
	if err != nil {
		t.Fatalf("aclc trace: %v", err)
	}
	if crash != "" {
		// nothing to compare with: aclc may only say not traced
		t.Logf("ovn-trace: %s", crash)
		if res.Verdict != trace.VerdictNotTraced {
			t.Errorf("ovn-trace aborts (%s), and aclc answers %s", crash, res.Verdict)
		}
		return true
	}
	if res.Verdict == trace.VerdictNotTraced {
		checkNotTraced(t, res, detailed)
		return true
	}
	compareTraces(t, res, minimal, detailed)
	return false
}

// tableLine matches a table line of ovn-trace's detailed output and
// captures its stage: " 15. ls_in_lb (northd.c:9001): ...".
var tableLine = regexp.MustCompile(`(?m)^\s*\d+\. ([a-z0-9_]+) \(`)

// checkNotTraced requires aclc's "not traced" to be a case where
// ovn-trace's path (its detailed output) goes into what aclc does not
// model: a router aclc does not compile (ovn-trace enters it), a next hop
// without a MAC binding, flooding to _MC_flood_l2 (ovn-trace outputs to
// that group), a load balancer VIP or hairpin aclc does not model (ovn-trace
// matches a flow of the stage aclc stopped at).
func checkNotTraced(t *testing.T, res *trace.Result, detailed string) {
	t.Helper()
	t.Logf("not traced: %s", res.NotTraced)
	stage := ""
	if i := strings.LastIndex(res.NotTraced, " ("); i >= 0 && strings.HasSuffix(res.NotTraced, ")") {
		stage = res.NotTraced[i+2 : len(res.NotTraced)-1]
	}
	entered := func(stage string) bool {
		for _, m := range tableLine.FindAllStringSubmatch(detailed, -1) {
			if m[1] == stage {
				return true
			}
		}
		return false
	}
	why := ""
	switch {
	case strings.Contains(res.NotTraced, "_MC_flood_l2"):
		if !strings.Contains(detailed, `mcgroup="_MC_flood_l2"`) {
			why = "ovn-trace does not flood to _MC_flood_l2"
		}
	case strings.Contains(res.NotTraced, "is of type switch"):
		// "leaf1 port leaf1-spine is of type switch ..."
		if f := strings.Fields(res.NotTraced); len(f) < 3 || !strings.Contains(detailed, fmt.Sprintf("/* output to %q", f[2])) {
			why = "ovn-trace does not output to that port"
		}
	case strings.Contains(res.NotTraced, "OVN's choice among them is undefined"):
		if !entered(stage) {
			why = "ovn-trace matches no flow of " + stage
		}
	case strings.Contains(res.NotTraced, "FDP-1154"), strings.Contains(res.NotTraced, "EVPN remote VTEPs"):
		// northd-undecided: the switch's flows are one of northd's
		// outcomes, so aclc traces no packet through it ("switch sw0:
		// whether ...").
		sw, _, _ := strings.Cut(strings.TrimPrefix(res.NotTraced, "switch "), ":")
		if !strings.Contains(detailed, fmt.Sprintf("ingress(dp=%q", sw)) && !strings.Contains(detailed, fmt.Sprintf("egress(dp=%q", sw)) {
			why = "ovn-trace never enters " + sw
		}
	case strings.Contains(res.NotTraced, "hairpin check"):
		if !entered("ls_in_pre_hairpin") {
			why = "ovn-trace does not check for a hairpin"
		}
	case strings.Contains(res.NotTraced, "hairpinned"):
		if !entered("ls_in_nat_hairpin") && !entered("ls_in_hairpin") {
			why = "ovn-trace does not hairpin the packet"
		}
	case strings.Contains(res.NotTraced, "load balancer") && strings.Contains(res.NotTraced, " VIP "):
		if stage == "" || !entered(stage) {
			why = "ovn-trace matches no flow of " + stage
		}
	case strings.HasPrefix(stage, "ls_"):
		// a switch stage's flows the model does not reproduce
		// (unmodelled.go): ovn-trace took the packet into that stage
		if !entered(stage) {
			why = "ovn-trace never reaches " + stage
		}
	default:
		// "lr0 NAT (lr_in_dnat)", "router lr0: aclc traces routers of ..."
		router, rest, _ := strings.Cut(res.NotTraced, " ")
		if router == "router" {
			router, _, _ = strings.Cut(rest, ":")
		}
		// (ovn-trace prints a router's neutron:router_name when it has
		// one, and shortens a name that ends in a UUID: then it is
		// enough that ovn-trace enters a router)
		if !strings.Contains(detailed, fmt.Sprintf("ingress(dp=%q", router)) && !strings.Contains(detailed, fmt.Sprintf("ingress(dp=%q", trace.ShortenUUID(router))) && !entered("lr_in_admission") {
			why = "ovn-trace never enters " + router
		} else if strings.Contains(res.NotTraced, "MAC_Binding") && !strings.Contains(detailed, "/* No MAC binding. */") {
			why = "ovn-trace found no unresolved next hop"
		}
	}
	if why != "" {
		t.Errorf("aclc: not traced: %s, but %s:\n%s", res.NotTraced, why, detailed)
	}
}

// ovnTrace runs ovn-trace once with --detailed and --minimal: it then
// prints the microflow's line, then each form under a banner line ("#
// Detailed trace.", "# Minimal trace.", ovn-trace.c's trace()); the forms
// are returned as two runs with one option each would print them (one
// process, and one read of the SB, instead of two).
func ovnTrace(t *testing.T, ctx context.Context, sb *ovnsandbox.Sandbox, args []string, flow string) (minimal, detailed string) {
	t.Helper()
	minimal, detailed, crash := ovnTraceOrCrash(t, ctx, sb, args, flow)
	if crash != "" {
		t.Fatal(crash)
	}
	return minimal, detailed
}

// ovnTraceCrashes are the aborts of a release's ovn-trace on a packet it
// should trace, with the upstream commit that fixed each.
var ovnTraceCrashes = []struct{ assertion, why string }{
	{"assertion ovnact->type == OVNACT_PUT_DHCPV6_OPTS failed", "ovn-trace executes put_nd_ra_opts() as put_dhcpv6_opts() and aborts (fixed upstream by ae352404a, in 23.09.6, 24.03.4, 24.09.1 and 25.03.0)"},
}

// ovnTraceOrCrash is ovnTrace, but when ovn-trace aborts with one of
// ovnTraceCrashes it returns why instead of failing the test.
func ovnTraceOrCrash(t *testing.T, ctx context.Context, sb *ovnsandbox.Sandbox, args []string, flow string) (minimal, detailed, crash string) {
	t.Helper()
	out, err := sb.Run(ctx, "ovn-trace", append(append([]string{}, args...), "--detailed", "--minimal", flow)...)
	if err != nil {
		for _, c := range ovnTraceCrashes {
			if strings.Contains(err.Error(), c.assertion) {
				return "", "", c.why
			}
		}
		t.Fatal(err)
	}
	minimal, detailed = splitTraceForms(t, out)
	return minimal, detailed, ""
}

// splitTraceForms splits ovn-trace's output of --detailed --minimal into
// the output of each option alone.
func splitTraceForms(t *testing.T, out string) (minimal, detailed string) {
	t.Helper()
	header, rest, ok1 := strings.Cut(out, "# Detailed trace.\n")
	det, min, ok2 := strings.Cut(rest, "# Minimal trace.\n")
	if !ok1 || !ok2 {
		t.Fatalf("ovn-trace --detailed --minimal: no banner lines in:\n%s", out)
	}
	return header + min, header + det
}

// compareTraces requires aclc's result to give ovn-trace's --minimal text
// (the OVS flow lines aside), conntrack actions and verdict.
func compareTraces(t *testing.T, res *trace.Result, minimal, detailed string) {
	t.Helper()
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
		t.Logf("ovn-trace:\n%s\naclc trace:\n%s", detailed, b.String())
	}
}

// startSandbox starts a real NB + SB + ovn-northd 23.03 for the test.
func startSandbox(t *testing.T) *ovnsandbox.Sandbox {
	t.Helper()
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovn-northd", "ovn-nbctl", "ovn-sbctl", "ovn-trace")
	sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Stop)
	return sb
}

// TestOvnTraceForms: ovnTrace's one run of ovn-trace --detailed --minimal,
// split, is what a run with --minimal and one with --detailed print (on
// the real ovn-trace of 23.03.1, over a Neutron topology's packets).
func TestOvnTraceForms(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sb := startSandbox(t)
	r := release.MustLookup("23.03.1")
	live, _ := liveTopology(t, ctx, sb, "../testdata/topologies/neutron-dvr.yaml", r)
	pkts := topologyPackets(live)
	for i, p := range pkts {
		if i%4 != 0 {
			continue
		}
		args := []string{"--db=" + sb.SB}
		for _, s := range p.ct {
			args = append(args, "--ct", s)
		}
		minimal, detailed := ovnTrace(t, ctx, sb, args, p.flow)
		for opt, got := range map[string]string{"--minimal": minimal, "--detailed": detailed} {
			want, err := sb.Run(ctx, "ovn-trace", append(append([]string{}, args...), opt, p.flow)...)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: ovn-trace %s differs from the split (-alone +split):\n%s", p.name, opt, diff)
			}
		}
	}
}
