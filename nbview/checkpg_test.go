package nbview_test

import (
	"testing"

	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbview"
)

// TestCheckPortGroupIsSwitchPortGroups pins what lint's fast path relies
// on: a port group name is among SwitchPortGroupPorts(sw) exactly when
// CheckPortGroup(sw, name) is RefOK. Both generated shapes, every switch
// and port group, plus a name no row has.
func TestCheckPortGroupIsSwitchPortGroups(t *testing.T) {
	for _, shape := range []nbgen.Shape{nbgen.ShapeConsecutive, nbgen.ShapeCluster} {
		p := nbgen.Default()
		p.Shape, p.ACLs, p.Switches, p.PortGroups, p.AddressSets = shape, 1000, 30, 150, 50
		s := nbgen.Generate(p)
		v := nbview.New(s)
		names := []string{"no_such_group"}
		for _, pg := range s.PortGroups {
			names = append(names, pg.Name)
		}
		present := 0
		for _, sw := range nbschema.SortedKeys(s.Switches) {
			on := v.SwitchPortGroupPorts(sw)
			for _, n := range names {
				_, listed := on[n]
				if ok := v.CheckPortGroup(sw, n) == nbview.RefOK; ok != listed {
					t.Fatalf("%s: switch %s, @%s: CheckPortGroup RefOK %v, listed by SwitchPortGroupPorts %v", shape, sw, n, ok, listed)
				}
				if listed {
					present++
				}
			}
		}
		if present == 0 || present == len(names)*len(s.Switches) {
			t.Fatalf("%s: %d present pairs: the test checks nothing", shape, present)
		}
	}
}
