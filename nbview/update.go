package nbview

import (
	"slices"
	"strings"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// Keeping a view current: the incremental engine changes rows of the
// Snapshot one batch at a time; for each changed row it calls Track with
// the old row (add false) and the new one (add true), changes the
// Snapshot, and then calls Refresh with what the batch touched. Refresh
// recomputes exactly the facts New would compute for those, from the
// reverse references Track keeps.

// Set is a set of UUIDs or names.
type Set = map[string]struct{}

// Refs is the (few) rows that reference one row, in no order. A slice,
// not a map: an index holds one per ACL, port, ..., and most hold one
// element.
type Refs []string

// Has reports whether r holds v.
func (r Refs) Has(v string) bool { return slices.Contains(r, v) }

// Sorted returns a sorted copy of r.
func (r Refs) Sorted() []string {
	out := slices.Clone(r)
	slices.Sort(out)
	return out
}

// RefIndex maps a row UUID (or a name) to the rows that reference it.
type RefIndex map[string]Refs

// Add records that v references k.
func (m RefIndex) Add(k, v string) {
	r := m[k]
	if !r.Has(v) {
		m[k] = append(r, v)
	}
}

// Del forgets that v references k.
func (m RefIndex) Del(k, v string) {
	r := m[k]
	i := slices.Index(r, v)
	if i < 0 {
		return
	}
	if len(r) == 1 {
		delete(m, k)
		return
	}
	r[i] = r[len(r)-1]
	m[k] = r[:len(r)-1]
}

// reverse holds the reverse references the view's facts depend on.
type reverse struct {
	portSwitches RefIndex // LSP -> switches listing it
	portPGs      RefIndex // LSP -> port groups listing it
	aclSwitches  RefIndex // ACL -> switches listing it
	aclPGs       RefIndex // ACL -> port groups listing it
	lrpRouters   RefIndex // LRP -> routers listing it
	lrpsByName   RefIndex // LRP name -> LRPs
	metersByName RefIndex // meter name -> meters
	asByName     RefIndex // address set name -> address sets
	pgsByName    RefIndex // port group name -> port groups
}

// NewIncremental is New with the reverse references Track and Refresh
// need.
func NewIncremental(s *nbschema.Snapshot) *View { return NewIncrementalFor(s, s.Release) }

// NewIncrementalFor is NewIncremental for the northd of release r (nil:
// s.Release).
func NewIncrementalFor(s *nbschema.Snapshot, r *release.Release) *View {
	v := NewFor(s, r)
	v.owners() // Refresh keeps it current
	v.refs = &reverse{RefIndex{}, RefIndex{}, RefIndex{}, RefIndex{}, RefIndex{}, RefIndex{}, RefIndex{}, RefIndex{}, RefIndex{}}
	for _, t := range nbschema.Tables() {
		for id, row := range t.Rows(s) {
			v.Track(id, row, true)
		}
	}
	return v
}

// Track adds (add) or removes the reverse references of row id.
func (v *View) Track(id string, row model.Model, add bool) {
	op := func(m RefIndex, k string) {
		if add {
			m.Add(k, id)
		} else {
			m.Del(k, id)
		}
	}
	x := v.refs
	switch r := row.(type) {
	case *nbdb.LogicalSwitch:
		for _, p := range r.Ports {
			op(x.portSwitches, p)
		}
		for _, a := range r.ACLs {
			op(x.aclSwitches, a)
		}
	case *nbdb.PortGroup:
		for _, p := range r.Ports {
			op(x.portPGs, p)
		}
		for _, a := range r.ACLs {
			op(x.aclPGs, a)
		}
		op(x.pgsByName, r.Name)
	case *nbdb.Meter:
		op(x.metersByName, r.Name)
	case *nbdb.AddressSet:
		op(x.asByName, r.Name)
	case *nbdb.LogicalRouter:
		for _, p := range r.Ports {
			op(x.lrpRouters, p)
		}
	case *nbdb.LogicalRouterPort:
		op(x.lrpsByName, r.Name)
	}
}

// SwitchesOfPort returns the switches that list port p (existing or not).
func (v *View) SwitchesOfPort(p string) Refs { return v.refs.portSwitches[p] }

// SwitchesOfACL returns the switches that list ACL a.
func (v *View) SwitchesOfACL(a string) Refs { return v.refs.aclSwitches[a] }

// PortGroupsOfACL returns the port groups that list ACL a.
func (v *View) PortGroupsOfACL(a string) Refs { return v.refs.aclPGs[a] }

// Touched is what a batch of row changes touched, as the facts see it.
type Touched struct {
	Switches Set
	// Membership: the batch touches switches, their ports or port
	// groups, so which port groups a switch has may change (not for
	// ACL-only batches).
	Membership bool
	Ports      Set // LSPs whose owner may change
	ACLs       Set // ACLs whose owner may change
	LRPNames   Set
	Meters     Set // meter names
	ASNames    Set // address set and port group (_ip4/_ip6) names
	PGNames    Set
}

// NewTouched returns an empty Touched.
func NewTouched() Touched {
	return Touched{Switches: Set{}, Ports: Set{}, ACLs: Set{}, LRPNames: Set{}, Meters: Set{}, ASNames: Set{}, PGNames: Set{}}
}

// Refresh recomputes the facts of what t touched, on the Snapshot as it
// is now, and returns the port group names that started or stopped
// existing.
func (v *View) Refresh(t Touched) (pgNamesChanged []string) {
	s, x := v.s, v.refs
	for p := range t.Ports {
		delete(v.portSwitch, p)
		if _, ok := s.Ports[p]; !ok {
			delete(v.multi, p)
			continue
		}
		var sws []string
		for _, sw := range x.portSwitches[p] {
			if _, ok := s.Switches[sw]; ok {
				sws = append(sws, sw)
			}
		}
		slices.Sort(sws)
		if o := v.owner(p, sws); o != "" {
			v.portSwitch[p] = o
		}
	}
	// A touched port's old name goes (it may be deleted, renamed or no
	// longer owned) before the names of the touched ports that are owned
	// now come back.
	for p := range t.Ports {
		if old, ok := v.portName[p]; ok {
			if v.portByName[old] == p {
				delete(v.portByName, old)
			}
			delete(v.portName, p)
		}
	}
	for p := range t.Ports {
		if lsp, ok := s.Ports[p]; ok {
			if _, ok := v.portSwitch[p]; ok {
				v.portByName[lsp.Name] = p
				v.portName[p] = lsp.Name
			}
		}
	}
	// Port groups per switch, sorted by UUID like New (they only change
	// when the batch touches switches, ports or port groups).
	for sw := range t.Switches {
		if !t.Membership {
			break // ACL-only batch
		}
		ls, ok := s.Switches[sw]
		if !ok {
			delete(v.switchPGs, sw)
			continue
		}
		pgs := Set{}
		for _, p := range ls.Ports {
			if v.portSwitch[p] != sw {
				continue
			}
			for _, pg := range x.portPGs[p] {
				if _, ok := s.PortGroups[pg]; ok {
					pgs[pg] = struct{}{}
				}
			}
		}
		if len(pgs) == 0 {
			delete(v.switchPGs, sw)
			continue
		}
		list := make([]string, 0, len(pgs))
		for pg := range pgs {
			list = append(list, pg)
		}
		slices.Sort(list)
		v.switchPGs[sw] = list
	}
	for name := range t.LRPNames {
		delete(v.lrpNames, name)
		for _, lrp := range x.lrpsByName[name] {
			if _, ok := s.RouterPorts[lrp]; !ok {
				continue
			}
			for _, r := range x.lrpRouters[lrp] {
				if _, ok := s.Routers[r]; ok {
					v.lrpNames[name] = true
				}
			}
		}
	}
	for name := range t.Meters {
		delete(v.fairMeters, name)
		for _, m := range x.metersByName[name].Sorted() {
			if mt, ok := s.Meters[m]; ok {
				v.fairMeters[name] = mt.Fair != nil && *mt.Fair
			}
		}
	}
	pgs := Set{} // port groups whose ACL facts may change
	for name := range t.PGNames {
		had := v.pgNames[name]
		delete(v.pgNames, name)
		for _, pg := range x.pgsByName[name] {
			pgs[pg] = struct{}{}
			if _, ok := s.PortGroups[pg]; ok {
				v.pgNames[name] = true
			}
		}
		if v.pgNames[name] != had {
			pgNamesChanged = append(pgNamesChanged, name)
		}
	}
	for name := range t.ASNames {
		delete(v.asNames, name)
		for _, as := range x.asByName[name] {
			if _, ok := s.AddressSets[as]; ok {
				v.asNames[name] = true
			}
		}
		for _, suffix := range []string{"_ip4", "_ip6"} {
			if pgName, ok := strings.CutSuffix(name, suffix); ok {
				for _, pg := range x.pgsByName[pgName] {
					if _, ok := s.PortGroups[pg]; ok {
						v.asNames[name] = true
					}
				}
			}
		}
	}
	for a := range t.ACLs {
		for _, pg := range x.aclPGs[a] {
			pgs[pg] = struct{}{}
		}
		delete(v.aclOwners, a)
		if _, ok := s.ACLs[a]; !ok {
			continue
		}
		// New: switches in UUID order, then port groups in UUID order;
		// the last owner wins.
		if ids := x.aclPGs[a].Sorted(); len(ids) > 0 {
			for i := len(ids) - 1; i >= 0; i-- {
				if pg, ok := s.PortGroups[ids[i]]; ok {
					v.aclOwners[a] = Owner{Table: nbdb.PortGroupTable, Name: pg.Name}
					break
				}
			}
		}
		if _, ok := v.aclOwners[a]; !ok {
			ids := x.aclSwitches[a].Sorted()
			for i := len(ids) - 1; i >= 0; i-- {
				if ls, ok := s.Switches[ids[i]]; ok {
					v.aclOwners[a] = Owner{Table: nbdb.LogicalSwitchTable, Name: ls.Name}
					break
				}
			}
		}
	}
	for id := range pgs {
		if pg, ok := s.PortGroups[id]; ok {
			v.pgFacts[id] = v.portGroupFacts(pg)
		} else {
			delete(v.pgFacts, id)
		}
	}
	slices.Sort(pgNamesChanged)
	return pgNamesChanged
}
