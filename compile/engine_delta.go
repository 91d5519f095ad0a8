package compile

import (
	"slices"
	"strings"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/aclc/aclc/lflow"
)

// What one batch of NB row changes does to the flows: the delta the engine
// returns, how to apply it to a listing, and how it is computed per switch.

// RowChange is one NB row as it now is: Row is the new content of row
// UUID of Table, or nil when the row was deleted. The engine takes
// ownership of Row.
type RowChange struct {
	Table string
	UUID  string
	Row   model.Model
}

// RowOp says what a change did to a row, for the delta's record of the NB
// transaction that caused it.
type RowOp struct {
	Table string `json:"table"`
	UUID  string `json:"uuid"`
	// Op is "insert", "update" or "delete".
	Op string `json:"op"`
}

// DatapathDelta is how the flows of one logical switch changed.
type DatapathDelta struct {
	UUID  string `json:"uuid"`
	Name  string `json:"name"`
	Name2 string `json:"name2,omitempty"`
	// Created: the switch is new; Deleted: it is gone (Removed holds all
	// its flows).
	Created bool `json:"created,omitempty"`
	Deleted bool `json:"deleted,omitempty"`
	// Added and Removed are in lflow-list order.
	Added   []lflow.Flow `json:"-"`
	Removed []lflow.Flow `json:"-"`
}

// ConntrackRelease names a switch that needed conntrack before a change
// batch (a stateful ACL or a load balancer VIP) and no longer does, with
// the names of its ports.
type ConntrackRelease struct {
	Switch string
	Ports  []string
}

// Delta is what one change batch did to the flows.
type Delta struct {
	// Datapaths holds the switches whose flows, name or existence
	// changed, sorted by UUID.
	Datapaths []DatapathDelta
	// Changes are the NB row changes of the batch (rows whose content did
	// not change are left out), sorted by table and UUID.
	Changes []RowOp
	// Recompiled is how many datapaths were rebuilt; Full is true when
	// the batch changed an NB_Global option and every switch was rebuilt.
	Recompiled int
	Full       bool
	// Patched is how many of the Recompiled datapaths were patched ACL by
	// ACL rather than rebuilt.
	Patched int
	// ConntrackReleased lists the switches that stopped needing conntrack.
	ConntrackReleased []ConntrackRelease
	// DeletedPorts are the names of the logical switch ports deleted by
	// the batch.
	DeletedPorts []string
}

// Empty reports whether the delta changes no flow.
func (d *Delta) Empty() bool { return len(d.Datapaths) == 0 }

// NumAdded and NumRemoved count the flows added and removed.
func (d *Delta) NumAdded() int {
	n := 0
	for _, dp := range d.Datapaths {
		n += len(dp.Added)
	}
	return n
}

// NumRemoved counts the flows the delta removes.
func (d *Delta) NumRemoved() int {
	n := 0
	for _, dp := range d.Datapaths {
		n += len(dp.Removed)
	}
	return n
}

// Apply returns l with d applied: datapaths are matched by UUID, flows by
// their Key. l is not modified; untouched datapaths are shared.
func (d *Delta) Apply(l *lflow.Listing) *lflow.Listing {
	byID := make(map[string]*lflow.Datapath, len(l.Datapaths))
	for _, dp := range l.Datapaths {
		byID[dp.UUID] = dp
	}
	for _, dd := range d.Datapaths {
		old := byID[dd.UUID]
		if dd.Deleted {
			delete(byID, dd.UUID)
			continue
		}
		nd := &lflow.Datapath{Name: dd.Name, Name2: dd.Name2, UUID: dd.UUID}
		rm := make(map[lflow.Key]bool, len(dd.Removed))
		for _, f := range dd.Removed {
			rm[f.Key()] = true
		}
		if old != nil {
			for _, f := range old.Flows {
				if !rm[f.Key()] {
					nd.Flows = append(nd.Flows, f)
				}
			}
		}
		nd.Flows = append(nd.Flows, dd.Added...)
		nd.Sort()
		byID[dd.UUID] = nd
	}
	out := &lflow.Listing{Datapaths: make([]*lflow.Datapath, 0, len(byID))}
	for _, dp := range byID {
		out.Datapaths = append(out.Datapaths, dp)
	}
	sortDatapaths(out)
	return out
}

func sortDatapaths(l *lflow.Listing) {
	slices.SortFunc(l.Datapaths, func(a, b *lflow.Datapath) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.UUID, b.UUID)
	})
}

// diffDatapath compares the old and new flows of one switch (either may be
// nil) by a merge of the two sorted flow lists.
func diffDatapath(id string, old, cur *dpFlows) (DatapathDelta, bool) {
	dd := DatapathDelta{UUID: id}
	switch {
	case old == nil && cur == nil:
		return dd, false
	case old == nil:
		dd.Name, dd.Name2, dd.Created = cur.name, cur.name2, true
		dd.Added = cur.flows.appendTo(nil)
		return dd, true
	case cur == nil:
		dd.Name, dd.Name2, dd.Deleted = old.name, old.name2, true
		dd.Removed = old.flows.appendTo(nil)
		return dd, true
	}
	dd.Name, dd.Name2 = cur.name, cur.name2
	a, b := cursor{fs: old.flows}, cursor{fs: cur.flows}
	for a.ok() && b.ok() {
		switch c := lflow.Compare(a.flow(), b.flow()); {
		case c == 0:
			a.next()
			b.next()
		case c < 0:
			dd.Removed = append(dd.Removed, a.flow())
			a.next()
		default:
			dd.Added = append(dd.Added, b.flow())
			b.next()
		}
	}
	for ; a.ok(); a.next() {
		dd.Removed = append(dd.Removed, a.flow())
	}
	for ; b.ok(); b.next() {
		dd.Added = append(dd.Added, b.flow())
	}
	changed := len(dd.Added) > 0 || len(dd.Removed) > 0 || old.name != cur.name || old.name2 != cur.name2
	return dd, changed
}
