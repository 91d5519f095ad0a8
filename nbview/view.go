// Package nbview is ovn-northd's view of the NB for the ACL stages: the
// facts northd derives from the NB rows before it writes a flow. Which
// switch owns a port, which port groups are present on a switch, which
// ACLs apply there, whether the switch is stateful or has load balancer
// VIPs, its load balancers with their VIPs parsed, its router and localnet
// ports, each ACL's owner, stage and verdict, and what $name and @name
// resolve to on each switch.
//
// Each rule is stated here once. compile, lint, trace and the match
// resolver read a View; none derives these facts again. A View is built
// once from a Snapshot by New and is read-only afterwards, except through
// Track and Refresh, which the incremental engine calls to keep it current
// with the rows it changes.
//
// The facts are release-neutral; a fact that differs between OVN releases
// is one more field, filled by the release's rule.
package nbview

import (
	"slices"
	"strings"
	"sync"

	"github.com/aclc/aclc/internal/par"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// View is northd's view of one Snapshot.
type View struct {
	s *nbschema.Snapshot
	// rel is the release whose northd the view is of (the snapshot's
	// unless NewFor says otherwise): the facts that differ between
	// releases (MaxTier) follow it.
	rel *release.Release

	portSwitch map[string]string   // LSP UUID -> the switch that owns it
	portByName map[string]string   // LSP name -> LSP UUID (owned ports)
	portName   map[string]string   // LSP UUID -> its name in portByName
	switchPGs  map[string][]string // switch UUID -> port groups with an owned member port there, by UUID
	lrpNames   map[string]bool     // names of LRPs that belong to a router
	fairMeters map[string]bool     // meter name -> fair
	asNames    map[string]bool     // address set names, plus <pg>_ip4/_ip6
	pgNames    map[string]bool     // port group names
	aclOwners  map[string]Owner    // ACL UUID -> the row that lists it (built on first use: owners)
	ownersOnce sync.Once
	pgFacts    map[string]pgFacts  // port group UUID -> its ACL facts
	multi      map[string][]string // LSP UUID -> the existing switches listing it, when more than one

	// Reverse references, kept (by Track) whether or not the target row
	// exists; only an incremental view has them.
	refs *reverse
}

// pgFacts are the facts of one port group's ACL list.
type pgFacts struct {
	hasACLs, hasStateful bool
	maxTier              Tiers       // the highest tier of its ACLs per stage
	scan                 aclScan     // where northd's ACL flag scan stops in it (tiers.go)
	acls                 []*nbdb.ACL // its ACLs that exist, in column order
}

// New builds the view of s for its release (s.Release). The view reads s;
// s must not change while the view is in use, except through Track and
// Refresh.
func New(s *nbschema.Snapshot) *View { return NewFor(s, s.Release) }

// NewFor is New for the northd of release r (nil: s.Release), which may
// differ from the snapshot's own (compile.Options.Release).
func NewFor(s *nbschema.Snapshot, r *release.Release) *View {
	if r == nil {
		r = s.Release
	}
	v := &View{
		s:          s,
		rel:        r,
		portSwitch: make(map[string]string, len(s.Ports)),
		portByName: make(map[string]string, len(s.Ports)),
		portName:   make(map[string]string, len(s.Ports)),
		switchPGs:  map[string][]string{},
		lrpNames:   map[string]bool{},
		fairMeters: map[string]bool{},
		asNames:    make(map[string]bool, len(s.AddressSets)+2*len(s.PortGroups)),
		pgNames:    make(map[string]bool, len(s.PortGroups)),
		pgFacts:    make(map[string]pgFacts, len(s.PortGroups)),
		multi:      map[string][]string{},
	}
	// The ports and the names are independent: build them concurrently.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); v.indexNames() }()
	v.indexPorts()
	wg.Wait()
	return v
}

// indexPorts fills portSwitch, portByName, multi and switchPGs.
func (v *View) indexPorts() {
	s := v.s
	// join_logical_ports: a port listed by two switches belongs to the
	// first in northd's datapath order (order.go); northd ignores the
	// other listings ("duplicate logical port"). listers holds the
	// switches listing a port, in UUID order, when there are several.
	listers := map[string][]string{}
	for _, id := range nbschema.SortedKeys(s.Switches) {
		ls := s.Switches[id]
		for _, p := range ls.Ports {
			if _, ok := s.Ports[p]; !ok {
				continue
			}
			first, listed := v.portSwitch[p]
			switch {
			case !listed:
				v.portSwitch[p] = id
			case first == id:
			case listers[p] == nil:
				listers[p] = []string{first, id}
			case !slices.Contains(listers[p], id):
				listers[p] = append(listers[p], id)
			}
		}
	}
	for p, sws := range listers {
		v.portSwitch[p] = v.owner(p, sws)
	}
	for p := range v.portSwitch {
		v.portByName[s.Ports[p].Name] = p
		v.portName[p] = s.Ports[p].Name
	}
	// seen[sw] is 1 + the index of the last port group found on sw.
	seen := make(map[string]int, len(s.Switches))
	for i, id := range nbschema.SortedKeys(s.PortGroups) {
		for _, p := range s.PortGroups[id].Ports {
			sw, ok := v.portSwitch[p]
			if !ok || seen[sw] == i+1 {
				continue
			}
			seen[sw] = i + 1
			v.switchPGs[sw] = append(v.switchPGs[sw], id)
		}
	}
}

// indexNames fills lrpNames, fairMeters, asNames, pgNames and pgFacts.
func (v *View) indexNames() {
	s := v.s
	for _, r := range s.Routers {
		for _, p := range r.Ports {
			if lrp, ok := s.RouterPorts[p]; ok {
				v.lrpNames[lrp.Name] = true
			}
		}
	}
	for _, m := range s.Meters {
		v.fairMeters[m.Name] = m.Fair != nil && *m.Fair
	}
	// The address set names are copied into one string: a lookup (one
	// per $name of every ACL in a compile) compares the key found, and
	// keys side by side in memory stay in the cache.
	ids := make([]string, 0, len(s.PortGroups))
	for id, pg := range s.PortGroups {
		ids = append(ids, id)
		v.pgNames[pg.Name] = true
	}
	names := make([]string, 0, len(s.AddressSets)+2*len(ids))
	for _, as := range s.AddressSets {
		names = append(names, as.Name)
	}
	for _, id := range ids {
		pg := s.PortGroups[id]
		names = append(names, pg.Name+"_ip4", pg.Name+"_ip6")
	}
	for _, name := range packed(names) {
		v.asNames[name] = true
	}
	// Every ACL of every port group: on every core.
	facts := make([]pgFacts, len(ids))
	par.For(len(ids), 64, func(i int) { facts[i] = v.portGroupFacts(s.PortGroups[ids[i]]) })
	for i, id := range ids {
		v.pgFacts[id] = facts[i]
	}
}

// packed returns names, copied into one string.
func packed(names []string) []string {
	n := 0
	for _, name := range names {
		n += len(name)
	}
	var b strings.Builder
	b.Grow(n)
	for _, name := range names {
		b.WriteString(name)
	}
	all := b.String()
	out := make([]string, len(names))
	for i, name := range names {
		out[i], all = all[:len(name)], all[len(name):]
	}
	return out
}

// owners returns the owner of every ACL, building the index on first use
// (only problems and reports name owners; a compile without problems
// never needs it).
func (v *View) owners() map[string]Owner {
	v.ownersOnce.Do(func() {
		s := v.s
		v.aclOwners = make(map[string]Owner, len(s.ACLs))
		// An ACL listed by a switch and a port group (or by two port
		// groups) is named after the last: switches in UUID order, then
		// port groups in UUID order.
		for _, id := range nbschema.SortedKeys(s.Switches) {
			ls := s.Switches[id]
			for _, a := range ls.ACLs {
				v.aclOwners[a] = Owner{Table: nbdb.LogicalSwitchTable, Name: ls.Name}
			}
		}
		for _, id := range nbschema.SortedKeys(s.PortGroups) {
			pg := s.PortGroups[id]
			for _, a := range pg.ACLs {
				v.aclOwners[a] = Owner{Table: nbdb.PortGroupTable, Name: pg.Name}
			}
		}
	})
	return v.aclOwners
}

// Snapshot returns the rows the view was built from.
func (v *View) Snapshot() *nbschema.Snapshot { return v.s }

// Release returns the release whose northd the view is of.
func (v *View) Release() *release.Release { return v.rel }

// portGroupFacts is ls_get_acl_flags' loop over one port group's ACLs.
func (v *View) portGroupFacts(pg *nbdb.PortGroup) pgFacts {
	f := pgFacts{hasACLs: len(pg.ACLs) > 0, acls: make([]*nbdb.ACL, 0, len(pg.ACLs))}
	for _, a := range pg.ACLs {
		if acl, ok := v.s.ACLs[a]; ok {
			f.acls = append(f.acls, acl)
		}
	}
	// The rows in a second loop: the lookups above, and the loads of
	// the rows here, are independent of each other, so that their cache
	// misses overlap.
	for _, acl := range f.acls {
		if acl.Action == "allow-related" {
			f.hasStateful = true
		}
		f.maxTier.see(acl)
	}
	f.scan = scanACLs(f.acls)
	return f
}

// PortGroupACLs returns the ACLs of port group id that exist, in column
// order (shared: do not modify).
func (v *View) PortGroupACLs(id string) []*nbdb.ACL { return v.pgFacts[id].acls }

// PortSwitch returns the UUID of the switch that owns port p (a
// Logical_Switch_Port UUID), or "" when no existing switch lists it.
func (v *View) PortSwitch(p string) string { return v.portSwitch[p] }

// PortByName returns the UUID of the owned port called name.
func (v *View) PortByName(name string) (string, bool) {
	p, ok := v.portByName[name]
	return p, ok
}

// SwitchPortGroups returns the UUIDs of the port groups present on switch
// sw (those with a member port the switch owns), ascending. The slice is
// the view's: do not modify it.
func (v *View) SwitchPortGroups(sw string) []string { return v.switchPGs[sw] }

// SwitchHasPortGroup reports whether port group pg (a UUID) is present on
// switch sw.
func (v *View) SwitchHasPortGroup(sw, pg string) bool {
	return slices.Contains(v.switchPGs[sw], pg)
}

// AddressSetExists reports whether $name resolves in the SB northd writes:
// an Address_Set, or <pg>_ip4 / <pg>_ip6 of a Port_Group, or
// svc_monitor_mac, which northd always writes.
func (v *View) AddressSetExists(name string) bool {
	return v.asNames[name] || name == "svc_monitor_mac"
}

// PortGroupExists reports whether a Port_Group called name exists (it
// resolves as @name only on the switches where it is present).
func (v *View) PortGroupExists(name string) bool { return v.pgNames[name] }

// MeterFair reports whether the meter called name is fair.
func (v *View) MeterFair(name string) bool { return v.fairMeters[name] }

// RouterPortExists reports whether a Logical_Router_Port called name
// belongs to a router (what a switch port's options:router-port must name
// for northd to treat it as a router port).
func (v *View) RouterPortExists(name string) bool { return v.lrpNames[name] }

// RouterPortPeer returns the Logical_Router_Port that the router-type
// switch port p names in options:router-port, or nil.
func (v *View) RouterPortPeer(p *nbdb.LogicalSwitchPort) *nbdb.LogicalRouterPort {
	name := p.Options["router-port"]
	if name == "" {
		return nil
	}
	for _, id := range nbschema.SortedKeys(v.s.RouterPorts) {
		if rp := v.s.RouterPorts[id]; rp.Name == name {
			return rp
		}
	}
	return nil
}

// RefProblem says why a $name or @name in a match does not resolve on a
// switch: the one rule compile's problems and lint's findings share.
type RefProblem int

// The reference problems.
const (
	RefOK                RefProblem = iota
	NoSuchAddressSet                // no Address_Set (nor port group _ip4/_ip6) of that name
	NoSuchPortGroup                 // no Port_Group of that name
	PortGroupNotOnSwitch            // the Port_Group has no port the switch owns, so OVN does not define it there
)

// CheckAddressSet says whether $name resolves (on every switch alike).
func (v *View) CheckAddressSet(name string) RefProblem {
	if v.AddressSetExists(name) {
		return RefOK
	}
	return NoSuchAddressSet
}

// CheckPortGroup says whether @name resolves on switch sw.
func (v *View) CheckPortGroup(sw, name string) RefProblem {
	for _, id := range v.switchPGs[sw] {
		if v.s.PortGroups[id].Name == name {
			return RefOK
		}
	}
	if v.pgNames[name] {
		return PortGroupNotOnSwitch
	}
	return NoSuchPortGroup
}

// SwitchChassisRedirect returns the chassis-redirect port northd gives
// switch port p (release.SwitchChassisRedirect: p is of type router, its
// peer is the only distributed gateway port — gateway chassis or an HA
// chassis group — of its router, and p's switch has no localnet port;
// northd's peer_needs_cr_port_creation), and whether it has one.
func (v *View) SwitchChassisRedirect(p *nbdb.LogicalSwitchPort) (string, bool) {
	if !v.rel.Has(release.SwitchChassisRedirect) || p.Type != "router" {
		return "", false
	}
	lrp := v.RouterPortPeer(p)
	if lrp == nil || !IsGatewayPort(lrp) {
		return "", false
	}
	if r := v.routerOfPort(lrp.Name); r == nil || len(v.GatewayPorts(r)) != 1 {
		return "", false
	}
	for _, ls := range v.s.Switches {
		if !slices.Contains(ls.Ports, p.UUID) {
			continue
		}
		for _, id := range ls.Ports {
			if q := v.s.Ports[id]; q != nil && q.Type == "localnet" {
				return "", false
			}
		}
	}
	return "cr-" + p.Name, true
}

// IsGatewayPort reports whether a router port is a distributed gateway
// port (northd's l3dgw ports: gateway_chassis or an HA chassis group).
func IsGatewayPort(rp *nbdb.LogicalRouterPort) bool {
	return len(rp.GatewayChassis) > 0 || rp.HaChassisGroup != nil
}

// GatewayPorts returns the distributed gateway ports of router r, in its
// ports' order.
func (v *View) GatewayPorts(r *nbdb.LogicalRouter) []*nbdb.LogicalRouterPort {
	var out []*nbdb.LogicalRouterPort
	for _, id := range r.Ports {
		if rp := v.s.RouterPorts[id]; rp != nil && IsGatewayPort(rp) {
			out = append(out, rp)
		}
	}
	return out
}
