package watch_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/lflow"
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
		default:
			out[i] = a
		}
	}
	// "add … @lb1": the load balancer's UUID.
	for i, a := range out {
		if a == "@lb1" {
			out[i] = find("Load_Balancer", "name=lb1")
		}
	}
	return out
}

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

// TestWatchFollowsNorthd runs aclc watch against a real NB while ovn-nbctl
// applies the change sequence above, one batch at a time. After every
// batch the watch snapshot must equal, flow for flow, what the real
// ovn-northd 23.03 wrote into the SB for the same NB, and be byte for byte
// what `aclc compile --nb` prints; at the end, replaying the --deltas
// lines from nothing must give the same flows.
func TestWatchFollowsNorthd(t *testing.T) {
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovn-northd", "ovn-nbctl", "ovn-sbctl")
	sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := sb.NBCtl(ctx, "--wait=sb", "sync"); err != nil {
		t.Fatal(err)
	}

	w := startWatch(t, sb.NB, watch.Config{})
	w.waitSnapshot(t, "northd (empty NB)", northdFlows(t, ctx, sb), 10*time.Second)

	for i, change := range nbChanges {
		args := expand(t, ctx, sb, change)
		if _, err := sb.NBCtl(ctx, args...); err != nil {
			t.Fatalf("change %d: %v", i, err)
		}
		want := northdFlows(t, ctx, sb)
		what := "northd after change " + strings.Join(change, " ")
		got := w.waitSnapshot(t, what, want, 10*time.Second)
		if c := compileLive(t, ctx, sb.NB); string(c) != string(got) {
			t.Fatalf("after change %d (%v): snapshot is not what aclc compile --nb prints", i, change)
		}
	}
	if n := len(nbChanges); n < 50 {
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
	if err != nil || wantCfg < len(nbChanges) {
		t.Fatalf("NB nb_cfg %q, want at least %d", out, len(nbChanges))
	}
	for deadline := time.Now().Add(10 * time.Second); lastNbCfg(t, w.deltas.String()) != wantCfg; {
		if time.Now().After(deadline) {
			t.Fatalf("last delta line has nb_cfg %d, want the NB's %d", lastNbCfg(t, w.deltas.String()), wantCfg)
		}
		time.Sleep(20 * time.Millisecond)
	}

	final, _ := w.readSnapshot(t)
	replayed, lines := replayDeltas(t, w.deltas.String())
	if textOf(t, replayed) != textOf(t, final) {
		t.Fatalf("replaying the %d --deltas lines does not give the snapshot", lines)
	}
	t.Logf("%d NB changes, %d delta lines, final %d flows", len(nbChanges), lines, final.NumFlows())
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
