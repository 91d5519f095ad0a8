package pset

import (
	"testing"

	"github.com/aclc/aclc/acl/expr"
)

// TestDomainPorts checks DomainPorts packet by packet: it holds a packet
// exactly when its inport and outport are both ports of the domain, and
// it is the set of `inport == {...} && outport == {...}' over the domain.
func TestDomainPorts(t *testing.T) {
	d := expr.OVN2303()
	for _, ports := range [][]string{{"p1"}, {"p1", "p2", "p3"}, {"p1", "p2", "p3", "p4", "p5"}} {
		sp, err := NewSpace(d, ports, "")
		if err != nil {
			t.Fatal(err)
		}
		m := NewManager(sp)
		dom := m.DomainPorts()
		names := append(append([]string{}, ports...), "other")
		for _, in := range names {
			for _, out := range names {
				mf := d.NewMicroflow()
				if err := mf.Set("inport", in); err != nil {
					t.Fatal(err)
				}
				if err := mf.Set("outport", out); err != nil {
					t.Fatal(err)
				}
				want := in != "other" && out != "other"
				if got := m.Contains(dom, mf); got != want {
					t.Errorf("ports %v: inport %s outport %s: in DomainPorts %v, want %v", ports, in, out, got, want)
				}
			}
		}
		list := ""
		for i, p := range ports {
			if i > 0 {
				list += ", "
			}
			list += `"` + p + `"`
		}
		c := m.Converter(expr.MapResolver{})
		s, err := c.Match("inport == {" + list + "} && outport == {" + list + "}")
		if err != nil {
			t.Fatal(err)
		}
		if s != dom {
			t.Errorf("ports %v: DomainPorts is not the set of inport and outport in the domain", ports)
		}
	}
}
