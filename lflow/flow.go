package lflow

import (
	"cmp"
	"slices"
	"strings"
)

// Flow is one logical flow of one datapath, as ovn-northd writes it into the
// Southbound Logical_Flow table.
type Flow struct {
	Stage    Stage
	Priority int
	Match    string
	Actions  string
	// Source is the UUID of the NB row the flow was built from (an ACL, a
	// load balancer, DHCP options, ...) or "" for the fixed flows of a
	// stage. Like northd's stage-hint it is not part of the flow's identity.
	Source string
}

// Key identifies a flow within a datapath: two flows with equal keys are
// the same logical flow (northd keeps only one of them).
type Key struct {
	Stage    Stage
	Priority int
	Match    string
	Actions  string
}

// Key returns the identity of f.
func (f Flow) Key() Key { return Key{f.Stage, f.Priority, f.Match, f.Actions} }

// Compare orders flows the way `ovn-sbctl lflow-list` prints them: ingress
// before egress, table ascending, priority descending, then match, then
// actions, byte-wise.
func Compare(a, b Flow) int {
	if a.Stage != b.Stage {
		// Within a layout, kinds are numbered in pipeline and table
		// order.
		return cmp.Compare(a.Stage.Kind(), b.Stage.Kind())
	}
	if a.Priority != b.Priority {
		return cmp.Compare(b.Priority, a.Priority)
	}
	if c := strings.Compare(a.Match, b.Match); c != 0 {
		return c
	}
	return strings.Compare(a.Actions, b.Actions)
}

// Datapath is one logical switch with its flows.
type Datapath struct {
	// Name is the logical switch name (SB external_ids:name).
	Name string
	// Name2 is the NB external_ids:neutron:network_name, if any; lflow-list
	// prints it as `"name" aka "name2"`.
	Name2 string
	// UUID identifies the datapath. aclc prints the NB Logical_Switch UUID
	// here; ovn-sbctl prints the SB Datapath_Binding UUID, whose
	// external_ids:logical-switch is that same NB UUID.
	UUID  string
	Flows []Flow
}

// Sort puts the flows in lflow-list order and removes exact duplicates
// (same stage, priority, match and actions), as northd does.
func (d *Datapath) Sort() {
	slices.SortFunc(d.Flows, Compare)
	d.Flows = slices.CompactFunc(d.Flows, func(a, b Flow) bool { return a.Key() == b.Key() })
}

// Listing is the flows of several datapaths, as `ovn-sbctl lflow-list`
// prints them.
type Listing struct {
	Datapaths []*Datapath
}

// Sort orders datapaths by name then UUID (as lflow-list does) and the
// flows of each datapath.
func (l *Listing) Sort() {
	slices.SortFunc(l.Datapaths, func(a, b *Datapath) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.UUID, b.UUID)
	})
	for _, d := range l.Datapaths {
		d.Sort()
	}
}

// Filter returns a listing with only the datapaths named datapath (all when
// "") and only the flows for which keep returns true (all when nil).
// Datapaths left without flows are dropped.
func (l *Listing) Filter(datapath string, keep func(Flow) bool) *Listing {
	out := &Listing{}
	for _, d := range l.Datapaths {
		if datapath != "" && d.Name != datapath && d.UUID != datapath {
			continue
		}
		nd := &Datapath{Name: d.Name, Name2: d.Name2, UUID: d.UUID}
		for _, f := range d.Flows {
			if keep == nil || keep(f) {
				nd.Flows = append(nd.Flows, f)
			}
		}
		if len(nd.Flows) > 0 {
			out.Datapaths = append(out.Datapaths, nd)
		}
	}
	return out
}

// NumFlows returns the number of flows over all datapaths.
func (l *Listing) NumFlows() int {
	n := 0
	for _, d := range l.Datapaths {
		n += len(d.Flows)
	}
	return n
}
