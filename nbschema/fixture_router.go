package nbschema

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/aclc/aclc/nbschema/nbdb"
)

// router decodes a routers entry: its ports, and the static routes,
// policies and NAT rules that aclc trace follows (or reports as not
// modelled).
func (b *builder) router(n *yaml.Node, path string) {
	f, ok := b.mapping(n, path, "uuid", "name", "enabled", "options", "external_ids", "ports",
		"load_balancers", "load_balancer_groups", "copp", "static_routes", "policies", "nat")
	if !ok {
		return
	}
	name := b.required(f, "name")
	lr := &nbdb.LogicalRouter{
		UUID:        b.rowUUID(f, nbdb.LogicalRouterTable, name),
		Name:        name,
		Options:     b.strMap(f, "options"),
		ExternalIDs: b.strMap(f, "external_ids"),
	}
	if v, ok := b.boolean(f, "enabled"); ok {
		lr.Enabled = &v
	}
	b.addName(nbdb.LogicalRouterTable, name, lr.UUID, f.at("name"), join(path, "name"))
	b.snap.Routers[lr.UUID] = lr
	for i, pn := range b.list(f, "ports") {
		if u := b.routerPort(pn, index(join(path, "ports"), i)); u != "" {
			lr.Ports = append(lr.Ports, u)
		}
	}
	for i, rn := range b.list(f, "static_routes") {
		if u := b.staticRoute(rn, index(join(path, "static_routes"), i), fmt.Sprintf("Logical_Router %s static_routes %d", name, i)); u != "" {
			lr.StaticRoutes = append(lr.StaticRoutes, u)
		}
	}
	for i, pn := range b.list(f, "policies") {
		if u := b.policy(pn, index(join(path, "policies"), i), fmt.Sprintf("Logical_Router %s policies %d", name, i)); u != "" {
			lr.Policies = append(lr.Policies, u)
		}
	}
	for i, nn := range b.list(f, "nat") {
		if u := b.nat(nn, index(join(path, "nat"), i), fmt.Sprintf("Logical_Router %s nat %d", name, i)); u != "" {
			lr.Nat = append(lr.Nat, u)
		}
	}
	b.refList(f, "load_balancers", nbdb.LoadBalancerTable, func(u string) { lr.LoadBalancer = append(lr.LoadBalancer, u) })
	b.refList(f, "load_balancer_groups", nbdb.LoadBalancerGroupTable, func(u string) { lr.LoadBalancerGroup = append(lr.LoadBalancerGroup, u) })
	b.refOne(f, "copp", nbdb.CoppTable, func(u string) { lr.Copp = &u })
}

func (b *builder) routerPort(n *yaml.Node, path string) string {
	f, ok := b.mapping(n, path, "uuid", "name", "mac", "networks", "options", "peer", "enabled", "external_ids",
		"gateway_chassis", "ha_chassis_group", "ipv6_ra_configs")
	if !ok {
		return ""
	}
	name := b.required(f, "name")
	p := &nbdb.LogicalRouterPort{
		UUID:        b.rowUUID(f, nbdb.LogicalRouterPortTable, name),
		Name:        name,
		MAC:         b.required(f, "mac"),
		Networks:    b.strList(f, "networks"),
		Options:     b.strMap(f, "options"),
		Peer:        b.optStr(f, "peer"),
		ExternalIDs: b.strMap(f, "external_ids"),
		// ipv6_ra_configs: the router advertisement flows
		// (compile/router_ndra.go)
		Ipv6RaConfigs: b.strMap(f, "ipv6_ra_configs"),
	}
	for i, gn := range b.list(f, "gateway_chassis") {
		if u := b.gatewayChassis(gn, index(join(path, "gateway_chassis"), i)); u != "" {
			p.GatewayChassis = append(p.GatewayChassis, u)
		}
	}
	if f.has("ha_chassis_group") {
		if u := b.haChassisGroup(f.at("ha_chassis_group"), join(path, "ha_chassis_group")); u != "" {
			p.HaChassisGroup = &u
		}
	}
	if len(p.Networks) == 0 {
		b.errorf(f.at("networks"), join(path, "networks"), "a router port needs at least one network (e.g. 10.0.0.1/24)")
	}
	if v, ok := b.boolean(f, "enabled"); ok {
		p.Enabled = &v
	}
	b.addName(nbdb.LogicalRouterPortTable, name, p.UUID, f.at("name"), join(path, "name"))
	b.snap.RouterPorts[p.UUID] = p
	return p.UUID
}

var (
	routePolicies = []string{nbdb.LogicalRouterStaticRoutePolicyDstIP, nbdb.LogicalRouterStaticRoutePolicySrcIP}
	policyActions = []string{nbdb.LogicalRouterPolicyActionAllow, nbdb.LogicalRouterPolicyActionDrop, nbdb.LogicalRouterPolicyActionReroute}
	natTypes      = []string{nbdb.NATTypeDNAT, nbdb.NATTypeSNAT, nbdb.NATTypeDNATAndSNAT}
)

// staticRoute decodes a routers[].static_routes entry.
func (b *builder) staticRoute(n *yaml.Node, path, key string) string {
	f, ok := b.mapping(n, path, "uuid", "ip_prefix", "nexthop", "policy", "output_port", "route_table", "options", "external_ids")
	if !ok {
		return ""
	}
	r := &nbdb.LogicalRouterStaticRoute{
		UUID:        b.rowUUID(f, nbdb.LogicalRouterStaticRouteTable, key),
		IPPrefix:    b.required(f, "ip_prefix"),
		Nexthop:     b.required(f, "nexthop"),
		Policy:      b.enum(f, "policy", false, routePolicies, ""),
		OutputPort:  b.optStr(f, "output_port"),
		Options:     b.strMap(f, "options"),
		ExternalIDs: b.strMap(f, "external_ids"),
	}
	if rt := b.optStr(f, "route_table"); rt != nil {
		r.RouteTable = *rt
	}
	b.snap.StaticRoutes[r.UUID] = r
	return r.UUID
}

// policy decodes a routers[].policies entry.
func (b *builder) policy(n *yaml.Node, path, key string) string {
	f, ok := b.mapping(n, path, "uuid", "priority", "match", "action", "nexthop", "nexthops", "options", "external_ids")
	if !ok {
		return ""
	}
	p := &nbdb.LogicalRouterPolicy{
		UUID:        b.rowUUID(f, nbdb.LogicalRouterPolicyTable, key),
		Match:       b.required(f, "match"),
		Nexthop:     b.optStr(f, "nexthop"),
		Nexthops:    b.strList(f, "nexthops"),
		Options:     b.strMap(f, "options"),
		ExternalIDs: b.strMap(f, "external_ids"),
	}
	if f.has("priority") {
		p.Priority, _ = b.integer(f, "priority", 0, 32767)
	} else {
		b.errorf(f.node, join(path, "priority"), "missing (required; 0..32767)")
	}
	if a := b.enum(f, "action", true, policyActions, ""); a != nil {
		p.Action = *a
	}
	b.snap.Policies[p.UUID] = p
	return p.UUID
}

// nat decodes a routers[].nat entry.
func (b *builder) nat(n *yaml.Node, path, key string) string {
	f, ok := b.mapping(n, path, "uuid", "type", "external_ip", "logical_ip", "logical_port", "external_mac", "options", "external_ids")
	if !ok {
		return ""
	}
	r := &nbdb.NAT{
		UUID:        b.rowUUID(f, nbdb.NATTable, key),
		ExternalIP:  b.required(f, "external_ip"),
		LogicalIP:   b.required(f, "logical_ip"),
		LogicalPort: b.optStr(f, "logical_port"),
		ExternalMAC: b.optStr(f, "external_mac"),
		Options:     b.strMap(f, "options"),
		ExternalIDs: b.strMap(f, "external_ids"),
	}
	if t := b.enum(f, "type", true, natTypes, ""); t != nil {
		r.Type = *t
	}
	b.snap.NATs[r.UUID] = r
	return r.UUID
}

// gatewayChassis decodes a router port's gateway_chassis entry.
func (b *builder) gatewayChassis(n *yaml.Node, path string) string {
	f, ok := b.mapping(n, path, "uuid", "name", "chassis_name", "priority", "options", "external_ids")
	if !ok {
		return ""
	}
	name := b.required(f, "name")
	g := &nbdb.GatewayChassis{
		UUID:        b.rowUUID(f, nbdb.GatewayChassisTable, name),
		Name:        name,
		ChassisName: b.required(f, "chassis_name"),
		Options:     b.strMap(f, "options"),
		ExternalIDs: b.strMap(f, "external_ids"),
	}
	g.Priority, _ = b.integer(f, "priority", 0, 32767)
	b.snap.GatewayChassis[g.UUID] = g
	return g.UUID
}

// haChassisGroup decodes a router port's ha_chassis_group: the group and
// its HA_Chassis rows.
func (b *builder) haChassisGroup(n *yaml.Node, path string) string {
	f, ok := b.mapping(n, path, "uuid", "name", "ha_chassis", "external_ids")
	if !ok {
		return ""
	}
	name := b.required(f, "name")
	g := &nbdb.HAChassisGroup{
		UUID:        b.rowUUID(f, nbdb.HAChassisGroupTable, name),
		Name:        name,
		ExternalIDs: b.strMap(f, "external_ids"),
	}
	for i, cn := range b.list(f, "ha_chassis") {
		cpath := index(join(path, "ha_chassis"), i)
		cf, ok := b.mapping(cn, cpath, "uuid", "chassis_name", "priority", "external_ids")
		if !ok {
			continue
		}
		chassis := b.required(cf, "chassis_name")
		c := &nbdb.HAChassis{
			UUID:        b.rowUUID(cf, nbdb.HAChassisTable, name+" "+chassis),
			ChassisName: chassis,
			ExternalIDs: b.strMap(cf, "external_ids"),
		}
		c.Priority, _ = b.integer(cf, "priority", 0, 32767)
		b.snap.HAChassis[c.UUID] = c
		g.HaChassis = append(g.HaChassis, c.UUID)
	}
	b.addName(nbdb.HAChassisGroupTable, name, g.UUID, f.at("name"), join(path, "name"))
	b.snap.HAChassisGroups[g.UUID] = g
	return g.UUID
}

// staticMACBinding decodes a static_mac_bindings entry.
func (b *builder) staticMACBinding(n *yaml.Node, path string, pos int) {
	f, ok := b.mapping(n, path, "uuid", "logical_port", "ip", "mac", "override_dynamic_mac")
	if !ok {
		return
	}
	m := &nbdb.StaticMACBinding{
		UUID:        b.rowUUID(f, nbdb.StaticMACBindingTable, fmt.Sprintf("#%d", pos)),
		LogicalPort: b.required(f, "logical_port"),
		IP:          b.required(f, "ip"),
		MAC:         b.required(f, "mac"),
	}
	m.OverrideDynamicMAC, _ = b.boolean(f, "override_dynamic_mac")
	b.snap.StaticMACBindings[m.UUID] = m
}
