package compile

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// routeSource is where a route comes from (northd's enum route_source).
type routeSource uint8

const (
	routeConnected routeSource = iota
	routeStatic
)

// routePrio is a route's priority (build_route_match, calc_priority):
// plen*3 + 1 (static) or 2 (connected); from RouterRoutePrio8 plen*8 + 4
// or 6; from RouterRoutePrio12 (129 + plen)*12 + 4 or 6. A src-ip route
// has offset 0.
func (b *routerBuilder) routePrio(plen int, src bool, from routeSource) int {
	mult, base, static, connected := 3, 0, 1, 2
	switch {
	case b.rel.Has(release.RouterRoutePrio12):
		mult, base, static, connected = 12, 129*12, 4, 6
	case b.rel.Has(release.RouterRoutePrio8):
		mult, static, connected = 8, 4, 6
	}
	ofs := connected
	if from == routeStatic {
		ofs = static
	}
	if src {
		ofs = 0
	}
	return base + plen*mult + ofs
}

// routeMatch is build_route_match (route table 0: no route tables on the
// routers aclc compiles).
func (b *routerBuilder) routeMatch(inport *RouterPort, network string, plen int, src, v4 bool, from routeSource) (string, int) {
	dir := "dst"
	if src {
		dir = "src"
	}
	prio := b.routePrio(plen, src, from)
	var m strings.Builder
	if inport != nil {
		m.WriteString("inport == " + inport.Key + " && ")
	}
	// the route table: for every static route from RouterRoutePrio8's
	// commit, before only for a dst-ip one (whose offset was "static")
	if from == routeStatic && (!src || b.rel.Has(release.RouterRoutePrio8)) {
		m.WriteString("reg7 == 0 && ")
	}
	fam := "6"
	if v4 {
		fam = "4"
	}
	fmt.Fprintf(&m, "ip%s.%s == %s/%d", fam, dir, network, plen)
	return m.String(), prio
}

// nextHopRegs are the registers a route to a next hop of family v4 loads:
// REG_NEXT_HOP_IPV4/6 and REG_SRC_IPV4/6 (reg5 from RouterSrcReg5).
func (b *routerBuilder) nextHopRegs(v4 bool) (nh, src string) {
	if !v4 {
		return "xxreg0", "xxreg1"
	}
	if b.rel.Has(release.RouterSrcReg5) {
		return "reg0", "reg5"
	}
	return "reg0", "reg1"
}

// nextHopFamily is the REGBIT_NEXTHOP_IS_IPV4 assignment a route's
// actions end with (RouterNexthopFamily), "" before.
func (b *routerBuilder) nextHopFamily(v4 bool) string {
	if !b.rel.Has(release.RouterNexthopFamily) {
		return ""
	}
	if v4 {
		return "reg9[9] = 1; "
	}
	return "reg9[9] = 0; "
}

// addRoute is add_route.
func (b *routerBuilder) addRoute(op *RouterPort, lrpAddr string, network netip.Addr, plen int, gateway string, src, discard bool, from routeSource, source string) {
	v4 := network.Is4()
	var inport *RouterPort
	if !v4 && network.IsLinkLocalUnicast() && !discard {
		inport = op
	}
	m, prio := b.routeMatch(inport, network.String(), plen, src, v4, from)
	if discard {
		b.add(lflow.LRInIPRouting, prio, m, "drop;", source)
		return
	}
	nhV4 := v4
	if gateway != "" {
		nhV4 = strings.Contains(gateway, ".")
	}
	nh, srcReg := b.nextHopRegs(nhV4)
	dst := "ip6.dst"
	if v4 {
		dst = "ip4.dst"
	}
	if gateway != "" {
		dst = gateway
	}
	a := fmt.Sprintf("ip.ttl--; reg8[0..15] = 0; %s = %s; %s = %s; eth.src = %s; outport = %s; flags.loopback = 1; %snext;",
		nh, dst, srcReg, lrpAddr, op.MAC, op.Key, b.nextHopFamily(nhV4))
	b.add(lflow.LRInIPRouting, prio, m, a, source)
}

// buildIPRoutingFlowsPort is build_ip_routing_flows_for_lrouter_port for
// a router port: its connected routes.
func (b *routerBuilder) buildIPRoutingFlowsPort(p *RouterPort) {
	for _, n := range p.V4 {
		b.addRoute(p, n.addrS(), n.network, n.plen, "", false, false, routeConnected, p.NB.UUID)
	}
	for _, n := range p.V6 {
		b.addRoute(p, n.addrS(), n.network, n.plen, "", false, false, routeConnected, p.NB.UUID)
	}
}

// parsedRoute is northd's struct parsed_route.
type parsedRoute struct {
	nb      *nbdb.LogicalRouterStaticRoute
	prefix  netip.Prefix // masked
	src     bool
	discard bool
}

func (r *parsedRoute) key() string {
	return fmt.Sprintf("%s %v", r.prefix, r.src)
}

// staticRouteOutport is find_static_route_outport.
func (b *routerBuilder) staticRouteOutport(rt *nbdb.LogicalRouterStaticRoute, v4 bool) (*RouterPort, string, bool) {
	nh, _ := netip.ParseAddr(rt.Nexthop)
	if rt.OutputPort != nil {
		out := b.byName[*rt.OutputPort]
		if out == nil {
			return nil, "", false
		}
		if n, ok := out.memberIP(nh); ok && nh.IsValid() {
			return out, n.addrS(), true
		}
		if v4 && len(out.V4) > 0 {
			return out, out.V4[0].addrS(), true
		}
		if !v4 && len(out.V6) > 0 {
			return out, out.V6[0].addrS(), true
		}
		return nil, "", false
	}
	for _, p := range b.ports() {
		if !nh.IsValid() {
			continue
		}
		if n, ok := p.memberIP(nh); ok {
			return p, n.addrS(), true
		}
	}
	return nil, "", false
}

// parseRoute is parsed_routes_add.
func (b *routerBuilder) parseRoute(rt *nbdb.LogicalRouterStaticRoute) *parsedRoute {
	discard := rt.Nexthop == "discard"
	if rt.Nexthop != "" && !discard {
		nh, err := parseCIDRAddr(rt.Nexthop)
		if err != nil || nh.Bits() != nh.Addr().BitLen() {
			return nil
		}
	}
	pfx, err := parseCIDRAddr(rt.IPPrefix)
	if err != nil {
		return nil
	}
	if rt.Nexthop != "" && !discard {
		nh, _ := parseCIDRAddr(rt.Nexthop)
		if nh.Addr().Is4() != pfx.Addr().Is4() {
			return nil
		}
	}
	if !discard {
		if _, _, ok := b.staticRouteOutport(rt, pfx.Addr().Is4()); !ok {
			return nil
		}
	}
	return &parsedRoute{nb: rt, prefix: pfx.Masked(), src: rt.Policy != nil && *rt.Policy == nbdb.LogicalRouterStaticRoutePolicySrcIP, discard: discard}
}

// parseCIDRAddr is ip46_parse_cidr: an address with an optional /plen.
func parseCIDRAddr(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		return netip.ParsePrefix(s)
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// buildStaticRouteFlows is build_static_route_flows_for_lrouter: routes
// with the same prefix and policy form an ECMP group.
func (b *routerBuilder) buildStaticRouteFlows() {
	b.add(lflow.LRInIPRoutingECMP, 0, "1", "drop;", "")
	b.add(lflow.LRInIPRouting, 0, "1", "drop;", "")
	b.add(lflow.LRInIPRoutingECMP, 150, "reg8[0..15] == 0", "next;", "")
	var (
		groups [][]*parsedRoute
		gidx   = map[string]int{}
		unique = map[string]*parsedRoute{}
		order  []string
	)
	for _, id := range b.lr.StaticRoutes {
		rt := b.s.StaticRoutes[id]
		if rt == nil {
			continue
		}
		pr := b.parseRoute(rt)
		if pr == nil {
			continue
		}
		k := pr.key()
		if gi, ok := gidx[k]; ok {
			groups[gi] = append(groups[gi], pr)
		} else if ex := unique[k]; ex != nil {
			delete(unique, k)
			gidx[k] = len(groups)
			groups = append(groups, []*parsedRoute{ex, pr})
		} else {
			unique[k] = pr
			order = append(order, k)
		}
	}
	for gi, g := range groups {
		b.buildECMPRouteFlow(gi+1, g)
	}
	for _, k := range order {
		if pr := unique[k]; pr != nil {
			b.buildStaticRouteFlow(pr)
		}
	}
}

// buildStaticRouteFlow is build_static_route_flow.
func (b *routerBuilder) buildStaticRouteFlow(pr *parsedRoute) {
	var out *RouterPort
	var lrpAddr string
	if !pr.discard {
		var ok bool
		if out, lrpAddr, ok = b.staticRouteOutport(pr.nb, pr.prefix.Addr().Is4()); !ok {
			return
		}
	}
	if pr.discard {
		out = &RouterPort{}
	}
	b.addRoute(out, lrpAddr, pr.prefix.Addr(), pr.prefix.Bits(), pr.nb.Nexthop, pr.src, pr.discard, routeStatic, pr.nb.UUID)
}

// buildECMPRouteFlow is build_ecmp_route_flow (group ids from 1 in the
// order the groups were formed).
func (b *routerBuilder) buildECMPRouteFlow(id int, g []*parsedRoute) {
	v4 := g[0].prefix.Addr().Is4()
	m, prio := b.routeMatch(nil, g[0].prefix.Addr().String(), g[0].prefix.Bits(), g[0].src, v4, routeStatic)
	var ids []string
	for i := range g {
		ids = append(ids, strconv.Itoa(i+1))
	}
	b.add(lflow.LRInIPRouting, prio, m,
		fmt.Sprintf("ip.ttl--; flags.loopback = 1; reg8[0..15] = %d; reg8[16..31] = select(%s);", id, strings.Join(ids, ", ")), "")
	for i, pr := range g {
		out, lrpAddr, ok := b.staticRouteOutport(pr.nb, v4)
		if !ok {
			continue
		}
		nhV4 := strings.Contains(pr.nb.Nexthop, ".")
		nh, srcReg := b.nextHopRegs(nhV4)
		b.add(lflow.LRInIPRoutingECMP, 100, fmt.Sprintf("reg8[0..15] == %d && reg8[16..31] == %d", id, i+1),
			fmt.Sprintf("%s = %s; %s = %s; eth.src = %s; outport = %s; %snext;", nh, pr.nb.Nexthop, srcReg, lrpAddr, out.MAC, out.Key, b.nextHopFamily(nhV4)), pr.nb.UUID)
	}
}

// buildIngressPolicyFlows is build_ingress_policy_flows_for_lrouter (no
// ECMP reroutes and no pkt_mark: those routers are not compiled).
func (b *routerBuilder) buildIngressPolicyFlows() {
	b.add(lflow.LRInPolicy, 0, "1", "reg8[0..15] = 0; next;", "")
	b.add(lflow.LRInPolicyECMP, 150, "reg8[0..15] == 0", "next;", "")
	b.add(lflow.LRInPolicyECMP, 0, "1", "drop;", "")
	for _, id := range b.lr.Policies {
		pol := b.s.Policies[id]
		if pol == nil || pol.Nexthop != nil && *pol.Nexthop != "" && b.rel.Has(release.RouterPolicyNexthopIgnored) {
			continue
		}
		var a string
		switch pol.Action {
		case nbdb.LogicalRouterPolicyActionReroute:
			nexthop := ""
			if len(pol.Nexthops) == 1 {
				nexthop = pol.Nexthops[0]
			} else if pol.Nexthop != nil {
				nexthop = *pol.Nexthop
			}
			nh, err := netip.ParseAddr(nexthop)
			if err != nil {
				continue
			}
			var out *RouterPort
			var lrpAddr string
			for _, p := range b.ports() {
				if n, ok := p.memberIP(nh); ok {
					out, lrpAddr = p, n.addrS()
					break
				}
			}
			if out == nil {
				continue
			}
			v4 := strings.Contains(nexthop, ".")
			nhReg, srcReg := b.nextHopRegs(v4)
			a = fmt.Sprintf("%s = %s; %s = %s; eth.src = %s; outport = %s; flags.loopback = 1; reg8[0..15] = 0; %snext;",
				nhReg, nexthop, srcReg, lrpAddr, out.MAC, out.Key, b.nextHopFamily(v4))
		case nbdb.LogicalRouterPolicyActionDrop:
			a = "drop;"
		case nbdb.LogicalRouterPolicyActionAllow:
			a = "reg8[0..15] = 0; next;"
		}
		b.add(lflow.LRInPolicy, pol.Priority, pol.Match, a, pol.UUID)
	}
}
