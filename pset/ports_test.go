package pset

import (
	"slices"
	"testing"
)

// TestAssignPortAgainstBrute checks PortIs and AssignPort packet by
// packet on the brute-force domain: after `outport = "p1";' a packet is
// in the set exactly when its outport is p1 and it, with some outport
// (a port of the domain or the other port), was in the set before; after
// `outport = <none>' likewise with the other port. PortIs("outport", "")
// is the complement of the domain's ports.
func TestAssignPortAgainstBrute(t *testing.T) {
	fx := newBruteFixture(t, 15, 4)
	m := fx.m
	f := m.Space().byName["outport"]
	withCode := func(a []bool, c int) []bool {
		b := slices.Clone(a)
		for i := 0; i < f.width; i++ {
			b[f.level(i)] = c>>i&1 == 1
		}
		return b
	}
	none, err := m.PortIs("outport", "")
	if err != nil {
		t.Fatal(err)
	}
	p1, _ := m.PortIs("outport", "p1")
	p2, _ := m.PortIs("outport", "p2")
	if none != m.Not(m.Or(p1, p2)) {
		t.Error(`PortIs("outport", "") is not the complement of the domain's ports`)
	}
	// the random matches, and some on outport itself
	c := m.Converter(bruteResolver)
	for _, text := range []string{`outport == "p1" && tcp`, `outport == @pg || ip6`, `outport == "p2" || (outport == "p1" && udp)`} {
		s, err := c.Match(text)
		if err != nil {
			t.Fatal(err)
		}
		fx.cases = append(fx.cases, bruteCase{text: text, set: s})
	}
	changed := 0
	for _, bc := range fx.cases {
		for code, port := range []string{"p1", "p2", ""} {
			a, err := m.AssignPort(bc.set, "outport", port)
			if err != nil {
				t.Fatal(err)
			}
			for k, as := range fx.assigns {
				was := false
				for c := 0; c <= len(brutePorts); c++ {
					was = was || m.contains(bc.set, withCode(as, c))
				}
				for c := 0; c <= len(brutePorts); c++ {
					x := withCode(as, c)
					if got, want := m.contains(a, x), was && c == code; got != want {
						t.Fatalf("%s: after outport = %q: packet %s with outport code %d: in the set %v, want %v", bc.text, port, fx.packets[k], c, got, want)
					}
				}
			}
			if a != bc.set {
				changed++
			}
		}
	}
	if changed == 0 {
		t.Error("no assignment changed a set")
	}
	for _, bad := range [][2]string{{"tcp.dst", "p1"}, {"outport", "gone"}, {"nope", ""}} {
		if _, err := m.AssignPort(all, bad[0], bad[1]); err == nil {
			t.Errorf("AssignPort(%s, %q): no error", bad[0], bad[1])
		}
	}
}
