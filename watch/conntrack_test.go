package watch

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
)

// TestEntryFlowsFollowNorthd checks the flow-derived rule on every golden
// of every release (what that release's real northd wrote for each
// fixture): a switch has conntrack entry flows exactly when northd's own
// view calls it stateful (a stateful ACL or a load balancer VIP, the
// engine's NeedsConntrack), and every switch whose golden has network
// function redirect flows has entry flows.
func TestEntryFlowsFollowNorthd(t *testing.T) {
	for _, r := range release.All() {
		dir := filepath.Join("../testdata/golden", r.Name())
		goldens, err := filepath.Glob(filepath.Join(dir, "*.lflows"))
		if err != nil || len(goldens) < 30 {
			t.Errorf("OVN %s: %d goldens under %s (%v)", r, len(goldens), dir, err)
			continue
		}
		stateful, nfs := 0, 0
		for _, g := range goldens {
			name := strings.TrimSuffix(filepath.Base(g), ".lflows")
			snap, err := nbschema.LoadFixtureWith(filepath.Join("../testdata/fixtures", name+".yaml"), nbschema.FixtureOptions{Release: r})
			if err != nil {
				t.Fatalf("OVN %s %s: %v", r, name, err)
			}
			data, err := os.ReadFile(g)
			if err != nil {
				t.Fatal(err)
			}
			l, err := lflow.ParseText(g, strings.NewReader(string(data)))
			if err != nil {
				t.Fatal(err)
			}
			e := compile.NewEngineWith(snap, compile.Options{Release: r})
			byName := map[string]string{}
			for id, ls := range snap.Switches {
				byName[ls.Name] = id
			}
			ct := ctTracker{}
			for _, dp := range l.Datapaths {
				id, ok := byName[dp.Name]
				if !ok {
					continue // a router's datapath
				}
				u := ct.use(id)
				for _, f := range dp.Flows {
					u.count(f, 1)
				}
				if want := e.NeedsConntrack(id); (u.entries > 0) != want {
					t.Errorf("OVN %s %s: switch %s has %d conntrack entry flows in northd's flows, but its view says stateful=%v", r, name, dp.Name, u.entries, want)
				}
				if u.entries > 0 {
					stateful++
				}
				if len(u.nf) > 0 {
					nfs++
					if u.entries == 0 {
						t.Errorf("OVN %s %s: switch %s redirects to network functions without conntrack", r, name, dp.Name)
					}
				}
			}
		}
		t.Logf("OVN %s: %d goldens, %d stateful switches, %d with network function redirects", r, len(goldens), stateful, nfs)
	}
}

// TestCTTrackerApply: the triggers on synthetic deltas of 26.03 flows.
func TestCTTrackerApply(t *testing.T) {
	lay, _ := lflow.LayoutFor("26.03")
	entry := lflow.Flow{Stage: lay.Stage(lflow.InPreACL), Priority: 100, Match: "ip", Actions: "reg0[0] = 1; next;"}
	gated := lflow.Flow{Stage: lay.Stage(lflow.InPreStateful), Priority: 100, Match: "reg0[0] == 1", Actions: "ct_next;"}
	nf := func(port string) lflow.Flow {
		return lflow.Flow{Stage: lay.Stage(lflow.InNF), Priority: 99, Match: "reg8[21] == 1 && reg8[22] == 0 && ct_label.nf_id == 7", Actions: "outport = \"" + port + "\"; output;"}
	}
	ct := ctTracker{}
	ct.load(&lflow.Listing{Datapaths: []*lflow.Datapath{{UUID: "s", Name: "sw0", Flows: []lflow.Flow{entry, gated, nf("nf-in")}}}})
	dd := func(add, rm []lflow.Flow) *compile.Delta {
		return &compile.Delta{Datapaths: []compile.DatapathDelta{{UUID: "s", Name: "sw0", Added: add, Removed: rm}}}
	}
	if r := ct.apply(dd([]lflow.Flow{nf("nf-in2")}, []lflow.Flow{nf("nf-in")})); len(r) != 0 {
		t.Fatalf("a redirect replaced by one with the same match released %v", r)
	}
	if r := ct.apply(dd(nil, []lflow.Flow{nf("nf-in2")})); len(r) != 1 || !strings.Contains(r[0].reason, "network function redirect") {
		t.Fatalf("redirect removed: %v", r)
	}
	if r := ct.apply(dd(nil, []lflow.Flow{gated})); len(r) != 0 {
		t.Fatalf("a gated pre-stateful flow is no entry flow: %v", r)
	}
	if r := ct.apply(dd(nil, []lflow.Flow{entry})); len(r) != 1 || !strings.Contains(r[0].reason, "no longer sends traffic to conntrack") {
		t.Fatalf("last entry flow removed: %v", r)
	}
	ct.apply(dd([]lflow.Flow{entry}, nil))
	del := &compile.Delta{Datapaths: []compile.DatapathDelta{{UUID: "s", Name: "sw0", Deleted: true, Removed: []lflow.Flow{entry}}}}
	if r := ct.apply(del); len(r) != 0 {
		t.Fatalf("a deleted switch (its ports are flushed as deleted) released %v", r)
	}
}

// TestRedirectsToNF2609: 26.09's inline redirects (nf_learn_orig_inport
// first) and vtap mirrors count as network function redirects; its
// priority-50 learn flows and the fail-open flows do not.
func TestRedirectsToNF2609(t *testing.T) {
	lay, _ := lflow.LayoutFor("26.09")
	in, out, pre := lay.Stage(lflow.InNF), lay.Stage(lflow.OutNF), lay.Stage(lflow.InPreNF)
	for _, c := range []struct {
		f    lflow.Flow
		want bool
	}{
		{lflow.Flow{Stage: in, Priority: 99, Match: "reg8[21] == 1 && reg8[22] == 1 && reg0[22..29] == 7 && ip4", Actions: `nf_learn_orig_inport(ipv6 = false); outport = "nf-in"; output;`}, true},
		{lflow.Flow{Stage: out, Priority: 99, Match: "reg8[21] == 1 && reg8[22] == 0 && ct_label.nf_id == 7", Actions: `outport = "nf-out"; reg8[23] = 1; next(pipeline=ingress, table=33);`}, true},
		{lflow.Flow{Stage: in, Priority: 99, Match: "reg8[21] == 1 && reg8[22] == 1 && reg0[22..29] == 9", Actions: `clone {outport = "tap"; output;}; next;`}, true},
		{lflow.Flow{Stage: in, Priority: 50, Match: "ip4 && reg8[21] == 0", Actions: "nf_learn_orig_inport(ipv6 = false); next;"}, false},
		{lflow.Flow{Stage: pre, Priority: 10, Match: "reg8[21] == 1 && reg8[22] == 1 && reg0[22..29] == 5", Actions: "reg8[21] = 0; reg0[22..29] = 0; next;"}, false},
	} {
		if got := redirectsToNF(c.f); got != c.want {
			t.Errorf("%s: redirectsToNF = %v, want %v", c.f.Actions, got, c.want)
		}
	}
}
