package watch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnroot"
	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/watch"
)

// nbChanges is the e2e sequence: one ovn-nbctl invocation per batch,
// covering every change kind the engine handles. "{acl:PRIO}" is replaced
// by the UUID of the ACL of that priority, "{dhcp}" by the DHCP_Options
// row, "{lbg}" by the load balancer group.
var nbChanges = [][]string{
	{"ls-add", "sw0"},
	{"lsp-add", "sw0", "p1"},
	{"lsp-add", "sw0", "p2"},
	{"acl-add", "sw0", "from-lport", "1000", `inport == "p1" && ip4`, "allow-related"},
	{"pg-add", "pg1", "p1", "p2"},
	{"acl-add", "pg1", "to-lport", "1001", "outport == @pg1 && ip4", "allow"},
	{"create", "Address_Set", "name=as1", "addresses=10.0.0.1"},
	{"acl-add", "pg1", "to-lport", "1002", "ip4.src == $as1", "drop"},
	{"set", "ACL", "{acl:1002}", "action=reject"},
	{"set", "ACL", "{acl:1002}", "priority=1003"},
	{"set", "Address_Set", "as1", "addresses=10.0.0.1,10.0.0.2"},
	{"acl-add", "pg1", "from-lport", "1100", "inport == @pg1 && udp", "allow-stateless"},
	{"lb-add", "lb1", "10.0.0.100:80", "10.0.0.2:8080"},
	{"ls-lb-add", "sw0", "lb1"},
	{"lb-add", "lb1", "[fd00::100]:80", "[fd00::2]:8080"},
	{"set", "NB_Global", ".", "options:use_ct_inv_match=false"},
	{"set", "NB_Global", ".", "options:default_acl_drop=true"},
	{"ls-add", "sw1"},
	{"lsp-add", "sw1", "p3"},
	{"pg-set-ports", "pg1", "p1", "p3"},
	{"acl-add", "sw1", "to-lport", "900", "ip6", "allow-related"},
	{"lsp-del", "p2"},
	{"ls-lb-del", "sw0", "lb1"},
	{"lr-add", "lr0"},
	{"lsp-add", "sw0", "rp0"},
	{"lsp-set-type", "rp0", "router"},
	{"lsp-set-options", "rp0", "router-port=lrp0"},
	{"lrp-add", "lr0", "lrp0", "00:00:00:00:ff:01", "10.0.0.254/24"},
	{"lsp-add", "sw1", "ln1"},
	{"lsp-set-type", "ln1", "localnet"},
	{"dhcp-options-create", "10.0.0.0/24"},
	{"dhcp-options-set-options", "{dhcp}", "server_id=10.0.0.254", "server_mac=00:00:00:00:ff:01", "lease_time=3600"},
	{"lsp-set-dhcpv4-options", "p1", "{dhcp}"},
	{"lsp-set-addresses", "p1", "00:00:00:00:00:01 10.0.0.5"},
	{"meter-add", "m1", "drop", "10", "pktps"},
	{"--log", "--meter=m1", "--severity=warning", "--name=logged", "acl-add", "sw0", "to-lport", "1200", "tcp", "allow-related"},
	{"set", "Meter", "m1", "fair=true"},
	{"--label=42", "acl-add", "sw0", "from-lport", "1300", "tcp.dst == 22", "allow-related"},
	{"set", "ACL", "{acl:1300}", "log=true", "options:log-related=true"},
	{"set", "ACL", "{acl:1000}", "options:apply-after-lb=true"},
	{"create", "Load_Balancer_Group", "name=lbg1"},
	{"add", "Load_Balancer_Group", "{lbg}", "load_balancer", "@lb1"},
	{"add", "Logical_Switch", "sw1", "load_balancer_group", "{lbg}"},
	{"set", "NB_Global", ".", "options:controller_event=true"},
	{"lb-add", "lb2", "10.0.0.200:53", "", "udp"},
	{"ls-lb-add", "sw1", "lb2"},
	{"set", "Logical_Switch", "sw1", "external_ids:neutron\\:network_name=net1"},
	{"acl-del", "sw0", "to-lport", "1200", "tcp"},
	{"set", "NB_Global", ".", "options:default_acl_drop=false"},
	{"lrp-del", "lrp0"},
	{"set", "ACL", "{acl:1000}", "action=allow-stateless"},
	{"set", "ACL", "{acl:1300}", "action=allow-stateless"},
	{"ls-add", "sw2"},
	{"lsp-add", "sw2", "p4"},
	{"pg-add", "pg2", "p4"},
	{"acl-add", "pg2", "to-lport", "1400", "outport == @pg2", "drop"},
	{"pg-del", "pg2"},
	{"ls-del", "sw1"},
	{"destroy", "Address_Set", "as1"},
	{"acl-del", "pg1"},
	{"ls-del", "sw2"},
}

// expand replaces the {…} placeholders of one change.
func expand(t *testing.T, ctx context.Context, sb *ovnsandbox.Sandbox, args []string) []string {
	t.Helper()
	out := make([]string, len(args))
	find := func(table string, cond ...string) string {
		res, err := sb.NBCtl(ctx, append([]string{"--bare", "--columns=_uuid", "find", table}, cond...)...)
		if err != nil {
			t.Fatal(err)
		}
		f := strings.Fields(res)
		if len(f) != 1 {
			t.Fatalf("find %s %v: %q", table, cond, res)
		}
		return f[0]
	}
	for i, a := range args {
		switch {
		case strings.HasPrefix(a, "{acl:"):
			out[i] = find("ACL", "priority="+strings.TrimSuffix(strings.TrimPrefix(a, "{acl:"), "}"))
		case a == "{dhcp}":
			out[i] = find("DHCP_Options")
		case a == "{lbg}":
			out[i] = find("Load_Balancer_Group", "name=lbg1")
		case a == "{sc1}":
			out[i] = find("Sample_Collector", "name=c1")
		default:
			out[i] = a
		}
	}
	// "add … @lb1": the load balancer's UUID; "{nfg2}" a function group.
	for i, a := range out {
		switch a {
		case "@lb1":
			out[i] = find("Load_Balancer", "name=lb1")
		case "collectors={sc1}":
			out[i] = "collectors=" + find("Sample_Collector", "name=c1")
		}
	}
	// "{Table:column=value}" anywhere in an argument: that row's UUID.
	for i, a := range out {
		out[i] = findRef.ReplaceAllStringFunc(a, func(m string) string {
			table, cond, _ := strings.Cut(m[1:len(m)-1], ":")
			return find(table, cond)
		})
	}
	return out
}

var findRef = regexp.MustCompile(`\{[A-Z][A-Za-z_]+:[^}]+\}`)

// northdFlows waits for northd and returns the SB's ACL-stage flows.
func northdFlows(t *testing.T, ctx context.Context, sb *ovnsandbox.Sandbox) *lflow.Listing {
	t.Helper()
	if err := sb.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := sb.SBCtl(ctx, "lflow-list")
	if err != nil {
		t.Fatal(err)
	}
	l, err := lflow.ParseText("ovn-sbctl lflow-list", strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	return l.Filter("", func(f lflow.Flow) bool { return f.Stage.IsACLStage() })
}

// releaseChanges are the changes of the kinds a release after 23.03 adds:
// tiers and pass (23.06), sampling with Sample_Collector/Sampling_App
// (24.09), persist-established (25.03); networkFunctionChanges those of
// 26.03's network functions and enable-stateless-acl-with-lb (25.09).
// They run in the middle of nbChanges (before the deletions at its end),
// so that the deletions also remove tiered, sampled and persisted ACLs.
var releaseChanges = [][]string{
	{"--tier=1", "acl-add", "pg1", "from-lport", "2000", "inport == @pg1 && tcp", "pass"},
	{"--tier=2", "acl-add", "pg1", "from-lport", "2001", "inport == @pg1 && tcp.dst == 80", "allow-related"},
	{"--tier=3", "acl-add", "sw0", "to-lport", "2002", "ip4", "drop"},
	{"--tier=1", "acl-add", "sw0", "to-lport", "2003", "outport == \"p1\" && udp", "pass"},
	{"set", "ACL", "{acl:2001}", "tier=3"},
	{"set", "ACL", "{acl:2002}", "action=pass"},
	{"set", "ACL", "{acl:2001}", "options:persist-established=true"},
	{"--tier=2", "acl-add", "pg1", "to-lport", "2004", "outport == @pg1 && ip4", "allow-related"},
	{"set", "ACL", "{acl:2004}", "options:persist-established=true"},
	{"create", "Sample_Collector", "name=c1", "id=1", "set_id=100", "probability=65535"},
	{"create", "Sampling_App", "type=acl-new", "id=42"},
	{"--id=@s", "create", "Sample", "collectors={sc1}", "metadata=1001", "--", "set", "ACL", "{acl:2001}", "sample_new=@s"},
	{"create", "Sampling_App", "type=acl-est", "id=43"},
	{"--id=@s", "create", "Sample", "collectors={sc1}", "metadata=1002", "--", "set", "ACL", "{acl:2001}", "sample_est=@s"},
	{"set", "Sample_Collector", "{sc1}", "probability=100"},
	{"--id=@s", "create", "Sample", "collectors={sc1}", "metadata=1003", "--", "set", "ACL", "{acl:2002}", "sample_new=@s"},
	{"set", "ACL", "{acl:2001}", "sample_new=[]"},
	{"create", "Sampling_App", "type=drop", "id=44"},
	{"set", "NB_Global", ".", "options:debug_drop_collector_set=100", "options:debug_drop_domain_id=1"},
	{"set", "ACL", "{acl:2004}", "options:persist-established=false"},
	{"set", "ACL", "{acl:2000}", "tier=0"},
	{"acl-del", "sw0", "to-lport", "2003", "outport == \"p1\" && udp"},
}

// samplingChange reports whether change c of releaseChanges is one of
// sampling's (24.09: Sample_Collector, Sampling_App, Sample, the ACL
// sample columns, debug-drop sampling), which a 24.03 NB cannot hold.
func samplingChange(c []string) bool {
	for _, a := range c {
		if strings.Contains(a, "Sampl") || strings.HasPrefix(a, "sample_") || strings.Contains(a, "debug_drop") {
			return true
		}
	}
	return false
}

// mirrorChanges are those of 25.09's lport mirrors: a serving port
// appears on the switch of each port attached to a mirror whose sink
// exists (sw1's p3); the ls-del sw1 at the end of nbChanges deletes the
// sink, which takes sw0's serving-port flow with it.
var mirrorChanges = [][]string{
	{"mirror-add", "mlp", "lport", "both", "p3"},
	{"lsp-attach-mirror", "p1", "mlp"},
	{"lsp-attach-mirror", "p4", "mlp"},
	{"mirror-add", "mlp2", "lport", "to-lport", "p4"},
	{"lsp-attach-mirror", "p1", "mlp2"},
	{"lsp-detach-mirror", "p4", "mlp"},
	{"mirror-del", "mlp2"},
}

var networkFunctionChanges = [][]string{
	{"lsp-add", "sw0", "nf-in", "--", "lsp-add", "sw0", "nf-out"},
	{"lsp-set-options", "nf-in", "is-nf=true", "nf-linked-port=nf-out", "receive_multicast=false", "lsp_learn_mac=false"},
	{"lsp-set-options", "nf-out", "is-nf=true", "nf-linked-port=nf-in", "receive_multicast=false", "lsp_learn_mac=false"},
	{"nf-add", "nf1", "7", "nf-in", "nf-out"},
	{"nfg-add", "nfg1", "3", "inline", "nf1"},
	{"acl-add", "sw0", "from-lport", "2100", "inport == \"p1\" && ip4", "allow-related", "nfg1"},
	{"acl-add", "pg1", "to-lport", "2101", "outport == @pg1 && tcp", "allow-related", "nfg1"},
	{"set", "Network_Function_Group", "{Network_Function_Group:name=nfg1}", "fallback=fail-open"},
	{"nfg-add", "nfg2", "4", "inline"},
	{"set", "ACL", "{acl:2101}", "network_function_group={Network_Function_Group:name=nfg2}"},
	{"set", "ACL", "{acl:2100}", "network_function_group=[]"},
	{"set", "Logical_Switch", "sw0", "other_config:enable-stateless-acl-with-lb=true"},
	{"ls-lb-add", "sw0", "lb1"},
	{"set", "Logical_Switch", "sw0", "other_config:enable-stateless-acl-with-lb=false"},
	{"acl-del", "sw0", "from-lport", "2100", "inport == \"p1\" && ip4"},
	{"nfg-del", "nfg1"},
}

// changesFor is the e2e sequence for release r.
func changesFor(r *release.Release) [][]string {
	if ovnroot.OnHost(r) {
		return nbChanges
	}
	cut := slices.IndexFunc(nbChanges, func(c []string) bool { return slices.Equal(c, []string{"ls-del", "sw1"}) })
	out := slices.Clone(nbChanges[:cut])
	for _, c := range releaseChanges {
		if r.Has(release.Sampling) || !samplingChange(c) {
			out = append(out, c)
		}
	}
	if r.Has(release.LportMirror) {
		out = append(out, mirrorChanges...)
	}
	if r.Has(release.NetworkFunction) {
		out = append(out, networkFunctionChanges...)
	}
	return append(out, nbChanges[cut:]...)
}

// TestWatchFollowsNorthd runs aclc watch against a real NB of each release
// while that release's own ovn-nbctl applies the change sequence above,
// one batch at a time. After every batch the watch snapshot must equal,
// flow for flow (ACL ids up to a renaming: northd allocates its own), what
// the release's real ovn-northd wrote into the SB for the same NB, and be
// what `aclc compile --nb` prints; at the end, replaying the --deltas
// lines from nothing must give the same flows.
func TestWatchFollowsNorthd(t *testing.T) {
	for _, r := range testenv.LiveReleases(t) {
		t.Run(r.Name(), func(t *testing.T) { followNorthd(t, r) })
	}
}

func followNorthd(t *testing.T, r *release.Release) {
	testenv.NeedRelease(t, r)
	sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{Release: r})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := sb.NBCtl(ctx, "--wait=sb", "sync"); err != nil {
		t.Fatal(err)
	}

	w := startWatch(t, sb.NB, watch.Config{})
	w.norm = lflow.RenumberACLIDs
	w.waitSnapshot(t, "northd (empty NB)", northdFlows(t, ctx, sb), 10*time.Second)

	changes := changesFor(r)
	stale := 0
	for i, change := range changes {
		args := expand(t, ctx, sb, change)
		if _, err := sb.NBCtl(ctx, args...); err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
		what := fmt.Sprintf("northd %s after change %d %s", r, i, strings.Join(change, " "))
		got, diff := w.trySnapshot(t, northdFlows(t, ctx, sb), 5*time.Second)
		if diff != "" {
			// northd 25.09+ processes ACL changes incrementally; its
			// full recompute is the reference. A difference that a
			// recompute removes is northd's (stale flows it left),
			// reported, not aclc's.
			if _, err := sb.Run(ctx, "ovn-appctl", "-t", filepath.Join(sb.Dir, "northd.ctl"), "inc-engine/recompute"); err != nil {
				t.Fatal(err)
			}
			got = w.waitSnapshot(t, what+" (after a northd recompute)", northdFlows(t, ctx, sb), 5*time.Second)
			t.Logf("%s: northd's incremental SB differed from its own recompute, which aclc equals:\n%s", what, diff)
			stale++
		}
		if c := compileLive(t, ctx, sb.NB); string(c) != string(got) &&
			textOf(t, lflow.RenumberACLIDs(mustParse(t, c))) != textOf(t, lflow.RenumberACLIDs(mustParse(t, got))) {
			t.Fatalf("after change %d (%v): snapshot is not what aclc compile --nb prints", i, change)
		}
	}
	if n := len(changes); n < 50 {
		t.Fatalf("only %d changes", n)
	}

	// Every northdFlows above bumped nb_cfg (ovn-nbctl --wait=sb sync): the
	// delta lines say which nb_cfg they reflect, and the last one reaches
	// the NB's.
	out, err := sb.NBCtl(ctx, "get", "NB_Global", ".", "nb_cfg")
	if err != nil {
		t.Fatal(err)
	}
	wantCfg, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || wantCfg < len(changes) {
		t.Fatalf("NB nb_cfg %q, want at least %d", out, len(changes))
	}
	for deadline := time.Now().Add(10 * time.Second); lastNbCfg(t, w.deltas.String()) != wantCfg; {
		if time.Now().After(deadline) {
			t.Fatalf("last delta line has nb_cfg %d, want the NB's %d", lastNbCfg(t, w.deltas.String()), wantCfg)
		}
		time.Sleep(20 * time.Millisecond)
	}

	final, _ := w.readSnapshot(t)
	lay, _ := lflow.LayoutFor(r.Series())
	replayed, lines := replayDeltas(t, lay, w.deltas.String())
	if textOf(t, replayed) != textOf(t, final) {
		t.Fatalf("replaying the %d --deltas lines does not give the snapshot", lines)
	}
	t.Logf("OVN %s: %d NB changes, %d delta lines, final %d flows; %d changes where northd's incremental SB was stale", r, len(changes), lines, final.NumFlows(), stale)
}

// lastNbCfg returns the nb_cfg of the last --deltas line.
func lastNbCfg(t *testing.T, data string) int {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(data), "\n")
	var rec watch.DeltaRecord
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &rec); err != nil {
		t.Fatal(err)
	}
	return rec.NbCfg
}
