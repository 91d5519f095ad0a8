package lint

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// oracleCase is one claim of lint about a fixture, checked with the
// release's real ovn-northd and ovn-trace: lint reports (or, with
// !reported, does not report) finding rule about acl, and a packet shows
// what the finding says (or its absence means) on switch sw.
type oracleCase struct {
	fixture  string
	releases []*release.Release // nil: every release with tiers
	rule     string
	acl      string // the finding's first ACL
	reported bool

	sw     string   // the switch the packet enters
	flow   string   // ovn-trace microflow
	ct     []string // --ct states
	stage  string   // the eval stage whose decision is checked: ls_in_acl, ls_out_acl, ls_in_acl_after_lb
	decide string   // the ACL that decides there, "default" (the action stage's priority 0) or "" (not checked)
	// untracked: the deciding flow is the one for packets without
	// conntrack (reg0[8]), and nothing was sent to conntrack before the
	// stage in its pipeline.
	untracked bool
	dropped   bool           // the packet is not output (--minimal has no output)
	line      *regexp.Regexp // a line the trace must have
	noLine    *regexp.Regexp // a line it must not have
}

func between(src, dst, l4 string, n1, n2 int, net string) string {
	return fmt.Sprintf(`inport == %q && eth.src == 00:00:00:00:00:%02x && eth.dst == 00:00:00:00:00:%02x && ip4.src == %s.%d && ip4.dst == %s.%d && ip.ttl == 64 && %s`,
		src, n1, n2, net, n1&0xf, net, n2&0xf, l4)
}

var (
	p1p2 = func(l4 string) string { return between("p1", "p2", l4, 1, 2, "10.0.0") }
	p2p1 = func(l4 string) string { return between("p2", "p1", l4, 2, 1, "10.0.0") }
	q1q2 = func(l4 string) string { return between("q1", "q2", l4, 0x11, 0x12, "10.0.1") }
	q2q1 = func(l4 string) string { return between("q2", "q1", l4, 0x12, 0x11, "10.0.1") }
)

// toVIP is a packet from a client port to the fixtures' VIP 66.66.66.66:80.
func toVIP(port string, n int) string {
	return fmt.Sprintf(`inport == %q && eth.src == 00:00:00:00:00:%02x && eth.dst == 00:00:00:00:00:%02x && ip4.src == 10.0.%d.%d && ip4.dst == 66.66.66.66 && ip.ttl == 64 && tcp && tcp.dst == 80`,
		port, n, n+1, n>>4, n&0xf)
}

var oracleCases = []oracleCase{
	// Shadowing across tiers: tier 1 decides first, whatever the priority.
	{fixture: "tiers-shadowed.yaml", rule: RuleShadowed, acl: "np-allow-ssh", reported: true,
		sw: "sw0", flow: p1p2("tcp && tcp.dst == 22"), ct: []string{"new", "new"}, stage: "ls_out_acl", decide: "anp-deny-ssh", dropped: true},
	{fixture: "tiers-shadowed.yaml", rule: RuleShadowed, acl: "np-drop-telnet", reported: true,
		sw: "sw0", flow: p1p2("tcp && tcp.dst == 23"), ct: []string{"new", "new"}, stage: "ls_out_acl", decide: "anp-drop-low", dropped: true},
	// The pass above the tier-1 drop hands port 80 to tier 2.
	{fixture: "tiers-shadowed.yaml", rule: RuleShadowed, acl: "np-allow-web",
		sw: "sw0", flow: p1p2("tcp && tcp.dst == 80"), ct: []string{"new", "new"}, stage: "ls_out_acl", decide: "np-allow-web"},
	// One priority, two tiers: tier 1 decides, no conflict.
	{fixture: "tiers-shadowed.yaml", rule: RuleSamePriority, acl: "anp-dns",
		sw: "sw0", flow: p1p2("udp && udp.dst == 53"), ct: []string{"new", "new"}, stage: "ls_out_acl", decide: "anp-dns"},
	// A pass no later tier picks up meets the default; one that is picked up does not.
	{fixture: "pass-to-default.yaml", rule: RuleUnpickedPass, acl: "anp-pass-udp", reported: true,
		sw: "sw0", flow: p1p2("udp && udp.dst == 53"), ct: []string{"new", "new"}, stage: "ls_out_acl", decide: "default"},
	{fixture: "pass-to-default.yaml", rule: RuleUnpickedPass, acl: "anp-pass-tcp",
		sw: "sw0", flow: p1p2("tcp && tcp.dst == 80"), ct: []string{"new", "new"}, stage: "ls_out_acl", decide: "np-allow-tcp"},
	{fixture: "pass-to-default.yaml", rule: RuleUnpickedPass, acl: "banp-pass", reported: true,
		sw: "sw1", flow: q1q2("tcp && tcp.dst == 80"), ct: []string{"new", "new"}, stage: "ls_out_acl", decide: "default"},
	{fixture: "pass-to-default-drop.yaml", rule: RuleUnpickedPass, acl: "anp-pass-dns", reported: true,
		sw: "sw0", flow: p1p2("udp && udp.dst == 53"), ct: []string{"new", "new"}, stage: "ls_out_acl", decide: "default", dropped: true},
	{fixture: "pass-to-default-drop.yaml", rule: RuleUnpickedPass, acl: "anp-pass-dns", reported: true,
		sw: "sw0", flow: p1p2("tcp && tcp.dst == 80"), ct: []string{"new", "new"}, stage: "ls_out_acl", decide: "np-allow-tcp"},
	// Without tiers the mark ignores priorities: every release, 23.03 too.
	{fixture: "stateless-mark-priority.yaml", releases: release.All(), rule: RuleStatelessMark, acl: "fast-tcp", reported: true,
		sw: "sw0", flow: p1p2("tcp && tcp.dst == 80"), ct: []string{"new", "new"}, stage: "ls_in_acl", decide: "allow-web", untracked: true,
		noLine: regexp.MustCompile(`ls_in_stateful \(.*reg0\[1\] == 1`)},
	{fixture: "stateless-mark-priority.yaml", releases: release.All(), rule: RuleStatelessMark, acl: "fast-tcp-4", reported: true,
		sw: "sw4", flow: between("t1", "t2", "tcp && tcp.dst == 80", 0x41, 0x42, "10.0.4"), ct: []string{"new", "new"}, stage: "ls_in_acl_after_lb", decide: "after-lb-web", untracked: true,
		noLine: regexp.MustCompile(`ls_in_stateful \(.*reg0\[1\] == 1`)},
	// The tier-2 stateless mark takes tier 1's traffic out of conntrack.
	{fixture: "stateless-mark-ignores-tiers.yaml", rule: RuleStatelessMark, acl: "np-fast-tcp", reported: true,
		sw: "sw0", flow: p1p2("tcp && tcp.dst == 80"), ct: []string{"new", "new"}, stage: "ls_in_acl", decide: "anp-allow-web", untracked: true,
		noLine: regexp.MustCompile(`ls_in_stateful \(.*reg0\[1\] == 1`)},
	{fixture: "stateless-mark-ignores-tiers.yaml", rule: RuleStatelessMark, acl: "np-fast-tcp", reported: true,
		sw: "sw0", flow: p1p2("tcp && tcp.dst == 22"), ct: []string{"new", "new"}, stage: "ls_in_acl", decide: "anp-drop-ssh", untracked: true, dropped: true},
	// to-lport: in the LB stateless mode (26.03) tracked in egress but
	// never committed; without it, on one chassis, the ingress state
	// carries over and the egress commits (hence only info).
	{fixture: "stateless-mark-ignores-tiers.yaml", releases: []*release.Release{release.MustLookup("26.03.1")}, rule: RuleStatelessMark, acl: "np-fast-tcp-2", reported: true,
		sw: "sw2", flow: between("r1", "r2", "tcp && tcp.dst == 80", 0x21, 0x22, "10.0.2"), ct: []string{"new", "new"}, stage: "ls_out_acl", decide: "anp-allow-web-2",
		line: regexp.MustCompile(`ls_out_stateful \(.*reg0\[16\] == 1 && ct.new, priority 110`), noLine: regexp.MustCompile(`ls_out_stateful \(.*reg0\[1\] == 1`)},
	{fixture: "stateless-mark-ignores-tiers.yaml", rule: RuleStatelessMark, acl: "np-fast-tcp-3", reported: true,
		sw: "sw3", flow: between("s1", "s2", "tcp && tcp.dst == 80", 0x31, 0x32, "10.0.3"), ct: []string{"new", "new"}, stage: "ls_out_acl", decide: "anp-allow-web-3",
		line: regexp.MustCompile(`ls_out_stateful \(.*reg0\[1\] == 1`), noLine: regexp.MustCompile(`ls_out_pre_stateful`)},
	{fixture: "stateless-mark-ignores-tiers.yaml", rule: RuleShadowed, acl: "np-allow-web", reported: true,
		sw: "sw1", flow: q1q2("tcp && tcp.dst == 80"), ct: []string{"new", "new"}, stage: "ls_in_acl", decide: "anp-fast-tcp"},
	// Replies of stateless traffic: a pass above the drop saves them (for
	// the default), a drop above the pass drops them.
	{fixture: "tiers-stateless-no-reply.yaml", rule: RuleStatelessNoReply, acl: "web-out",
		sw: "sw0", flow: p2p1("tcp && tcp.src == 80 && tcp.dst == 40000"), ct: []string{"est,rpl,trk", "new,trk"}, stage: "ls_out_acl", decide: "default"},
	{fixture: "tiers-stateless-no-reply.yaml", rule: RuleStatelessNoReply, acl: "web-out-1", reported: true,
		sw: "sw1", flow: q2q1("tcp && tcp.src == 80 && tcp.dst == 40000"), ct: []string{"est,rpl,trk", "new,trk"}, stage: "ls_out_acl", decide: "deny-in-1", dropped: true},
	{fixture: "tiers-stateless-no-reply.yaml", rule: RuleStatelessNoReply, acl: "web-out-pg", // reported on sw3 only
		sw: "sw2", flow: between("r2", "r1", "tcp && tcp.src == 80 && tcp.dst == 40000", 0x22, 0x21, "10.0.2"), ct: []string{"est,rpl,trk", "new,trk"}, stage: "ls_out_acl", decide: "default"},
	{fixture: "tiers-stateless-no-reply.yaml", rule: RuleStatelessNoReply, acl: "web-out-pg", reported: true,
		sw: "sw3", flow: between("s2", "s1", "tcp && tcp.src == 80 && tcp.dst == 40000", 0x32, 0x31, "10.0.3"), ct: []string{"est,rpl,trk", "new,trk"}, stage: "ls_out_acl", decide: "deny-in-pg", dropped: true},
	// enable-stateless-acl-with-lb (25.09+): the VIP is load balanced in
	// ingress (ls_in_pre_stateful, priority 150) on sw-mode only.
	{fixture: "stateless-lb-vip-mode.yaml", releases: []*release.Release{release.MustLookup("26.03.1")}, rule: RuleStatelessLBVIP, acl: "fast-tcp",
		sw: "sw-mode", flow: toVIP("client1", 1),
		line: regexp.MustCompile(`ls_in_pre_stateful .*priority 150`)},
	{fixture: "stateless-lb-vip-mode.yaml", releases: []*release.Release{release.MustLookup("25.03.0")}, rule: RuleStatelessLBVIP, acl: "fast-tcp", reported: true,
		sw: "sw-mode", flow: toVIP("client1", 1),
		noLine: regexp.MustCompile(`ls_in_pre_stateful .*priority 1[25]0`)},
	{fixture: "stateless-lb-vip-mode.yaml", rule: RuleStatelessLBVIP, acl: "fast-tcp-2", reported: true,
		sw: "sw-plain", flow: toVIP("client2", 0x11),
		noLine: regexp.MustCompile(`ls_in_pre_stateful .*priority 1[25]0`)},
	// From 23.06 the reject flow's match is parenthesized: reject-telnet
	// rejects (23.03 discards its flows: reject-or-discarded).
	{fixture: "reject-or-discarded.yaml", rule: RuleRejectOr, acl: "reject-telnet",
		sw: "sw0", flow: between("p1", "p1", "tcp && tcp.dst == 23", 1, 2, "10.0.0"), ct: []string{"new"}, stage: "ls_in_acl", decide: "reject-telnet",
		line: regexp.MustCompile(`^ *reject \{`)},
	// 23.03: ovn-controller (and ovn-trace) cannot parse the reject
	// flows, so allow-ip4 decides the telnet packet.
	{fixture: "reject-or-discarded.yaml", releases: []*release.Release{release.MustLookup("23.03.1")}, rule: RuleRejectOr, acl: "reject-telnet", reported: true,
		sw: "sw0", flow: between("p1", "p1", "tcp && tcp.dst == 23", 1, 2, "10.0.0"), ct: []string{"new"}, stage: "ls_in_acl", decide: "allow-ip4"},
	// default_acl_drop=true still drops in the after-LB action stage.
	// FDP-1154 (24.03): northd ignores sw0's tiers, so the tier-1 drop at
	// priority 1000 decides TCP; with the fix tier 0's allow does.
	{fixture: "tiers-ignored.yaml", releases: fdp1154, rule: RuleTiersIgnored, acl: "anp-allow", reported: true,
		sw: "sw0", flow: p1p2("tcp && tcp.dst == 80"), ct: []string{"new", "new"}, stage: "ls_in_acl", decide: "np-drop-tcp", dropped: true},
	{fixture: "tiers-ignored.yaml", releases: fdp1154, rule: RuleShadowed, acl: "np-drop-tcp",
		sw: "sw0", flow: p1p2("tcp && tcp.dst == 80"), ct: []string{"new", "new"}, stage: "ls_in_acl", decide: "np-drop-tcp", dropped: true},
	{fixture: "tiers-ignored.yaml", releases: fdp1154Fixed, rule: RuleShadowed, acl: "np-drop-tcp", reported: true,
		sw: "sw0", flow: p1p2("tcp && tcp.dst == 80"), ct: []string{"new", "new"}, stage: "ls_in_acl", decide: "anp-allow"},
	{fixture: "default-drop-after-lb.yaml", releases: release.All(), rule: RuleDefaultDropAfterLB, acl: "allow-tcp", reported: true,
		sw: "sw-broken", flow: between("p1", "p1", "tcp && tcp.dst == 80", 1, 2, "10.0.0"), ct: []string{"new"}, stage: "ls_in_acl_after_lb", decide: "default", dropped: true},
}

// fdp1154 are the releases with tiers whose northd has FDP-1154 (24.03),
// fdp1154Fixed those with the fix.
var fdp1154, fdp1154Fixed = func() (bug, fixed []*release.Release) {
	for _, r := range release.All() {
		switch {
		case !r.Has(release.ACLTier):
		case r.Has(release.ACLFlagsFullScan):
			fixed = append(fixed, r)
		default:
			bug = append(bug, r)
		}
	}
	return bug, fixed
}()

// TestLintOracle checks lint's tier-aware and release-dependent claims
// with each release's own northd and ovn-trace: for every case, lint
// reports the finding (or not) and the packet goes as the finding says.
func TestLintOracle(t *testing.T) {
	for _, r := range testenv.LiveReleases(t) {
		t.Run(r.Name(), func(t *testing.T) {
			testenv.NeedRelease(t, r)
			sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{Release: r})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(sb.Stop)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			byFixture := map[string][]oracleCase{}
			var order []string
			for _, c := range oracleCases {
				if c.releases == nil && !r.Has(release.ACLTier) || c.releases != nil && !slices.Contains(c.releases, r) {
					continue
				}
				if byFixture[c.fixture] == nil {
					order = append(order, c.fixture)
				}
				byFixture[c.fixture] = append(byFixture[c.fixture], c)
			}
			checked := 0
			for _, fx := range order {
				t.Run(fx, func(t *testing.T) {
					snap, err := nbschema.LoadFixtureWith(filepath.Join("testdata", fx), nbschema.FixtureOptions{Release: r})
					if err != nil {
						t.Fatal(err)
					}
					// sb.Load leaves NB_Global alone when the fixture has
					// none: clear the options an earlier fixture set
					// (default_acl_drop).
					if snap.Global == nil {
						prev, err := nbschema.LoadLive(ctx, nbschema.Options{Remotes: sb.NB})
						if err != nil {
							t.Fatal(err)
						}
						if prev.Global != nil {
							snap.Global = &nbdb.NBGlobal{UUID: prev.Global.UUID}
						}
					}
					if err := sb.Load(ctx, snap); err != nil {
						t.Fatal(err)
					}
					// Lint reads the NB northd reads, detected as its release.
					live, err := nbschema.LoadLive(ctx, nbschema.Options{Remotes: sb.NB})
					if err != nil {
						t.Fatal(err)
					}
					if live.Release != r {
						t.Fatalf("live NB detected as OVN %v, want %s", live.Release, r)
					}
					rep, err := Lint(live)
					if err != nil {
						t.Fatal(err)
					}
					for i, c := range byFixture[fx] {
						t.Run(strconv.Itoa(i)+"-"+c.acl, func(t *testing.T) {
							if got := reports(rep, c.rule, c.acl, c.sw); got != c.reported {
								t.Errorf("lint reports %s about %s on %s: %v, want %v", c.rule, c.acl, c.sw, got, c.reported)
							}
							checkTrace(t, ctx, sb, snap, c)
							checked++
						})
					}
				})
			}
			want := 15
			if r == release.MustLookup("23.03.1") { // no tiers: only the claims for every release
				want = 3
			}
			if checked < want {
				t.Errorf("only %d claims checked", checked)
			}
		})
	}
}

// reports reports whether lint reports rule about acl on switch sw.
func reports(rep *Report, rule, acl, sw string) bool {
	for _, f := range rep.Findings {
		if f.Rule == rule && f.ACLs[0].Name == acl && (len(f.Switches) == 0 || slices.Contains(f.Switches, sw)) {
			return true
		}
	}
	return false
}

// traceLine is a logical flow ovn-trace shows a packet hit.
var traceLine = regexp.MustCompile(`^ *\d+\. (ls_(?:in|out)_[a-z_]+) \([^)]*\): (.*), priority (\d+), uuid [0-9a-f]+$`)

func checkTrace(t *testing.T, ctx context.Context, sb *ovnsandbox.Sandbox, snap *nbschema.Snapshot, c oracleCase) {
	t.Helper()
	args := []string{"--db=" + sb.SB}
	for _, s := range c.ct {
		args = append(args, "--ct", s)
	}
	out, err := sb.Run(ctx, "ovn-trace", append(append([]string{}, args...), c.sw, c.flow)...)
	if err != nil {
		t.Fatalf("ovn-trace: %v\n%s", err, out)
	}
	defer func() {
		if t.Failed() {
			t.Logf("ovn-trace %s %q:\n%s", strings.Join(args[1:], " "), c.flow, out)
		}
	}()
	lines := strings.Split(out, "\n")
	if c.line != nil && !slices.ContainsFunc(lines, c.line.MatchString) {
		t.Errorf("the trace has no line matching %s", c.line)
	}
	if c.noLine != nil && slices.ContainsFunc(lines, c.noLine.MatchString) {
		t.Errorf("the trace has a line matching %s", c.noLine)
	}
	if c.dropped {
		min, err := sb.Run(ctx, "ovn-trace", append(append(append([]string{}, args...), "--minimal"), c.sw, c.flow)...)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(min, "output(") {
			t.Errorf("the packet is output, want it dropped:\n%s", min)
		}
	}
	if c.stage == "" {
		return
	}
	decided, flow, ctBefore := "", "", false
	last, lastFlow := "", ""
	inPipeline := strings.HasPrefix(c.stage, "ls_in")
	for _, ln := range lines {
		if strings.HasPrefix(ln, "egress(") {
			inPipeline = !inPipeline && decided == ""
		}
		if inPipeline && decided == "" && (strings.Contains(ln, "ct_next(") || strings.Contains(ln, "ct_lb_mark")) {
			ctBefore = true
		}
		m := traceLine.FindStringSubmatch(ln)
		if m == nil || decided != "" {
			continue
		}
		prio, _ := strconv.Atoi(m[3])
		switch m[1] {
		case c.stage: // 23.03: one ACL stage decides
			if d := aclOfFlow(snap, c.sw, c.stage, m[2], prio); d != "" {
				decided, flow = d, m[2]
			} else if prio == 0 {
				decided = "default"
			}
		case c.stage + "_eval":
			last, lastFlow = aclOfFlow(snap, c.sw, c.stage, m[2], prio), m[2]
		case c.stage + "_action":
			switch prio {
			case 1000:
				decided, flow = last, lastFlow
			case 0:
				decided = "default"
			}
		}
	}
	if decided != c.decide {
		t.Errorf("%s decided by %q, want %q", c.stage, decided, c.decide)
	}
	if c.untracked {
		// !ct.trk: the hint stage sets reg0[8] (allow) and reg0[9] (drop),
		// never reg0[7] (allow new) or reg0[10] (block established).
		if strings.Contains(flow, "reg0[7] == 1") || strings.Contains(flow, "reg0[10] == 1") || !strings.Contains(flow, "reg0[8] == 1") && !strings.Contains(flow, "reg0[9] == 1") {
			t.Errorf("deciding flow %q is not one for untracked packets (reg0[8], reg0[9])", flow)
		}
		if ctBefore {
			t.Errorf("the packet went to conntrack before %s", c.stage)
		}
	}
}

// aclOfFlow names the ACL whose eval flow this is ("" for a flow of no
// ACL): its priority is the ACL's + 1000 and its match ends in the ACL's,
// parenthesized.
func aclOfFlow(snap *nbschema.Snapshot, sw, stage, match string, prio int) string {
	v := nbview.New(snap)
	for _, id := range nbschema.SortedKeys(snap.Switches) {
		if snap.Switches[id].Name != sw {
			continue
		}
		for _, a := range v.AppliedACLs(v.Switch(id)) {
			if n := aclOfFlowIs(a, stage, match, prio); n != "" {
				return n
			}
		}
	}
	return ""
}

func aclOfFlowIs(a *nbdb.ACL, stage, match string, prio int) string {
	if a.Priority+1000 != prio || !strings.HasSuffix(match, "("+a.Match+")") && match != a.Match && !strings.HasSuffix(match, ") && "+a.Match) {
		return ""
	}
	if (a.Direction == "to-lport") != (stage == "ls_out_acl") {
		return ""
	}
	if a.Name != nil {
		return *a.Name
	}
	return a.UUID
}
