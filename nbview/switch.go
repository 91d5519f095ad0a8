package nbview

import (
	"strings"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// Switch is northd's ovn_datapath for one logical switch, reduced to what
// the ACL stages read.
type Switch struct {
	ID string
	LS *nbdb.LogicalSwitch
	// PortGroups are the port groups present on the switch (with a member
	// port it owns), by UUID.
	PortGroups []*nbdb.PortGroup
	// ACLs are the switch's own ACLs that exist, in column order; the port
	// groups' ACLs apply too (AppliedACLs).
	ACLs []*nbdb.ACL
	// RouterPorts are the owned ports of type "router" whose
	// options:router-port names a router's port; LocalnetPorts the owned
	// ports of type "localnet". Both in column order. Filled by Switch,
	// not by SwitchFlags.
	RouterPorts, LocalnetPorts []*nbdb.LogicalSwitchPort
	// SwitchPorts are the owned ports of type "switch" (northd's
	// od->switch_ports, on releases that have the type).
	SwitchPorts []*nbdb.LogicalSwitchPort
	Flags
}

// Flags are what northd's ls_get_acl_flags and its load balancer check
// derive for a switch.
type Flags struct {
	HasACLs        bool // the switch or a port group present on it lists an ACL
	HasStatefulACL bool // one of those ACLs is allow-related
	HasLBVIP       bool // a load balancer of the switch has a VIP
	// MaxTier is northd's highest ACL tier in each stage
	// (update_ls_max_acl_tier; 0 on releases without tiers, whose ACLs
	// have none): the highest tier of those ACLs per stage, or of all of
	// them in every stage before release.ACLTiersPerStage, or 0 where
	// northd's scan stopped early (FDP-1154, tiers.go).
	MaxTier Tiers
	// TierContest is set when the NB does not decide MaxTier: on a release
	// with FDP-1154, the port groups (UUIDs, ascending) sharing a bucket of
	// northd's ls_pg->nb_pgs whose order, which follows northd's history,
	// decides whether its scan stops. MaxTier is then aclc's guess.
	TierContest []string
	// TierStop is, on a release with FDP-1154, the allow-related ACL at
	// tier 0 at which northd's scan stopped although some ACL of the
	// switch has a tier: MaxTier is then 0 and northd ignores every tier
	// (with TierContest, aclc's guess). Nil otherwise.
	TierStop *nbdb.ACL
}

// Tiers holds a highest ACL tier per stage.
type Tiers [NumStages]int

// see raises t to acl's tier in its stage.
func (t *Tiers) see(acl *nbdb.ACL) {
	if acl.Tier > 0 {
		st := StageOf(acl)
		t[st] = max(t[st], acl.Tier)
	}
}

// Stateful reports whether the switch's traffic goes through conntrack:
// a stateful ACL or a load balancer VIP.
func (f Flags) Stateful() bool { return f.HasStatefulACL || f.HasLBVIP }

// Switch returns switch id with everything the ACL stages read: its
// flags, port groups and ACLs, and its router and localnet ports. It
// returns nil when there is no such switch.
func (v *View) Switch(id string) *Switch {
	sw := v.SwitchFlags(id)
	if sw == nil {
		return nil
	}
	for _, a := range sw.LS.ACLs {
		if acl, ok := v.s.ACLs[a]; ok {
			sw.ACLs = append(sw.ACLs, acl)
		}
	}
	for _, p := range sw.LS.Ports {
		lsp, ok := v.s.Ports[p]
		if !ok || v.portSwitch[p] != id {
			continue
		}
		switch lsp.Type {
		case "router":
			if peer := lsp.Options["router-port"]; peer != "" && v.lrpNames[peer] {
				sw.RouterPorts = append(sw.RouterPorts, lsp)
			}
		case "localnet":
			sw.LocalnetPorts = append(sw.LocalnetPorts, lsp)
		case "switch":
			sw.SwitchPorts = append(sw.SwitchPorts, lsp)
		}
	}
	return sw
}

// SwitchFlags returns switch id with its port groups and flags only
// (neither ACLs nor ports): all the incremental engine needs of each
// switch it patches. It returns nil when there is no such switch.
func (v *View) SwitchFlags(id string) *Switch {
	ls, ok := v.s.Switches[id]
	if !ok {
		return nil
	}
	sw := &Switch{ID: id, LS: ls}
	for _, pgID := range v.switchPGs[id] {
		sw.PortGroups = append(sw.PortGroups, v.s.PortGroups[pgID])
	}
	// ls_stateful_record_set_acl_flags (an allow-related ACL implies
	// has_acls) and update_ls_max_acl_tier; fixTiers applies the release's
	// rules for the tiers.
	for _, a := range ls.ACLs {
		if acl, ok := v.s.ACLs[a]; ok {
			sw.HasACLs = true
			sw.HasStatefulACL = sw.HasStatefulACL || IsStateful(acl)
			sw.MaxTier.see(acl)
		}
	}
	for _, pg := range sw.PortGroups {
		f := v.pgFacts[pg.UUID]
		sw.HasACLs = sw.HasACLs || f.hasACLs
		sw.HasStatefulACL = sw.HasStatefulACL || f.hasStateful
		for i, t := range f.maxTier {
			sw.MaxTier[i] = max(sw.MaxTier[i], t)
		}
	}
	v.fixTiers(sw)
	sw.HasLBVIP = len(v.SwitchLBs(ls, true)) > 0
	return sw
}

// AppliedACLs returns the ACLs that apply on the switch, each once: its
// own, then those of its port groups in UUID order.
func (v *View) AppliedACLs(sw *Switch) []*nbdb.ACL {
	out := make([]*nbdb.ACL, 0, len(sw.ACLs))
	seen := map[string]bool{}
	add := func(acl *nbdb.ACL) {
		if !seen[acl.UUID] {
			seen[acl.UUID] = true
			out = append(out, acl)
		}
	}
	for _, acl := range sw.ACLs {
		add(acl)
	}
	for _, pg := range sw.PortGroups {
		for _, a := range pg.ACLs {
			if acl, ok := v.s.ACLs[a]; ok {
				add(acl)
			}
		}
	}
	return out
}

// Ports returns the switch's ports that it owns (a port listed by two
// switches belongs to the first), in column order.
func (v *View) Ports(sw *Switch) []*nbdb.LogicalSwitchPort {
	var out []*nbdb.LogicalSwitchPort
	for _, p := range sw.LS.Ports {
		if lsp, ok := v.s.Ports[p]; ok && v.portSwitch[p] == sw.ID {
			out = append(out, lsp)
		}
	}
	return out
}

// SwitchLBs returns the load balancers applied to ls directly and through
// its load balancer groups (each once), in column order. With withVIPs,
// only those that have VIPs.
func (v *View) SwitchLBs(ls *nbdb.LogicalSwitch, withVIPs bool) []*nbdb.LoadBalancer {
	return v.lbsOf(nil, map[string]bool{}, ls.LoadBalancer, ls.LoadBalancerGroup, withVIPs)
}

// DatapathLBs returns the load balancers whose flows northd installs on
// the switch (the lb_dps with the switch in nb_ls_map): SwitchLBs and,
// with fromRouters (NB_Global options:install_ls_lb_from_router,
// build_lswitch_lbs_from_lrouter), those of the routers its router ports
// connect to, directly and through their groups. Each once. The switch's
// HasLBVIP does not count the routers' (northd's ls_has_lb_vip reads the
// switch's columns only).
func (v *View) DatapathLBs(sw *Switch, fromRouters bool) []*nbdb.LoadBalancer {
	lbs := v.SwitchLBs(sw.LS, false)
	if !fromRouters || len(sw.RouterPorts) == 0 {
		return lbs
	}
	seen := make(map[string]bool, len(lbs))
	for _, lb := range lbs {
		seen[lb.UUID] = true
	}
	for _, p := range sw.RouterPorts {
		if r := v.routerOfPort(p.Options["router-port"]); r != nil {
			lbs = v.lbsOf(lbs, seen, r.LoadBalancer, r.LoadBalancerGroup, false)
		}
	}
	return lbs
}

// RouterOfPort returns the router (the first by UUID) that lists a
// Logical_Router_Port called name, or nil.
func (v *View) RouterOfPort(name string) *nbdb.LogicalRouter { return v.routerOfPort(name) }

// routerOfPort returns the router (the first by UUID) that lists a
// Logical_Router_Port called name.
func (v *View) routerOfPort(name string) *nbdb.LogicalRouter {
	for _, id := range nbschema.SortedKeys(v.s.Routers) {
		r := v.s.Routers[id]
		for _, p := range r.Ports {
			if lrp, ok := v.s.RouterPorts[p]; ok && lrp.Name == name {
				return r
			}
		}
	}
	return nil
}

// lbsOf appends to out the load balancers lbs and those of the groups,
// each once (seen: those out has already).
func (v *View) lbsOf(out []*nbdb.LoadBalancer, seen map[string]bool, lbs, groups []string, withVIPs bool) []*nbdb.LoadBalancer {
	add := func(id string) {
		lb, ok := v.s.LoadBalancers[id]
		if !ok || seen[id] || (withVIPs && len(lb.Vips) == 0) {
			return
		}
		seen[id] = true
		out = append(out, lb)
	}
	for _, id := range lbs {
		add(id)
	}
	for _, gid := range groups {
		if grp, ok := v.s.LBGroups[gid]; ok {
			for _, id := range grp.LoadBalancer {
				add(id)
			}
		}
	}
	return out
}

// VLANPassthru reports whether ls is VLAN-transparent (other_config
// vlan-passthru, smap_get_bool): northd then passes tagged packets at
// port security and writes no ARP/ND responder flows for it.
func VLANPassthru(ls *nbdb.LogicalSwitch) bool {
	return strings.EqualFold(ls.OtherConfig["vlan-passthru"], "true")
}
