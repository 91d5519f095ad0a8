package lflow

import (
	"bytes"
	"strconv"
	"testing"
)

// The table numbers quoted by the releases' northd.h and seen in their
// lflow-list output.
func TestLayoutTables(t *testing.T) {
	for _, c := range []struct {
		l     *Layout
		kind  Stage
		name  string
		table int
	}{
		{Layout2303, InPreACL, "ls_in_pre_acl", 4},
		{Layout2303, InACL, "ls_in_acl", 8},
		{Layout2303, InACLAfterLB, "ls_in_acl_after_lb", 17},
		{Layout2303, InL2Lkup, "ls_in_l2_lkup", 25},
		{Layout2303, OutStateful, "ls_out_stateful", 7},
		{Layout2503, InACL, "ls_in_acl_eval", 8},
		{Layout2503, InACLAction, "ls_in_acl_action", 10},
		{Layout2503, InStateful, "ls_in_stateful", 21},
		{Layout2503, InL2Lkup, "ls_in_l2_lkup", 28},
		{Layout2503, OutPreACL, "ls_out_pre_acl", 2},
		{Layout2503, OutQoS, "ls_out_qos", 9},
		{Layout2503, OutStateful, "ls_out_stateful", 10},
		{Layout2603, InPreACL, "ls_in_pre_acl", 5},
		{Layout2603, InACL, "ls_in_acl_eval", 9},
		{Layout2603, InACLAction, "ls_in_acl_action", 11},
		{Layout2603, InACLAfterLB, "ls_in_acl_after_lb_eval", 20},
		{Layout2603, InPreNF, "ls_in_pre_network_function", 23},
		{Layout2603, InStateful, "ls_in_stateful", 24},
		{Layout2603, InNF, "ls_in_network_function", 25},
		{Layout2603, InL2Lkup, "ls_in_l2_lkup", 32},
		{Layout2603, OutQoS, "ls_out_qos", 10},
		{Layout2603, OutStateful, "ls_out_stateful", 12},
		{Layout2603, OutNF, "ls_out_network_function", 13},
		{Layout2603, OutApplyPortSec, "ls_out_apply_port_sec", 15},
		{Layout2403, InACL, "ls_in_acl_eval", 8},
		{Layout2403, InACLAction, "ls_in_acl_action", 9},
		{Layout2403, InACLAfterLB, "ls_in_acl_after_lb_eval", 18},
		{Layout2403, InStateful, "ls_in_stateful", 20},
		{Layout2403, OutPreACL, "ls_out_pre_acl", 0},
		{Layout2403, OutStateful, "ls_out_stateful", 8},
		{Layout2509, InMirror, "ls_in_mirror", 2},
		{Layout2509, InStateful, "ls_in_stateful", 23},
		{Layout2509, OutMirror, "ls_out_mirror", 9},
		{Layout2509, OutStateful, "ls_out_stateful", 11},
		{Layout2609, InARPNDPreLookup, "ls_in_arp_nd_pre_lookup", 26},
		{Layout2609, InARPRsp, "ls_in_arp_rsp", 27},
		{Layout2609, InL2Lkup, "ls_in_l2_lkup", 33},
	} {
		st := c.l.Stage(c.kind)
		if st.Name() != c.name || st.Table() != c.table || st.Kind() != c.kind || st.Layout() != c.l {
			t.Errorf("%s kind %d: got %s table %d, want %s table %d", c.l, c.kind, st.Name(), st.Table(), c.name, c.table)
		}
		if got, ok := c.l.StageByName(c.name); !ok || got != st {
			t.Errorf("%s StageByName(%s) = %v, %v", c.l, c.name, got, ok)
		}
		if got, ok := c.l.StageAt(st.Pipeline(), c.table); !ok || got != st {
			t.Errorf("%s StageAt(%d) = %v, %v", c.l, c.table, got, ok)
		}
	}
	if Layout2303.Has(InACLSample) || !Layout2503.Has(InACLSample) || Layout2503.Has(InNF) || !Layout2603.Has(InNF) {
		t.Error("Has disagrees with the releases' stage lists")
	}
	if n := len(Layout2603.ACLStages()); n != 23 {
		t.Errorf("26.03 has %d ACL stages, want 23", n)
	}
	if n := len(Layout2303.ACLStages()); n != 13 {
		t.Errorf("23.03 has %d ACL stages, want 13", n)
	}
}

// A listing is parsed in the layout its lines fit and written back the same.
func TestParseTextDetectsLayout(t *testing.T) {
	for _, c := range []struct {
		text string
		want *Layout
	}{
		{"Datapath: \"a\" (u)  Pipeline: ingress\n  table=8 (ls_in_acl          ), priority=0    , match=(1), action=(next;)\n", Layout2303},
		{"Datapath: \"a\" (u)  Pipeline: ingress\n  table=8 (ls_in_acl_eval     ), priority=0    , match=(1), action=(next;)\n", Layout2503},
		{"Datapath: \"a\" (u)  Pipeline: ingress\n  table=9 (ls_in_acl_eval     ), priority=0    , match=(1), action=(next;)\n", Layout2609},
	} {
		l, err := ParseText("x", bytes.NewBufferString(c.text))
		if err != nil {
			t.Fatal(err)
		}
		if got := l.Datapaths[0].Flows[0].Stage.Layout(); got != c.want {
			t.Errorf("%q: layout %s, want %s", c.text, got, c.want)
		}
		var out bytes.Buffer
		WriteText(&out, l)
		if out.String() != c.text {
			t.Errorf("round trip:\n%s\nwant\n%s", out.String(), c.text)
		}
	}
}

func TestRenumberACLIDs(t *testing.T) {
	mk := func(ids ...string) *Listing {
		d := &Datapath{Name: "a", UUID: "u"}
		for i, id := range ids {
			d.Flows = append(d.Flows, Flow{Stage: Layout2603.Stage(InACL), Priority: 2000 - i, Match: "m" + strconv.Itoa(i),
				Actions: "reg8[16] = 1; reg2[16..31] = " + id + "; reg0[20] = 1; next;"})
		}
		d.Flows = append(d.Flows, Flow{Stage: Layout2603.Stage(InStateful), Priority: 100, Match: "1", Actions: "ct_commit { ct_label.acl_id = reg2[16..31]; }; next;"})
		return &Listing{Datapaths: []*Datapath{d}}
	}
	a, b, c := RenumberACLIDs(mk("7", "3", "7")), RenumberACLIDs(mk("1", "2", "1")), RenumberACLIDs(mk("1", "2", "2"))
	if len(Diff(a, b)) != 0 {
		t.Errorf("a consistent renaming should compare equal: %v", Diff(a, b))
	}
	if len(Diff(a, c)) == 0 {
		t.Error("an inconsistent renaming compares equal")
	}
	if got := a.Datapaths[0].Flows[1].Actions; got != "reg8[16] = 1; reg2[16..31] = 2; reg0[20] = 1; next;" {
		t.Errorf("renumbered: %q", got)
	}
}

// The router table numbers of northd.h's PIPELINE_STAGES at v25.03.0 and
// v26.03.1, from each series' stage list less the backported stages a
// version lacks.
func TestRouterLayoutTables(t *testing.T) {
	all := func(RouterStage) bool { return true }
	before2503x := func(k RouterStage) bool { return k != LRInNetworkID && k != LRInECMPStatefulEgr }
	for _, c := range []struct {
		rl    *RouterLayout
		kind  RouterStage
		table int
	}{
		{Layout2303.Routers("23.03.1", all), LRInIPRouting, 13},
		{Layout2303.Routers("23.03.1", all), LRInARPRequest, 21},
		{Layout2303.Routers("23.03.1", all), LRInCtExtract, -1},
		{Layout2503.Routers("25.03.0", before2503x), LRInDHCPRelayReq, 4},
		{Layout2503.Routers("25.03.0", before2503x), LRInIPRouting, 15},
		{Layout2503.Routers("25.03.0", before2503x), LRInARPRequest, 25},
		{Layout2503.Routers("25.03.0", before2503x), LRInNetworkID, -1},
		{Layout2603.Routers("26.03.1", all), LRInCtExtract, 8},
		{Layout2603.Routers("26.03.1", all), LRInIPRouting, 16},
		{Layout2603.Routers("26.03.1", all), LRInNetworkID, 26},
		{Layout2603.Routers("26.03.1", all), LRInARPRequest, 27},
		{Layout2603.Routers("26.03.1", all), LRInECMPStatefulEgr, 28},
		{Layout2603.Routers("26.03.1", all), LROutDelivery, 6},
	} {
		if got := c.rl.Table(c.kind); got != c.table {
			t.Errorf("%s %s: table %d, want %d", c.rl, c.kind, got, c.table)
		}
		if c.table < 0 {
			if c.rl.Has(c.kind) {
				t.Errorf("%s has %s", c.rl, c.kind)
			}
			continue
		}
		if st, ok := c.rl.StageAt(c.kind.Pipeline(), c.table); !ok || st != c.kind {
			t.Errorf("%s StageAt(%s, %d) = %s, want %s", c.rl, c.kind.Pipeline(), c.table, st, c.kind)
		}
	}
	for _, l := range Layouts() {
		rl := l.Routers(l.Series, all)
		for _, st := range rl.Stages() {
			if k, ok := RouterStageByName(st.Name()); !ok || k != st {
				t.Errorf("%s: %s does not name its stage", l, st)
			}
		}
	}
}
