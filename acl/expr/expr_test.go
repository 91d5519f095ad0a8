package expr

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/release"
)

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in   string
		want *Error
	}{
		{"", &Error{Offset: 0, Msg: "Syntax error at end of input expecting constant."}},
		{"ip4 &&", &Error{Offset: 6, Msg: "Syntax error at end of input expecting constant."}},
		{"tcp && udp || ip4", &Error{Offset: 11, Msg: "&& and || must be parenthesized when used together."}},
		{"ip4 garbage", &Error{Offset: 4, Msg: "Syntax error at `garbage' expecting end of input."}},
		{"reg0[1..40] == 1", &Error{Offset: 12, Msg: "Cannot select bits 1 to 40 of 32-bit field reg0."}},
		{`inport == "abc`, &Error{Offset: 10, Msg: "Input ends inside quoted string."}},
		{"ip4.src == 10.0.0.0/33", &Error{Offset: 11, Msg: "Value and mask have incompatible formats."}},
		{"!tcp.dst == 80", &Error{Offset: 14, Msg: "Missing parentheses around operand of !."}},
		{"ct.new == 2", &Error{Offset: 11, Msg: "2-bit constant is not compatible with 1-bit field ct.new."}},
		{"inport < \"a\"", &Error{Offset: 12, Msg: "Only == and != operators may be used with nominal field inport."}},
		{"reg10 == 1", &Error{Offset: 0, Msg: "Syntax error at `reg10' expecting field name."}},
		{"ip4 \xff", &Error{Offset: 4, Msg: "Invalid byte 0x-1 in input."}},
		{"ip4 ~", &Error{Offset: 4, Msg: "Invalid character `~' in input."}},
		{"eth.src == 00:00:00:00:00:0g", &Error{Offset: 11, Msg: "Invalid numeric constant."}},
	}
	for _, tc := range tests {
		_, err := Parse(tc.in, nil)
		var got *Error
		if !errors.As(err, &got) {
			t.Errorf("Parse(%q) = %v, want *Error", tc.in, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("Parse(%q) error (-want +got):\n%s", tc.in, d)
		}
	}
}

func TestPrint(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ip4&&tcp.dst==80", "ip4 && tcp.dst == 80"},
		{"tcp.dst == {80 443,}", "tcp.dst == {80, 443}"},
		{"( ip4 /* c */ || ip6 ) // x", "(ip4 || ip6)"},
		{"1000<=tcp.dst<=2000", "1000 <= tcp.dst <= 2000"},
		{"80==tcp.dst", "80 == tcp.dst"},
		{"!  ( reg0[3..3] == 1 )", "!(reg0[3] == 1)"},
		{`inport == "a\u0041"`, `inport == "a\u0041"`},
		{"is_chassis_resident( \"p\" )", `is_chassis_resident("p")`},
		{"ip4.src == 10.0.0.1/24", "ip4.src == 10.0.0.1/24"},
		{"!reg0", "!reg0"},
		{"0 || 1", "0 || 1"},
		{"^reg0 == 1", "reg0 == 1"},
	}
	for _, tc := range tests {
		e, err := Parse(tc.in, nil)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if d := cmp.Diff(tc.want, e.String()); d != "" {
			t.Errorf("Parse(%q).String() (-want +got):\n%s", tc.in, d)
		}
	}
}

func TestPositions(t *testing.T) {
	e, err := Parse("ip4 && (tcp.dst == {80, 443} || !ct.new)", nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []int
	Inspect(e.Root, func(n Node) bool {
		got = append(got, n.Position())
		return true
	})
	want := []int{0, 0, 7, 8, 8, 32, 33}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("positions (-want +got):\n%s", d)
	}
	cmpNode := e.Root.(*Binary).Terms[1].(*Paren).X.(*Binary).Terms[0].(*Cmp)
	if d := cmp.Diff([]int{20, 24}, []int{cmpNode.Values.Values[0].Pos, cmpNode.Values.Values[1].Pos}); d != "" {
		t.Errorf("constant positions (-want +got):\n%s", d)
	}
}

func TestSymtab(t *testing.T) {
	type sym struct {
		Width   int
		Level   Level
		Prereqs string
		Root    string
		Ofs     int
	}
	tests := map[string]sym{
		"inport":              {0, Nominal, "", "inport", 0},
		"tcp.dst":             {16, Ordinal, "tcp", "tcp.dst", 0},
		"ct.new":              {1, Ordinal, "ct.trk", "ct_state", 0},
		"ct.trk":              {1, Ordinal, "", "ct_state", 5},
		"reg0":                {32, Ordinal, "", "xxreg0", 96},
		"reg3":                {32, Ordinal, "", "xxreg0", 0},
		"reg9":                {32, Ordinal, "", "xreg4", 0},
		"xreg1":               {64, Ordinal, "", "xxreg0", 0},
		"eth.type":            {16, Nominal, "", "eth.type", 0},
		"ip.ttl":              {8, Nominal, "ip", "ip.ttl", 0},
		"ip4":                 {1, Nominal, "", "ip4", 0},
		"eth.bcast":           {1, Boolean, "", "eth.bcast", 0},
		"ip4.mcast":           {1, Boolean, "", "ip4.mcast", 0},
		"nd":                  {1, Nominal, "", "nd", 0},
		"eth.mcast":           {1, Ordinal, "", "eth.dst", 40},
		"vlan.vid":            {12, Ordinal, "vlan.present", "vlan.tci", 0},
		"ct_label.label":      {32, Ordinal, "", "ct_label", 96},
		"ct_mark.blocked":     {1, Ordinal, "", "ct_mark", 0},
		"flags.loopback":      {1, Ordinal, "", "flags", 0},
		"nd.sll":              {48, Ordinal, "nd_ns", "nd.sll", 0},
		"icmp4.frag_mtu":      {16, Nominal, "", "icmp4.frag_mtu", 0},
		"flags.use_snat_zone": {1, Ordinal, "", "flags", 11},
	}
	st := DefaultSymtab()
	for name, want := range tests {
		s := st.Lookup(name)
		if s == nil {
			t.Errorf("%s missing", name)
			continue
		}
		root, ofs := s.Root()
		got := sym{s.Width, s.Level, s.Prereqs, root.Name, ofs}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s (-want +got):\n%s", name, d)
		}
	}
	for _, absent := range []string{"reg10", "reg15", "xreg5", "xxreg2", "ct_label.foo"} {
		if st.Lookup(absent) != nil {
			t.Errorf("%s should not exist in 23.03", absent)
		}
	}
}

func TestWarnings(t *testing.T) {
	type w struct {
		Pos  int
		Kind WarningKind
	}
	tests := []struct {
		in   string
		want []w
	}{
		{"ip4 && ip4.src == 10.0.0.0/8", nil},
		{"ip4 && ip4.src == 10.0.0.1/24", []w{{18, HostBits}}},
		{"ip4.src == 10.0.0.1", []w{{0, MissingPrereq}}},
		{"ct.new", []w{{0, MissingPrereq}}},
		{"ct.trk && ct.new", nil},
		{"ct.trk && (ct.new || ct.est)", nil},
		{"tcp && udp", []w{{7, Contradiction}}},
		{"ip4 && ip6", []w{{7, Contradiction}}},
		{"tcp && tcp.dst == 80 && udp", []w{{24, Contradiction}}},
		{"reg0[0..3] == 0xff", []w{{14, SliceOverflow}}},
		{"!reg0", []w{{0, NegatedMultibit}}},
		{"ip4 && ip4.src == $as_empty", []w{{18, EmptySet}}},
		{"ip6 && ip.ttl == 255", nil},
		{"nd && nd.target == ::1", nil},
		{"vlan.present && vlan.vid == 5", nil},
	}
	for _, tc := range tests {
		e, err := Parse(tc.in, corpusResolver{})
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		var got []w
		for _, x := range e.Warnings {
			got = append(got, w{x.Pos, x.Kind})
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("warnings for %q (-want +got):\n%s\n%v", tc.in, d, e.Warnings)
		}
	}
}

func TestEval(t *testing.T) {
	m := NewMicroflow()
	for k, v := range map[string]any{
		"inport": "lsp1", "eth.src": "00:00:00:00:00:01", "eth.type": 0x800,
		"ip.proto": 6, "ip4.src": "10.0.0.1", "ip4.dst": "192.168.1.7", "tcp.dst": 80,
		"ct.trk": true, "ct.est": 1, "reg0[16]": 1, "ct_mark.blocked": 0, "ct_label.label": 42,
	} {
		if err := m.Set(k, v); err != nil {
			t.Fatalf("Set(%q, %v): %v", k, v, err)
		}
	}
	tests := []struct {
		in   string
		want bool
	}{
		{"ip4 && tcp", true},
		{"udp", false},
		{"ip6", false},
		{`inport == "lsp1"`, true},
		{`inport == {"lsp2", "lsp1"}`, true},
		{`inport == @pg1`, true},
		{`outport == @pg1`, false},
		{"tcp.dst == 80", true},
		{"tcp.dst == {22, 443}", false},
		{"tcp.dst != {22, 443}", true},
		{"!(tcp.dst == {22, 443})", true},
		{"udp.dst == 80", false},    // prerequisite udp fails
		{"!(udp.dst == 80)", false}, // negation does not cover prerequisites
		{"1000 <= tcp.dst <= 2000", false},
		{"!(1000 <= tcp.dst <= 2000)", true},
		{"tcp.dst < 81 && tcp.dst > 79", true},
		{"ip4.src == 10.0.0.0/8", true},
		{"ip4.src == $as1", true},
		{"ip4.dst == $as1", true},
		{"ip4.src != $as1", false},
		{"ip4.src == $as_empty", false},
		{"ip4.src != $as_empty", true},
		{"ct.est && !ct.new", true},
		{"ct.new", false},
		{"ct_mark.blocked == 0", true},
		{"ct_label.label == 42", true},
		{"ct_label[96..127] == 42", true},
		{"reg0[16]", true},
		{"xxreg0[112] == 1", true},
		{"reg0 == 0x10000", true},
		{"!reg0", false},
		{"eth.src == 00:00:00:00:00:01", true},
		{"eth.bcast", false},
		{"!eth.bcast", true},
		{"is_chassis_resident(\"x\")", true},
		{"!is_chassis_resident(\"x\")", false},
		{"0 || 1", true},
		{"ip", true},
		{"icmp", false},
		{"ip4.mcast", false},
	}
	for _, tc := range tests {
		e, err := Parse(tc.in, corpusResolver{})
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		got, err := Eval(e, m, corpusResolver{})
		if err != nil {
			t.Errorf("Eval(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("Eval(%q) = %v, want %v (microflow %s)", tc.in, got, tc.want, m)
		}
	}
	if _, err := Eval(mustExpr(t, "ip4.src == $as1"), m, nil); err == nil {
		t.Errorf("Eval of $as1 with nil resolver succeeded")
	}
}

func mustExpr(t *testing.T, s string) *Expr {
	t.Helper()
	e, err := Parse(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestMicroflowSetGet(t *testing.T) {
	m := NewMicroflow()
	for _, tc := range []struct {
		name string
		v    any
	}{{"reg0[16]", 1}, {"ip4.src", "10.0.0.1"}, {"ip6.dst", "fe80::1"}, {"tcp", true}, {"ct.new", true}, {"inport", "p"}} {
		if err := m.Set(tc.name, tc.v); err != nil {
			t.Fatalf("Set(%q): %v", tc.name, err)
		}
	}
	got := map[string]string{}
	for _, n := range []string{"reg0", "xxreg0[112]", "ip4.src", "ip.proto", "ct_state", "inport"} {
		v, err := m.Get(n)
		if err != nil {
			t.Fatal(err)
		}
		switch v := v.(type) {
		case *big.Int:
			got[n] = v.String()
		case string:
			got[n] = v
		}
	}
	want := map[string]string{"reg0": "65536", "xxreg0[112]": "1", "ip4.src": "167772161", "ip.proto": "6", "ct_state": "1", "inport": "p"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Get (-want +got):\n%s", d)
	}
	for _, bad := range []struct {
		name string
		v    any
	}{{"tcp.dst", 70000}, {"inport", 1}, {"nosuch", 1}, {"ip4.src", "garbage"}, {"tcp", false}, {"reg0[40]", 1}} {
		if err := m.Set(bad.name, bad.v); err == nil {
			t.Errorf("Set(%q, %v) succeeded", bad.name, bad.v)
		}
	}
}

func TestParseMicroflow(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr error
	}{
		{`inport == "lsp1" && eth.src == 00:00:00:00:00:01 && ip4.src == 10.0.0.1 && tcp.dst == 80`,
			`eth.src == 00:00:00:00:00:01 && eth.type == 0x800 && inport == "lsp1" && ip.proto == 6 && ip4.src == 10.0.0.1 && tcp.dst == 0x50`, nil},
		{"ip6 && udp.dst == 53", "eth.type == 0x86dd && ip.proto == 0x11 && udp.dst == 0x35", nil},
		{"ct.est", "ct_state == 0x22", nil},
		{"ip4.src == 10.0.0.0/8 && ip4", "eth.type == 0x800 && ip4.src == 10.0.0.0", nil},
		{"tcp.dst == 80", "", ErrAmbiguous},
		{"ip4 && tcp.dst > 1024", "", ErrAmbiguous},
		{"ip4 && tcp.dst == {80, 443}", "", ErrAmbiguous},
		{"ip4 && ip6", "", ErrContradictory},
		{"tcp && ip4 && udp.dst == 1", "", ErrContradictory},
		{"0", "", ErrContradictory},
	}
	for _, tc := range tests {
		m, err := ParseMicroflow(tc.in, nil)
		if tc.wantErr != nil {
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("ParseMicroflow(%q) error = %v, want %v", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseMicroflow(%q): %v", tc.in, err)
			continue
		}
		if d := cmp.Diff(tc.want, m.String()); d != "" {
			t.Errorf("ParseMicroflow(%q) (-want +got):\n%s", tc.in, d)
		}
		if ok, err := Eval(mustExpr(t, tc.in), m, nil); err != nil || !ok {
			t.Errorf("microflow of %q does not satisfy it: %v %v", tc.in, ok, err)
		}
	}
}

// TestDialectTemplates checks template expansion per release: 23.03
// expands an undefined variable to its name, 25.03+ reject the match
// without OVN's message (Note names the variable); a defined one expands
// in both.
func TestDialectTemplates(t *testing.T) {
	defined := map[string]string{"port": `"lsp1"`, "proto": "tcp", "ip4": "ip4"}
	for _, tc := range []struct {
		d       *Dialect
		s       string
		wantErr string // "" valid; else Error.Msg, or "note:" + the variable
		ofs     int
	}{
		{OVN2303(), `inport == ^port && ^proto`, "", 0},
		{dialectOf(t, release.MustLookup("26.03.1")), `inport == ^port && ^proto`, "", 0},
		{OVN2303(), `^ip4 && ^nope == 1`, "Syntax error at `nope' expecting field name.", 8},
		{dialectOf(t, release.MustLookup("25.03.0")), `^ip4 && ^nope == 1`, "note:^nope", 8},
		{dialectOf(t, release.MustLookup("26.03.1")), `ip4 && inport == "^nope"`, "", 0}, // inside a string: no template
	} {
		_, err := tc.d.ParseWithTemplates(tc.s, defined, nil)
		e, _ := err.(*Error)
		switch {
		case tc.wantErr == "":
			if err != nil {
				t.Errorf("%s %q: %v", tc.d, tc.s, err)
			}
		case e == nil:
			t.Errorf("%s %q: %v, want an *Error", tc.d, tc.s, err)
		case e.Offset != tc.ofs:
			t.Errorf("%s %q: offset %d, want %d", tc.d, tc.s, e.Offset, tc.ofs)
		case strings.HasPrefix(tc.wantErr, "note:"):
			if e.Msg != "" || !strings.Contains(e.Note, tc.wantErr[5:]+" is not defined") {
				t.Errorf("%s %q: %v, want no OVN message and a note on %s", tc.d, tc.s, err, tc.wantErr[5:])
			}
		case e.Msg != tc.wantErr:
			t.Errorf("%s %q: %v, want %q", tc.d, tc.s, err, tc.wantErr)
		}
	}
}
