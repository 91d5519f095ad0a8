package nbschema

import (
	"gopkg.in/yaml.v3"

	"github.com/aclc/aclc/nbschema/nbdb"
)

// router decodes a routers entry. Routers matter to the ACL stages only
// through switch ports of type router whose options:router-port names one
// of their ports, so only their basic columns are part of the format.
func (b *builder) router(n *yaml.Node, path string) {
	f, ok := b.mapping(n, path, "uuid", "name", "enabled", "options", "external_ids", "ports",
		"load_balancers", "load_balancer_groups", "copp")
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
	b.refList(f, "load_balancers", nbdb.LoadBalancerTable, func(u string) { lr.LoadBalancer = append(lr.LoadBalancer, u) })
	b.refList(f, "load_balancer_groups", nbdb.LoadBalancerGroupTable, func(u string) { lr.LoadBalancerGroup = append(lr.LoadBalancerGroup, u) })
	b.refOne(f, "copp", nbdb.CoppTable, func(u string) { lr.Copp = &u })
}

func (b *builder) routerPort(n *yaml.Node, path string) string {
	f, ok := b.mapping(n, path, "uuid", "name", "mac", "networks", "options", "peer", "enabled", "external_ids")
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
