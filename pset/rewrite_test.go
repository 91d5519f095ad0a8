package pset

import (
	"errors"
	"testing"

	"github.com/aclc/aclc/acl/expr"
)

// TestRewrites checks that equivalent matches give the same node (De
// Morgan, ranges and their values, CIDRs and masks, relational operators
// and their complements) and that matches that differ do not.
func TestRewrites(t *testing.T) {
	sp, err := NewSpace(expr.OVN2303(), brutePorts, "other")
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(sp)
	c := m.Converter(bruteResolver)
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{`!(tcp.dst == 80 && ip4.src == 10.0.0.1)`, `!(tcp.dst == 80) || !(ip4.src == 10.0.0.1)`, true},
		{`tcp.dst == {80, 81, 82, 83}`, `80 <= tcp.dst <= 83`, true},
		{`tcp.dst == {80, 81, 82, 83}`, `tcp.dst == 0x50/0xfffc`, true},
		{`tcp.dst == {80, 81, 82}`, `80 <= tcp.dst <= 83`, false},
		{`ip4.src == 10.0.0.0/8`, `ip4.src == 10.0.0.0/255.0.0.0`, true},
		{`ip4.src == 10.0.0.0/8`, `ip4.src[24..31] == 10`, true},
		{`ip4.src < 10.0.0.2`, `ip4.src <= 10.0.0.1`, true},
		{`ip4.src < 10.0.0.2`, `ip4 && !(ip4.src >= 10.0.0.2)`, true},
		{`tcp.dst != 80`, `!(tcp.dst == 80)`, true},
		{`tcp.dst != 80`, `tcp && tcp.dst != 80`, true},
		{`!(tcp.dst == 80)`, `udp || !(tcp.dst == 80)`, false}, // `!' does not negate prerequisites
		{`ct.est`, `ct.trk && ct_state[1] == 1`, true},
		{`ip`, `ip4 || ip6`, true},
		{`tcp.dst >= 1024`, `1024 <= tcp.dst <= 65535`, true},
		{`ip4.src == $as`, `ip4.src == {10.0.0.1, 10.0.0.2}`, true},
		{`ip4.src != $empty`, `1`, true},
		{`inport == @pg`, `inport == "p1"`, true},
		{`inport == "gone"`, `0`, true}, // no such port: never equal (ovn-trace)
		{`inport == {"p1", "p2"}`, `inport == "p1" || inport == "p2"`, true},
		{`inport == {"p1", "p2"}`, `1`, false}, // the other port
	} {
		a, err := c.Match(tc.a)
		if err != nil {
			t.Fatalf("%s: %v", tc.a, err)
		}
		b, err := c.Match(tc.b)
		if err != nil {
			t.Fatalf("%s: %v", tc.b, err)
		}
		if m.Equal(a, b) != tc.same {
			t.Errorf("%s vs %s: equal %v, want %v", tc.a, tc.b, m.Equal(a, b), tc.same)
		}
	}
}

// TestNotExact checks the constructs that are not approximated:
// is_chassis_resident without a residency, and a port name the domain
// lacks that may be a port.
func TestNotExact(t *testing.T) {
	sp, err := NewSpace(expr.OVN2303(), brutePorts, "")
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(sp)
	r := expr.MapResolver{} // every name may be a port
	c := m.Converter(r)
	for _, text := range []string{`is_chassis_resident("p1") && ip4`, `inport == "p3"`, `ip4 || outport == {"p1", "p9"}`} {
		_, err := c.Match(text)
		var ne *NotExactError
		if !errors.As(err, &ne) {
			t.Errorf("%s: %v, want a NotExactError", text, err)
		}
	}
	c.Residency = r // ovn-trace's: true for any port
	s, err := c.Match(`is_chassis_resident("p1") && ip4`)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := c.Match(`ip4`); s != want {
		t.Error("is_chassis_resident with a residency that says true is not the rest of the match")
	}
}
