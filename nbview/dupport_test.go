package nbview_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/lint"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/trace"
)

// dupPortNB is an NB where port P is listed by both switches A and B and
// is the only member of port group pg1, which has ACLs; B has an ACL on
// @pg1 of its own. The fixture format gives a port one switch, so the
// second listing is added to the Snapshot by dupPortSnapshot.
const dupPortNB = `
switches:
  - name: %[1]s
    ports:
      - {name: %[3]s, addresses: ["00:00:00:00:0a:01 10.0.0.1"]}
      - {name: %[3]s-a, addresses: ["00:00:00:00:0a:02 10.0.0.2"]}
  - name: %[2]s
    ports:
      - {name: %[3]s-b, addresses: ["00:00:00:00:0b:02 10.0.0.3"]}
    acls:
      - {direction: to-lport, priority: 1002, match: "outport == @pg1 && udp", action: drop}
port_groups:
  - name: pg1
    ports: [%[3]s]
    acls:
      - {direction: from-lport, priority: 1001, match: "inport == @pg1 && tcp", action: allow-related}
      - {direction: to-lport, priority: 1000, match: "outport == @pg1 && ip4.src == $pg1_ip4", action: drop}
`

// dupPortSnapshot builds dupPortNB for switches a and b and port p, and
// lists p on b too.
func dupPortSnapshot(t *testing.T, a, b, p string) *nbschema.Snapshot {
	t.Helper()
	snap, err := nbschema.ParseFixture("dup.yaml", fmt.Appendf(nil, dupPortNB, a, b, p))
	if err != nil {
		t.Fatal(err)
	}
	var pid, bid string
	for id, lsp := range snap.Ports {
		if lsp.Name == p {
			pid = id
		}
	}
	for id, ls := range snap.Switches {
		if ls.Name == b {
			bid = id
		}
	}
	ls := snap.Switches[bid]
	ls.Ports = append(ls.Ports, pid)
	slices.Sort(ls.Ports)
	return snap
}

// TestDuplicatePortNorthd checks, against the real ovn-northd 23.03, the
// NB where one port is listed by two switches and is the only member of a
// port group with ACLs: northd gives the port to one switch (the first by
// UUID) and ignores the other listing, so the port group, its ACLs and its
// Port_Group row exist on that switch only. compile (flow for flow), the
// resolver (SB Port_Group and Port_Binding rows), match check, lint (the
// switches of a finding), compile's problems and trace (against ovn-trace)
// must all say the same. Run for several switch name pairs, so that the
// owner is sometimes the switch the fixture defines the port on and
// sometimes the other.
func TestDuplicatePortNorthd(t *testing.T) {
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovn-northd", "ovn-nbctl", "ovn-sbctl", "ovn-trace")
	sb, err := ovnsandbox.Start(filepath.Join(t.TempDir(), "ovn"), ovnsandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	owners := map[bool]int{} // decided cases: owner is the switch the fixture defines the port on
	for i, pair := range [][2]string{{"ls-a", "ls-b"}, {"left", "right"}, {"sw7", "sw8"}, {"blue", "green"}, {"ls-d", "ls-c"}, {"right2", "left2"}} {
		a, b, p := pair[0], pair[1], fmt.Sprintf("dup%d", i)
		t.Run(a+"+"+b, func(t *testing.T) {
			snap := dupPortSnapshot(t, a, b, p)
			if err := sb.Load(ctx, snap); err != nil {
				t.Fatal(err)
			}
			live, err := nbschema.LoadLive(ctx, nbschema.Options{Remotes: sb.NB})
			if err != nil {
				t.Fatal(err)
			}
			view := nbview.New(live)
			// The owner, as the view says; the other switch lists the
			// port but does not have it.
			pid, ok := view.PortByName(p)
			if !ok {
				t.Fatalf("port %s has no owner in the view", p)
			}
			owner := live.Switches[view.PortSwitch(pid)].Name
			other := a
			if owner == a {
				other = b
			}
			dups := view.Duplicates()
			if len(dups) != 1 || dups[0].Port != pid {
				t.Fatalf("duplicates %+v, want port %s", dups, p)
			}
			res := compile.Compile(live)
			if dups[0].Ambiguous {
				// Both switches hash to one bucket: northd's choice is
				// not the NB's to make, and compile must say so.
				found := false
				for _, pr := range res.Problems {
					found = found || strings.Contains(pr.Message, "depends on northd's state")
				}
				if !found {
					t.Errorf("no problem says the owner of %s is undecided: %v", p, res.Problems)
				}
				return
			}
			owners[owner == a]++
			t.Logf("%s owns %s (switch UUIDs %s)", owner, p, strings.Join(nbschema.SortedKeys(live.Switches), " < "))

			// compile: flow for flow the same as northd.
			northd, err := sb.ACLStageFlows(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if changes := lflow.Diff(northd, res.Flows); len(changes) > 0 {
				var d bytes.Buffer
				lflow.WriteDiff(&d, "northd", "aclc", changes)
				t.Errorf("aclc differs from the live northd:\n%s", d.String())
			}
			pgACL := ""
			for id, acl := range live.ACLs {
				if acl.Priority == 1001 {
					pgACL = id
				}
			}
			on := map[string]bool{}
			for _, dp := range res.Flows.Datapaths {
				for _, f := range dp.Flows {
					if f.Source == pgACL {
						on[dp.Name] = true
					}
				}
			}
			if !on[owner] || on[other] {
				t.Errorf("pg1's ACL compiled on %v, want on %s only", on, owner)
			}

			// The resolver against the SB rows; match check reads it.
			checkResolvers(t, ctx, sb, a, b)
			for dp, ok := range map[string]bool{owner: true, other: false} {
				r, err := view.Resolver(dp)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := expr.Parse("outport == @pg1", r); (err == nil) != ok {
					t.Errorf("match check on %s: @pg1 resolves = %v, want %v", dp, err == nil, ok)
				}
			}

			// compile's problems and lint: B's own ACL names @pg1, which
			// has no ports on B when A owns the port (and resolves when B
			// does).
			var probSwitches, lintSwitches []string
			for _, pr := range res.Problems {
				if strings.Contains(pr.Message, "@pg1") {
					probSwitches = append(probSwitches, pr.Datapath)
				}
			}
			rep, err := lint.Lint(live)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range rep.Findings {
				if f.Rule == lint.RuleDanglingRef && strings.Contains(f.Message, "@pg1") {
					lintSwitches = append(lintSwitches, f.Switches...)
				}
			}
			var want []string
			if owner == a {
				want = []string{b}
			}
			if d := cmp.Diff(want, probSwitches); d != "" {
				t.Errorf("compile's @pg1 problems on switches (-want +got):\n%s", d)
			}
			if d := cmp.Diff(want, lintSwitches); d != "" {
				t.Errorf("lint's dangling @pg1 on switches (-want +got):\n%s", d)
			}
			// lint sees pg1's ACLs on the owner only, like compile.
			for _, f := range rep.Findings {
				for _, r := range f.ACLs {
					if r.Owner == "Port_Group pg1" && slices.Contains(f.Switches, other) {
						t.Errorf("lint finding %q on %s, where pg1 is not present", f.Message, other)
					}
				}
			}

			// trace against ovn-trace: from the port on its owner, and to
			// it from the other switch.
			tr := trace.New(live, res.Flows)
			mac := func(name string) string {
				id, _ := view.PortByName(name)
				return strings.Fields(live.Ports[id].Addresses[0])[0]
			}
			ownPort := p + "-a"
			if owner == b {
				ownPort = p + "-b"
			}
			otherPort := p + "-b"
			if owner == b {
				otherPort = p + "-a"
			}
			for _, tc := range []struct{ dp, flow string }{
				{owner, `inport == "` + p + `" && eth.src == ` + mac(p) + ` && eth.dst == ` + mac(ownPort) +
					` && ip4.src == 10.0.0.1 && ip4.dst == 10.0.0.2 && ip.ttl == 64 && tcp && tcp.dst == 80`},
				{owner, `inport == "` + ownPort + `" && eth.src == ` + mac(ownPort) + ` && eth.dst == ` + mac(p) +
					` && ip4.src == 10.0.0.2 && ip4.dst == 10.0.0.1 && ip.ttl == 64 && udp && udp.dst == 53`},
				{other, `inport == "` + otherPort + `" && eth.src == ` + mac(otherPort) + ` && eth.dst == ` + mac(p) +
					` && ip4.src == 10.0.0.3 && ip4.dst == 10.0.0.1 && ip.ttl == 64 && udp && udp.dst == 53`},
			} {
				want, err := sb.Run(ctx, "ovn-trace", "--db="+sb.SB, "--minimal", "--ct", "new", tc.dp, tc.flow)
				if err != nil {
					t.Fatal(err)
				}
				got, err := tr.Trace(tc.flow, trace.Options{Datapath: tc.dp, CT: []trace.CTState{mustCT(t, "new")}})
				if err != nil {
					t.Fatalf("aclc trace on %s: %v", tc.dp, err)
				}
				if d := cmp.Diff(minimal(want), minimal(got.Minimal())); d != "" {
					t.Errorf("trace on %s of %s: --minimal differs (-ovn-trace +aclc):\n%s", tc.dp, tc.flow, d)
				}
			}
		})
	}
	t.Logf("owner is the switch the fixture defines the port on in %d cases, the other in %d", owners[true], owners[false])
	if owners[true] == 0 || owners[false] == 0 {
		t.Errorf("the cases do not cover both owners: %v", owners)
	}
}

func mustCT(t *testing.T, s string) trace.CTState {
	st, err := trace.ParseCTState(s)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// minimal drops ovn-trace's "# flow" line.
func minimal(s string) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if !strings.HasPrefix(l, "#") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
