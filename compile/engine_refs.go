package compile

import (
	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
)

// Which switches a row change reaches: the engine's reverse references
// and the collector of what a batch touches.

// refs adds (add) or removes the engine's reverse references and name
// indexes of one row (the view keeps its own: see nbview.View.Track).
func (e *Engine) refs(id string, row model.Model, add bool) {
	op := func(m refIndex, k string) {
		if add {
			m.Add(k, id)
		} else {
			m.Del(k, id)
		}
	}
	switch r := row.(type) {
	case *nbdb.LogicalSwitch:
		for _, lb := range r.LoadBalancer {
			op(e.lbSwitches, lb)
		}
		for _, g := range r.LoadBalancerGroup {
			op(e.lbgSwitches, g)
		}
		for _, d := range r.DNSRecords {
			op(e.dnsSwitches, d)
		}
	case *nbdb.LogicalSwitchPort:
		if r.Dhcpv4Options != nil {
			op(e.dhcpPorts, *r.Dhcpv4Options)
		}
		if r.Dhcpv6Options != nil {
			op(e.dhcpPorts, *r.Dhcpv6Options)
		}
		if peer := r.Options["router-port"]; peer != "" {
			op(e.peerPorts, peer)
		}
		op(e.portsByName, r.Name)
		e.releaseRefs(id, row, add)
	case *nbdb.ACL:
		if r.Meter != nil {
			refOp(e.meterACLs, *r.Meter, id, add)
		}
		e.aclRefs(id, r, add)
	case *nbdb.LoadBalancerGroup:
		for _, lb := range r.LoadBalancer {
			op(e.lbGroups, lb)
		}
	default:
		e.releaseRefs(id, row, add)
	}
	e.g.v.Track(id, row, add)
}

// collector gathers what a batch touches: what the view must refresh,
// and the switches whose flows must be rebuilt.
type collector struct {
	nbview.Touched
	// deps are the ACLs whose flows may change through rows they name
	// (samples, network function groups), not their own.
	deps set
}

func newCollector() *collector { return &collector{Touched: nbview.NewTouched(), deps: set{}} }

// pgSwitches adds the switches on which port group pg has member ports.
func (e *Engine) pgSwitches(c *collector, pg *nbdb.PortGroup) {
	for _, p := range pg.Ports {
		for _, sw := range e.g.v.SwitchesOfPort(p) {
			c.Switches[sw] = struct{}{}
		}
	}
}

// aclOwnerSwitches adds the switches whose flows ACL id reaches.
func (e *Engine) aclOwnerSwitches(c *collector, id string) {
	for _, sw := range e.g.v.SwitchesOfACL(id) {
		c.Switches[sw] = struct{}{}
	}
	for _, pgID := range e.g.v.PortGroupsOfACL(id) {
		if pg, ok := e.g.s.PortGroups[pgID]; ok {
			e.pgSwitches(c, pg)
		}
	}
}

func (e *Engine) lrpNameSwitches(c *collector, name string) {
	c.LRPNames[name] = struct{}{}
	for _, p := range e.peerPorts[name] {
		for _, sw := range e.g.v.SwitchesOfPort(p) {
			c.Switches[sw] = struct{}{}
		}
	}
}

// affected adds to c what a row (in its current state in the engine)
// reaches.
func (e *Engine) affected(c *collector, table, id string, row model.Model) {
	switch r := row.(type) {
	case *nbdb.LogicalSwitch:
		c.Membership = true
		c.Switches[id] = struct{}{}
		for _, p := range r.Ports {
			c.Ports[p] = struct{}{}
			// A port two switches list belongs to the first by UUID:
			// listing or unlisting it here can move it between them.
			for _, sw := range e.g.v.SwitchesOfPort(p) {
				c.Switches[sw] = struct{}{}
			}
		}
		for _, a := range r.ACLs {
			c.ACLs[a] = struct{}{}
		}
	case *nbdb.LogicalSwitchPort:
		c.Membership = true
		c.Ports[id] = struct{}{}
		for _, sw := range e.g.v.SwitchesOfPort(id) {
			c.Switches[sw] = struct{}{}
		}
		e.releaseAffected(c, id, row)
	case *nbdb.PortGroup:
		c.Membership = true
		e.pgSwitches(c, r)
		c.PGNames[r.Name] = struct{}{}
		c.ASNames[r.Name+"_ip4"] = struct{}{}
		c.ASNames[r.Name+"_ip6"] = struct{}{}
		for _, a := range r.ACLs {
			c.ACLs[a] = struct{}{}
		}
	case *nbdb.AddressSet:
		c.ASNames[r.Name] = struct{}{}
	case *nbdb.ACL:
		c.ACLs[id] = struct{}{}
		e.aclOwnerSwitches(c, id)
	case *nbdb.LoadBalancer:
		for _, sw := range e.lbSwitches[id] {
			c.Switches[sw] = struct{}{}
		}
		for _, g := range e.lbGroups[id] {
			for _, sw := range e.lbgSwitches[g] {
				c.Switches[sw] = struct{}{}
			}
		}
	case *nbdb.LoadBalancerGroup:
		for _, sw := range e.lbgSwitches[id] {
			c.Switches[sw] = struct{}{}
		}
	case *nbdb.Meter:
		c.Meters[r.Name] = struct{}{}
		for _, a := range e.meterACLs.Get(r.Name) {
			c.ACLs[a] = struct{}{}
			e.aclOwnerSwitches(c, a)
		}
	case *nbdb.DHCPOptions:
		for _, p := range e.dhcpPorts[id] {
			for _, sw := range e.g.v.SwitchesOfPort(p) {
				c.Switches[sw] = struct{}{}
			}
		}
	case *nbdb.DNS:
		for _, sw := range e.dnsSwitches[id] {
			c.Switches[sw] = struct{}{}
		}
	case *nbdb.LogicalRouter:
		for _, p := range r.Ports {
			if lrp, ok := e.g.s.RouterPorts[p]; ok {
				e.lrpNameSwitches(c, lrp.Name)
			}
		}
	case *nbdb.LogicalRouterPort:
		e.lrpNameSwitches(c, r.Name)
		e.sinkSwitches(c, r.Name)
	default:
		e.releaseAffected(c, id, row)
	}
}
