package compile

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc/aclc/internal/ethaddr"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// Unsupported is something a logical router has that aclc does not
// compile; the stage is where northd's flows for it would act.
type Unsupported struct {
	What  string
	Stage lflow.RouterStage
}

// String is "NAT (lr_in_dnat)".
func (u Unsupported) String() string { return u.What + " (" + u.Stage.Name() + ")" }

// Router is one compiled logical router: its flows, or, when it uses what
// aclc does not compile, no flows and the reasons.
type Router struct {
	lflow.RouterDatapath
	Unsupported []Unsupported
	// Ports are the router's ports by name.
	Ports map[string]*RouterPort
	// CRKeysUnknown: the router has more than one distributed gateway
	// port, and the lr_in_ecmp_stateful_egr flows of their
	// chassis-redirect ports carry tunnel keys that northd assigns in an
	// order the NB does not give (buildECMPStatefulEgrFlowsCR).
	CRKeysUnknown bool
}

// RouterPort is a Logical_Router_Port as northd sees it
// (extract_lrp_networks): its MAC and its IPv4 and IPv6 networks, the
// IPv6 link-local address (from the MAC) always last.
type RouterPort struct {
	NB   *nbdb.LogicalRouterPort
	Name string
	Key  string // json_key: the name quoted
	MAC  string // ea_s
	V4   []netAddr
	V6   []netAddr
	// PeerSwitch/PeerLSP: the switch port whose options:router-port names
	// this port. PeerRouter: the router port named by options peer.
	PeerSwitch string
	PeerLSP    *nbdb.LogicalSwitchPort
	PeerRouter *RouterPort
	// Gateway: a distributed gateway port (gateway_chassis or an HA
	// chassis group); CRKey is the JSON key of its chassis-redirect port
	// cr-NAME.
	Gateway bool
	CRKey   string
	router  string
}

// netAddr is one network of a router port (struct ipv4_netaddr /
// ipv6_netaddr).
type netAddr struct {
	addr, network netip.Addr
	plen          int
	// bcast (IPv4) or the solicited-node address (IPv6)
	extra netip.Addr
}

func (n netAddr) addrS() string { return n.addr.String() }
func (n netAddr) netS() string  { return n.network.String() }

// HasIP reports whether ip is in one of the port's networks
// (find_lrp_member_ip).
func (p *RouterPort) HasIP(ip netip.Addr) bool {
	for _, n := range append(slices.Clip(p.V4), p.V6...) {
		if netip.PrefixFrom(n.network, n.plen).Contains(ip) {
			return true
		}
	}
	return false
}

func (p *RouterPort) memberIP(ip netip.Addr) (netAddr, bool) {
	for _, n := range append(slices.Clip(p.V4), p.V6...) {
		if netip.PrefixFrom(n.network, n.plen).Contains(ip) {
			return n, true
		}
	}
	return netAddr{}, false
}

// Routers builds the flows of every logical router of s, as the ovn-northd
// of s's release writes them (one of RouterReleases; the differences from
// 23.03.1 are release.RouterFact facts, the tables s's RouterLayout), for
// the routers aclc models: distributed routers, with or without
// distributed gateway ports (router_dgp.go) and IPv6 router advertisement
// (router_ndra.go), without NAT, load balancers, delegated prefixes, BFD,
// multicast relay, route tables or options. Others come back with
// Unsupported set and no flows. Sorted by name.
func Routers(s *nbschema.Snapshot) []*Router {
	ports := routerPorts(s)
	byName := portsByName(ports)
	layout := RouterLayout(s.Release)
	var out []*Router
	for _, id := range nbschema.SortedKeys(s.Routers) {
		lr := s.Routers[id]
		r := &Router{RouterDatapath: lflow.RouterDatapath{Name: lr.Name, UUID: id, Layout: layout}, Ports: map[string]*RouterPort{}}
		for _, pid := range lr.Ports {
			if p := ports[pid]; p != nil {
				r.Ports[p.Name] = p
			}
		}
		r.Unsupported = routerUnsupported(s, lr, r, byName)
		if len(r.Unsupported) == 0 {
			b := &routerBuilder{s: s, lr: lr, r: r, byName: byName, rel: s.Release}
			b.build()
			r.Sort()
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b *Router) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func portsByName(ports map[string]*RouterPort) map[string]*RouterPort {
	m := map[string]*RouterPort{}
	for _, p := range ports {
		m[p.Name] = p
	}
	return m
}

// routerPorts parses every Logical_Router_Port and links the peers.
func routerPorts(s *nbschema.Snapshot) map[string]*RouterPort {
	out := map[string]*RouterPort{}
	byName := map[string]*RouterPort{}
	for _, rid := range nbschema.SortedKeys(s.Routers) {
		for _, pid := range s.Routers[rid].Ports {
			nb := s.RouterPorts[pid]
			if nb == nil {
				continue
			}
			p := &RouterPort{NB: nb, Name: nb.Name, Key: strconv.Quote(nb.Name), router: rid}
			p.MAC, p.V4, p.V6 = lrpNetworks(nb)
			if nbview.IsGatewayPort(nb) {
				p.Gateway, p.CRKey = true, crKey(nb.Name)
			}
			out[pid] = p
			byName[p.Name] = p
		}
	}
	for _, sid := range nbschema.SortedKeys(s.Switches) {
		for _, pid := range s.Switches[sid].Ports {
			lsp := s.Ports[pid]
			if lsp == nil || lsp.Type != "router" {
				continue
			}
			if p := byName[lsp.Options["router-port"]]; p != nil && p.PeerLSP == nil {
				p.PeerLSP, p.PeerSwitch = lsp, sid
			}
		}
	}
	for _, p := range out {
		if p.NB.Peer != nil {
			if q := byName[*p.NB.Peer]; q != nil && p.PeerLSP == nil {
				p.PeerRouter = q
			}
		}
	}
	return out
}

// RouterPortNetworks is extract_lrp_networks of p: its MAC as northd
// prints it ("" when it does not parse) and its IPv4 and IPv6 addresses
// (the IPv6 link-local one last).
func RouterPortNetworks(p *nbdb.LogicalRouterPort) (mac string, v4, v6 []string) {
	mac, a4, a6 := lrpNetworks(p)
	for _, n := range a4 {
		v4 = append(v4, n.addrS())
	}
	for _, n := range a6 {
		v6 = append(v6, n.addrS())
	}
	return mac, v4, v6
}

// lrpNetworks is extract_lrp_networks: the MAC as northd prints it and
// the networks in NB order, plus the IPv6 link-local address.
func lrpNetworks(p *nbdb.LogicalRouterPort) (string, []netAddr, []netAddr) {
	hw, err := ethaddr.Parse(p.MAC)
	if err != nil {
		return "", nil, nil
	}
	mac := hw.String()
	var v4, v6 []netAddr
	// the IDL keeps the set column networks sorted
	for _, n := range slices.Sorted(slices.Values(p.Networks)) {
		pfx, err := netip.ParsePrefix(n)
		if err != nil {
			continue
		}
		a := pfx.Addr()
		if a.Is4() {
			if a.IsUnspecified() {
				continue
			}
			v4 = append(v4, newNetAddr(a, pfx.Bits()))
		} else {
			v6 = append(v6, newNetAddr(a, pfx.Bits()))
		}
	}
	lla := [16]byte{0: 0xfe, 1: 0x80, 8: hw[0] ^ 2, 9: hw[1], 10: hw[2], 11: 0xff, 12: 0xfe, 13: hw[3], 14: hw[4], 15: hw[5]}
	v6 = append(v6, newNetAddr(netip.AddrFrom16(lla), 64))
	return mac, v4, v6
}

func newNetAddr(a netip.Addr, plen int) netAddr {
	n := netAddr{addr: a, plen: plen, network: netip.PrefixFrom(a, plen).Masked().Addr()}
	b := a.AsSlice()
	if a.Is4() {
		for i := plen; i < 32; i++ {
			b[i/8] |= 0x80 >> (i % 8)
		}
		n.extra = netip.AddrFrom4([4]byte(b))
	} else {
		// solicited-node multicast address ff02::1:ffXX:XXXX
		sn := [16]byte{0: 0xff, 1: 0x02, 11: 0x01, 12: 0xff, 13: b[13], 14: b[14], 15: b[15]}
		n.extra = netip.AddrFrom16(sn)
	}
	return n
}

// routerVerified are the versions whose router pipeline aclc verifies:
// TestRoutersNorthd runs each one's own northd on every router fixture
// and requires router*.go's flows byte for byte. The router facts
// (release.RouterFact) say how the others differ from 23.03.1, but a
// version no test runs is not claimed: its router flows may differ in a
// way no fact states yet.
var routerVerified = []string{"23.03.1", "25.03.0", "26.03.1", "26.09.0"}

// RouterReleases returns the versions whose router pipeline aclc
// verifies, oldest first.
func RouterReleases() []*release.Release {
	var out []*release.Release
	for _, v := range routerVerified {
		out = append(out, release.MustLookup(v))
	}
	return out
}

// CompilesRouters reports whether aclc builds the router pipeline of
// release r: one of RouterReleases. This is what aclc can do, not a fact
// of OVN's.
func CompilesRouters(r *release.Release) bool { return slices.Contains(routerVerified, r.Name()) }

// RouterReleaseNames lists the versions of RouterReleases, "23.03.1,
// 25.03.0, ...", for messages.
func RouterReleaseNames() string { return strings.Join(routerVerified, ", ") }

// routerUnsupported lists what lr has that aclc does not compile.
func routerUnsupported(s *nbschema.Snapshot, lr *nbdb.LogicalRouter, r *Router, ports map[string]*RouterPort) []Unsupported {
	var u []Unsupported
	add := func(st lflow.RouterStage, format string, args ...any) {
		u = append(u, Unsupported{What: fmt.Sprintf(format, args...), Stage: st})
	}
	if !CompilesRouters(s.Release) {
		add(lflow.LRInAdmission, "router pipeline of OVN %s (aclc compiles those of OVN %s)", s.Release, RouterReleaseNames())
	}
	if lr.Enabled != nil && !*lr.Enabled {
		add(lflow.LRInAdmission, "disabled router")
	}
	if len(lr.Nat) > 0 {
		add(lflow.LRInDNAT, "NAT")
	}
	if len(lr.LoadBalancer) > 0 || len(lr.LoadBalancerGroup) > 0 {
		add(lflow.LRInDNAT, "load balancer")
	}
	if lr.Options["chassis"] != "" {
		add(lflow.LRInAdmission, "gateway router (options:chassis)")
	}
	for _, k := range nbschema.SortedKeys(lr.Options) {
		if k != "chassis" && !routerOptionsCompiled[k] {
			add(lflow.LRInAdmission, "options:%s", k)
		}
	}
	if s.GlobalOption("debug_drop_collector_set") != "" {
		// debug_drop_action() samples the router's drops too
		add(lflow.LRInAdmission, "NB_Global options:debug_drop_collector_set")
	}
	// (a copp's meters go to the SB flows' controller_meter column,
	// which neither the flows' text nor a trace shows)
	for _, name := range slices.Sorted(maps.Keys(r.Ports)) {
		p := r.Ports[name]
		if p.MAC == "" {
			add(lflow.LRInAdmission, "port %s: bad mac %q", name, p.NB.MAC)
		}
		if p.NB.Enabled != nil && !*p.NB.Enabled {
			add(lflow.LRInAdmission, "disabled port %s", name)
		}
		if len(p.NB.Ipv6Prefix) > 0 {
			// (the delegated prefix ovn-controller learns)
			add(lflow.LRInNDRAOptions, "ipv6_prefix on port %s", name)
		}
		for _, k := range nbschema.SortedKeys(p.NB.Options) {
			if !routerPortOptionsCompiled[k] {
				add(lflow.LRInAdmission, "port %s options:%s", name, k)
			}
		}
		if p.PeerLSP != nil {
			if ls := s.Switches[p.PeerSwitch]; ls != nil {
				for _, pid := range ls.Ports {
					lsp := s.Ports[pid]
					switch {
					case lsp == nil:
					case lsp.Type == "virtual" && !s.Release.Has(release.RouterVPortDynamicMAC):
						// northd 23.03 resolves a virtual port's IP on the
						// first router port of the switch (hash order)
						// with it in a network
						if _, n := vportResolver(s, ls, lsp, ports); n > 1 {
							add(lflow.LRInARPResolve, "virtual port %s's IP in the networks of %d router ports of switch %s", lsp.Name, n, ls.Name)
						}
					case lsp.Type == "vtep" && p.Gateway:
						// l3dgw_port_has_associated_vtep_lports: no redirect
						add(lflow.LRInGWRedirect, "distributed gateway port %s on switch %s with vtep port %s", name, ls.Name, lsp.Name)
					}
				}
			}
		}
	}
	for _, id := range lr.StaticRoutes {
		rt := s.StaticRoutes[id]
		if rt == nil {
			continue
		}
		switch {
		case rt.BFD != nil:
			add(lflow.LRInIPRouting, "static route %s with BFD", rt.IPPrefix)
		case rt.RouteTable != "":
			add(lflow.LRInIPRoutingPre, "static route %s in route table %q", rt.IPPrefix, rt.RouteTable)
		case len(rt.Options) > 0:
			add(lflow.LRInIPRouting, "static route %s options", rt.IPPrefix)
		}
	}
	if s.Release.Has(release.RouterECMPHashOrder) {
		if pfx, ok := ecmpGroup(s, lr); ok {
			add(lflow.LRInIPRoutingECMP, "ECMP static routes %s on OVN %s (northd numbers the group and its members in a hash order)", pfx, s.Release)
		}
	}
	for _, id := range lr.Policies {
		pol := s.Policies[id]
		if pol == nil {
			continue
		}
		if pol.Action == nbdb.LogicalRouterPolicyActionReroute && len(pol.Nexthops) > 1 {
			add(lflow.LRInPolicyECMP, "ECMP reroute policy priority %d", pol.Priority)
		}
		if len(pol.Options) > 0 {
			add(lflow.LRInPolicy, "policy priority %d options", pol.Priority)
		}
	}
	return u
}

// ecmpGroup returns the prefix of the first static route of lr that
// shares its prefix and policy with an earlier one (an ECMP group, as
// buildStaticRouteFlows forms them).
func ecmpGroup(s *nbschema.Snapshot, lr *nbdb.LogicalRouter) (string, bool) {
	seen := map[string]bool{}
	for _, id := range lr.StaticRoutes {
		rt := s.StaticRoutes[id]
		if rt == nil {
			continue
		}
		pfx, err := parseCIDRAddr(rt.IPPrefix)
		if err != nil {
			continue
		}
		src := rt.Policy != nil && *rt.Policy == nbdb.LogicalRouterStaticRoutePolicySrcIP
		k := (&parsedRoute{prefix: pfx.Masked(), src: src}).key()
		if seen[k] {
			return rt.IPPrefix, true
		}
		seen[k] = true
	}
	return "", false
}

// routerOptionsCompiled are the router options the compiled flows follow
// (or that change no logical flow of a distributed router).
var routerOptionsCompiled = map[string]bool{
	"always_learn_from_arp_request": true, "dynamic_neigh_routers": true,
	"mac_binding_age_threshold": true, "snat-ct-zone": true, "requested-tnl-key": true,
}

// routerBuilder collects the flows of one router.
type routerBuilder struct {
	s      *nbschema.Snapshot
	rel    *release.Release
	lr     *nbdb.LogicalRouter
	r      *Router
	byName map[string]*RouterPort
}

func (b *routerBuilder) add(st lflow.RouterStage, prio int, match, actions, source string) {
	b.r.Flows = append(b.r.Flows, lflow.RouterFlow{Stage: st, Priority: prio, Match: match, Actions: actions, Source: source})
}

// ports returns the router's ports in NB order (as od->nbr->ports).
func (b *routerBuilder) ports() []*RouterPort {
	var out []*RouterPort
	for _, pid := range b.lr.Ports {
		if nb := b.s.RouterPorts[pid]; nb != nil {
			if p := b.r.Ports[nb.Name]; p != nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// build runs northd's router passes (build_lswitch_and_lrouter_iterate_by_od
// and _by_op, router half) in northd's order.
func (b *routerBuilder) build() {
	b.buildAdmCtrlFlows()
	b.buildNeighLearningFlows()
	b.buildNDRAFlows()
	b.add(lflow.LRInIPRoutingPre, 0, "1", "reg7 = 0; next;", "")
	b.buildStaticRouteFlows()
	b.add(lflow.LRInIPRouting, 10550, "nd_rs || nd_ra", "drop;", "")
	b.buildIngressPolicyFlows()
	b.buildARPResolveFlows()
	b.add(lflow.LRInChkPktLen, 0, "1", "next;", "")
	b.add(lflow.LRInLargerPkts, 0, "1", "next;", "")
	b.buildGatewayRedirectFlows()
	b.buildARPRequestFlows()
	b.buildECMPStatefulEgrFlows()
	b.buildNetworkIDFlows()
	b.buildMiscLocalTrafficDropFlows()
	b.buildNATDefragAndLB()
	b.add(lflow.LRInLBAffCheck, 0, "1", "next;", "")
	b.add(lflow.LRInLBAffLearn, 0, "1", "next;", "")
	b.buildNewStageDefaults()
	for _, p := range b.ports() {
		b.buildGatewayPMTUDFlow(p)
		b.buildAdmCtrlFlowsPort(p)
		b.buildNeighLearningFlowsPort(p)
		b.buildGatewayNDSkip(p)
		b.buildIPRoutingFlowsPort(p)
		b.buildEgressDeliveryFlowsPort(p)
		b.buildDHCPv6ReplyFlowsPort(p)
		b.buildNDRAFlowsPort(p)
		b.buildIPv6InputFlowsPort(p)
		b.buildIPv4InputFlowsPort(p)
		b.buildECMPStatefulEgrFlowsPort(p)
	}
	b.buildECMPStatefulEgrFlowsCR()
	b.buildARPResolvePeerFlows()
}

// buildAdmCtrlFlows is build_adm_ctrl_flows_for_lrouter.
func (b *routerBuilder) buildAdmCtrlFlows() {
	if b.rel.Has(release.RouterPMTUDDrop) {
		b.add(lflow.LRInAdmission, 110, "((ip4 && icmp4.type == 3 && icmp4.code == 4) || (ip6 && icmp6.type == 2 && icmp6.code == 0)) && flags.tunnel_rx == 1", "drop;", "")
	}
	b.add(lflow.LRInAdmission, 100, "vlan.present || eth.src[40]", "drop;", "")
	b.add(lflow.LRInAdmission, 0, "1", "drop;", "")
}

// buildAdmCtrlFlowsPort is build_adm_ctrl_flows_for_lrouter_port: the
// port's MAC, and the arp_proxy MAC of its peer switch port with it
// (release.ARPProxyMAC, 77846b215, which changed the switch's L2 lookup
// and this flow alike).
func (b *routerBuilder) buildAdmCtrlFlowsPort(p *RouterPort) {
	a := "xreg0[0..47] = " + p.MAC + "; next;"
	b.add(lflow.LRInAdmission, 50, "eth.mcast && inport == "+p.Key, a, p.NB.UUID)
	dst := p.MAC
	if proxy, ok := arpProxyMAC(p.PeerLSP); ok && b.rel.Has(release.ARPProxyMAC) {
		dst = "{ " + proxy + ", " + p.MAC + " }"
	}
	b.add(lflow.LRInAdmission, 50, "eth.dst == "+dst+" && inport == "+p.Key+gatewayResidence(p), a, p.NB.UUID)
}

// arpProxyMAC is the MAC switch port p's arp_proxy option starts with
// (northd parses it with extract_addresses: a MAC, then IPs and networks).
func arpProxyMAC(p *nbdb.LogicalSwitchPort) (string, bool) {
	if p == nil || p.Type != "router" || p.Options["arp_proxy"] == "" {
		return "", false
	}
	mac, err := ethaddr.Parse(strings.Fields(p.Options["arp_proxy"])[0])
	if err != nil {
		return "", false
	}
	return mac.String(), true
}

// learnFromARPRequest is the router's options:always_learn_from_arp_request.
func (b *routerBuilder) learnFromARPRequest() bool {
	return b.lr.Options["always_learn_from_arp_request"] != "false"
}

// buildNeighLearningFlows is build_neigh_learning_flows_for_lrouter.
func (b *routerBuilder) buildNeighLearningFlows() {
	learn := b.learnFromARPRequest()
	ipResult, ndIPResult, skip := "", "", ""
	if !learn {
		ipResult, ndIPResult, skip = "reg9[3] = 1; ", "reg9[3] = lookup_nd_ip(inport, ip6.src); ", " || reg9[3] == 0"
	}
	b.add(lflow.LRInLookupNeighbor, 100, "arp.op == 2", "reg9[2] = lookup_arp(inport, arp.spa, arp.sha); "+ipResult+"next;", "")
	b.add(lflow.LRInLookupNeighbor, 100, "nd_na", "reg9[2] = lookup_nd(inport, nd.target, nd.tll); "+ipResult+"next;", "")
	if !learn {
		src := "ip6.src"
		if b.rel.Has(release.RouterLookupNDTarget) {
			src = "nd.target"
		}
		b.add(lflow.LRInLookupNeighbor, 110, "nd_na && ip6.src == fe80::/10 && ip6.dst == ff00::/8",
			"reg9[2] = lookup_nd(inport, "+src+", nd.tll); reg9[3] = lookup_nd_ip(inport, "+src+"); next;", "")
	}
	if b.rel.Has(release.RouterNDTllZeroLookup) {
		b.add(lflow.LRInLookupNeighbor, 105, "nd_na && nd.tll == 0", "reg9[2] = lookup_nd(inport, nd.target, eth.src); "+ipResult+"next;", "")
		if !learn {
			b.add(lflow.LRInLookupNeighbor, 115, "nd_na && nd.tll == 0 && ip6.src == fe80::/10 && ip6.dst == ff00::/8",
				"reg9[2] = lookup_nd(inport, nd.target, eth.src); reg9[3] = lookup_nd_ip(inport, nd.target); next;", "")
		}
	}
	if !b.rel.Has(release.RouterNSLookupPerNetwork) {
		b.add(lflow.LRInLookupNeighbor, 100, "nd_ns", "reg9[2] = lookup_nd(inport, ip6.src, nd.sll); "+ndIPResult+"next;", "")
	}
	b.add(lflow.LRInLookupNeighbor, 0, "1", "reg9[2] = 1; next;", "")
	known := "next;"
	if b.rel.Has(release.RouterMACCacheUse) {
		known = "mac_cache_use; next;"
	}
	b.add(lflow.LRInLearnNeighbor, 100, "reg9[2] == 1"+skip, known, "")
	b.add(lflow.LRInLearnNeighbor, 90, "arp", "put_arp(inport, arp.spa, arp.sha); next;", "")
	b.add(lflow.LRInLearnNeighbor, 95, "nd_ns && (ip6.src == 0 || nd.sll == 0)", "next;", "")
	b.add(lflow.LRInLearnNeighbor, 95, "nd_na && nd.tll == 0", "put_nd(inport, nd.target, eth.src); next;", "")
	b.add(lflow.LRInLearnNeighbor, 90, "nd_na", "put_nd(inport, nd.target, nd.tll); next;", "")
	b.add(lflow.LRInLearnNeighbor, 90, "nd_ns", "put_nd(inport, ip6.src, nd.sll); next;", "")
	b.add(lflow.LRInLearnNeighbor, 0, "1", "drop;", "")
}

// buildNeighLearningFlowsPort is build_neigh_learning_flows_for_lrouter_port.
func (b *routerBuilder) buildNeighLearningFlowsPort(p *RouterPort) {
	learn := b.learnFromARPRequest()
	for _, n := range p.V4 {
		ipResult := ""
		if !learn {
			b.add(lflow.LRInLookupNeighbor, 110,
				fmt.Sprintf("inport == %s && arp.spa == %s/%d && arp.tpa == %s && arp.op == 1%s", p.Key, n.netS(), n.plen, n.addrS(), b.lookupResidence(p)),
				"reg9[2] = lookup_arp(inport, arp.spa, arp.sha); reg9[3] = 1; next;", p.NB.UUID)
			ipResult = "reg9[3] = lookup_arp_ip(inport, arp.spa); "
		}
		b.add(lflow.LRInLookupNeighbor, 100,
			fmt.Sprintf("inport == %s && arp.spa == %s/%d && arp.op == 1%s", p.Key, n.netS(), n.plen, b.lookupResidence(p)),
			"reg9[2] = lookup_arp(inport, arp.spa, arp.sha); "+ipResult+"next;", p.NB.UUID)
	}
	if !b.rel.Has(release.RouterNSLookupPerNetwork) {
		return
	}
	for _, n := range p.V6[:len(p.V6)-1] { // but the link-local address
		ipResult := ""
		if !learn {
			b.add(lflow.LRInLookupNeighbor, 110,
				fmt.Sprintf("inport == %s && ip6.src == %s/%d && nd.target == %s && nd_ns%s", p.Key, n.netS(), n.plen, n.addrS(), gatewayResidence(p)),
				"reg9[2] = lookup_nd(inport, ip6.src, nd.sll); reg9[3] = 1; next;", p.NB.UUID)
			ipResult = "reg9[3] = lookup_nd_ip(inport, ip6.src); "
		}
		b.add(lflow.LRInLookupNeighbor, 100,
			fmt.Sprintf("inport == %s && ip6.src == %s/%d && nd_ns%s", p.Key, n.netS(), n.plen, gatewayResidence(p)),
			"reg9[2] = lookup_nd(inport, ip6.src, nd.sll); "+ipResult+"next;", p.NB.UUID)
	}
}

// buildNDRAFlows is build_ND_RA_flows_for_lrouter (the ports' flows:
// buildNDRAFlowsPort).
func (b *routerBuilder) buildNDRAFlows() {
	b.add(lflow.LRInNDRAOptions, 0, "1", "next;", "")
	b.add(lflow.LRInNDRAResponse, 0, "1", "next;", "")
}

// buildNATDefragAndLB is build_lrouter_nat_defrag_and_lb for a router
// without NAT and load balancers: the default flows.
func (b *routerBuilder) buildNATDefragAndLB() {
	b.add(lflow.LRInDefrag, 0, "1", "next;", "")
	b.add(lflow.LRInUnsnat, 0, "1", "next;", "")
	b.add(lflow.LROutChkDNATLocal, 0, "1", "reg9[4] = 0; next;", "")
	b.add(lflow.LROutSNAT, 0, "1", "next;", "")
	b.add(lflow.LRInDNAT, 0, "1", "next;", "")
	b.add(lflow.LROutUndnat, 0, "1", "next;", "")
	b.add(lflow.LROutPostUndnat, 0, "1", "next;", "")
	b.add(lflow.LROutPostSNAT, 0, "1", "next;", "")
	b.add(lflow.LROutEgrLoop, 0, "1", "next;", "")
	b.add(lflow.LRInECMPStateful, 0, "1", "next;", "")
	b.add(lflow.LROutSNAT, 120, "nd_ns", "next;", "")
}

// buildEgressDeliveryFlowsPort is build_egress_delivery_flows_for_lrouter_port.
func (b *routerBuilder) buildEgressDeliveryFlowsPort(p *RouterPort) {
	b.add(lflow.LROutDelivery, 100, "outport == "+p.Key, "output;", p.NB.UUID)
	b.add(lflow.LROutDelivery, 0, "1", "drop;", "")
}

// v4Networks is op_put_v4_networks.
func v4Networks(p *RouterPort, bcast bool) string {
	if !bcast && len(p.V4) == 1 {
		return p.V4[0].addrS()
	}
	var parts []string
	for _, n := range p.V4 {
		parts = append(parts, n.addrS())
		if bcast {
			parts = append(parts, n.extra.String())
		}
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// v6Networks is op_put_v6_networks.
func v6Networks(p *RouterPort) string {
	if len(p.V6) == 1 {
		return p.V6[0].addrS()
	}
	var parts []string
	for _, n := range p.V6 {
		parts = append(parts, n.addrS())
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// routerPortOptionsCompiled are the router port options the compiled
// flows follow.
var routerPortOptionsCompiled = map[string]bool{"reside-on-redirect-chassis": true, "mcast_flood": true}
