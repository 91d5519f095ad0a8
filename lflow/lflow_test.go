package lflow

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sample is `ovn-sbctl lflow-list` output as ovn-northd 23.03 wrote it for
// a switch with one allow-related and one allow-stateless ACL.
const sample = `Datapath: "sw0" (2c153b01-8d96-4522-8fd1-27b7fdbbbb57)  Pipeline: ingress
  table=4 (ls_in_pre_acl      ), priority=110  , match=(eth.dst == $svc_monitor_mac), action=(next;)
  table=4 (ls_in_pre_acl      ), priority=100  , match=(ip), action=(reg0[0] = 1; next;)
  table=8 (ls_in_acl          ), priority=65532, match=(ct.inv || (ct.est && ct.rpl && ct_mark.blocked == 1)), action=(drop;)
  table=8 (ls_in_acl          ), priority=2002 , match=(reg0[7] == 1 && (ip4 && tcp)), action=(reg0[1] = 1; next;)
  table=17(ls_in_acl_after_lb ), priority=0    , match=(1), action=(next;)
Datapath: "sw0" (2c153b01-8d96-4522-8fd1-27b7fdbbbb57)  Pipeline: egress
  table=0 (ls_out_pre_acl     ), priority=2002 , match=(ip4 && udp), action=(reg0[16] = 1; next;)
  table=7 (ls_out_stateful    ), priority=100  , match=(reg0[1] == 1 && reg0[13] == 1), action=(ct_commit { ct_mark.blocked = 0; ct_label.label = reg3; }; next;)
`

func TestTextRoundTrip(t *testing.T) {
	l, err := ParseText("sample", strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if got := l.NumFlows(); got != 7 {
		t.Fatalf("parsed %d flows, want 7", got)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, l); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sample, buf.String()); diff != "" {
		t.Errorf("text round trip (-want +got):\n%s", diff)
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, l); err != nil {
		t.Fatal(err)
	}
	l2, err := Parse("json", js.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(l, l2); diff != "" {
		t.Errorf("json round trip (-text +json):\n%s", diff)
	}
}

func TestSortMatchesLflowList(t *testing.T) {
	l, err := ParseText("sample", strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	d := l.Datapaths[0]
	want := append([]Flow(nil), d.Flows...)
	// Reverse, then sort back: the order must be the one ovn-sbctl printed.
	for i, j := 0, len(d.Flows)-1; i < j; i, j = i+1, j-1 {
		d.Flows[i], d.Flows[j] = d.Flows[j], d.Flows[i]
	}
	d.Flows = append(d.Flows, d.Flows[0]) // a duplicate is dropped
	l.Sort()
	if diff := cmp.Diff(want, d.Flows); diff != "" {
		t.Errorf("sort (-want +got):\n%s", diff)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"no header", "  table=4 (ls_in_pre_acl      ), priority=0, match=(1), action=(next;)\n", "x:1: flow line before any"},
		{"bad stage", "Datapath: \"a\" (u)  Pipeline: ingress\n  table=4 (ls_in_nope), priority=0, match=(1), action=(next;)\n", "x:2: unknown stage"},
		{"wrong table", "Datapath: \"a\" (u)  Pipeline: ingress\n  table=6 (ls_in_pre_acl), priority=0, match=(1), action=(next;)\n", "x:2: stage ls_in_pre_acl is table 4 of ingress in OVN 23.03, table 4 of ingress in OVN 24.03, table 4 of ingress in OVN 25.03, table 5 of ingress in OVN 25.09, table 5 of ingress in OVN 26.03, table 5 of ingress in OVN 26.09, line says table 6"},
		{"layouts disagree", "Datapath: \"a\" (u)  Pipeline: ingress\n  table=5 (ls_in_pre_acl), priority=0, match=(1), action=(next;)\n  table=8 (ls_in_acl_eval), priority=0, match=(1), action=(next;)\n", "x:3: stage ls_in_acl_eval is table 9 of ingress in OVN 25.09, table 9 of ingress in OVN 26.03, table 9 of ingress in OVN 26.09, line says table 8 of ingress"},
		{"bad pipeline", "Datapath: \"a\" (u)  Pipeline: sideways\n", "x:1: unknown pipeline"},
		{"garbage", "Datapath: \"a\" (u)  Pipeline: ingress\nhello\n", "x:2: not a flow line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseText("x", strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestHeaderAka(t *testing.T) {
	in := "Datapath: \"neutron-1\" aka \"private\" (u1)  Pipeline: egress\n  table=4 (ls_out_acl         ), priority=0    , match=(1), action=(next;)\n"
	l, err := ParseText("x", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if d := l.Datapaths[0]; d.Name != "neutron-1" || d.Name2 != "private" || d.UUID != "u1" {
		t.Fatalf("header parsed as %+v", d)
	}
	var buf bytes.Buffer
	WriteText(&buf, l)
	if buf.String() != in {
		t.Errorf("got %q, want %q", buf.String(), in)
	}
}

func TestDiff(t *testing.T) {
	a, _ := ParseText("a", strings.NewReader(sample))
	b, _ := ParseText("b", strings.NewReader(strings.Replace(sample, "(ip4 && tcp)", "(ip4 && udp)", 1)))
	b.Datapaths[0].UUID = "other-uuid" // UUIDs do not matter, names do
	ch := Diff(a, b)
	if len(ch) != 2 || ch[0].Added || !ch[1].Added {
		t.Fatalf("diff = %+v, want one removal then one addition", ch)
	}
	var buf bytes.Buffer
	WriteDiff(&buf, "a", "b", ch)
	want := `--- a
+++ b
@@ Datapath: "sw0"  Pipeline: ingress @@
-  table=8 (ls_in_acl          ), priority=2002 , match=(reg0[7] == 1 && (ip4 && tcp)), action=(reg0[1] = 1; next;)
+  table=8 (ls_in_acl          ), priority=2002 , match=(reg0[7] == 1 && (ip4 && udp)), action=(reg0[1] = 1; next;)
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("diff output (-want +got):\n%s", diff)
	}
	if len(Diff(a, a)) != 0 {
		t.Error("a listing differs from itself")
	}
}

func TestStageTable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		pipe  Pipeline
		table int
	}{
		{"ls_in_pre_acl", Ingress, 4}, {"ls_in_acl", Ingress, 8}, {"ls_in_acl_after_lb", Ingress, 17},
		{"ls_in_stateful", Ingress, 18}, {"ls_in_l2_lkup", Ingress, 25}, {"ls_out_pre_acl", Egress, 0},
		{"ls_out_acl", Egress, 4}, {"ls_out_qos_mark", Egress, 5}, {"ls_out_stateful", Egress, 7},
	} {
		st, ok := StageByName(tc.name)
		if !ok || st.Pipeline() != tc.pipe || st.Table() != tc.table {
			t.Errorf("%s: got %v table %d", tc.name, st.Pipeline(), st.Table())
		}
		if st2, _ := StageAt(tc.pipe, tc.table); st2 != st {
			t.Errorf("StageAt(%v, %d) = %v", tc.pipe, tc.table, st2)
		}
	}
}

func TestParseSkipsRouters(t *testing.T) {
	in := "Datapath: \"lr0\" (r1)  Pipeline: ingress\n  table=0 (lr_in_admission    ), priority=50   , match=(eth.mcast), action=(next;)\n" + sample
	l, err := ParseText("x", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Datapaths) != 1 || l.Datapaths[0].Name != "sw0" {
		t.Fatalf("datapaths = %+v, want only sw0", l.Datapaths)
	}
}
