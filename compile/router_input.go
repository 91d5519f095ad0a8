package compile

import (
	"fmt"
	"strings"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/release"
)

// buildMiscLocalTrafficDropFlows is
// build_misc_local_traffic_drop_flows_for_lrouter (no multicast relay or
// static flooding).
func (b *routerBuilder) buildMiscLocalTrafficDropFlows() {
	st := lflow.LRInIPInput
	if b.floodStatic() {
		// IGMP and MLD (TTL 1) that ports flood statically go on
		b.add(st, 120, "igmp && ip.ttl == 1", "next;", "")
		b.add(st, 120, "(mldv1 || mldv2) && ip.ttl == 1", "next;", "")
	}
	b.add(st, 100, "ip4.src_mcast ||ip4.src == 255.255.255.255 || ip4.src == 127.0.0.0/8 || ip4.dst == 127.0.0.0/8 || ip4.src == 0.0.0.0/8 || ip4.dst == 0.0.0.0/8", "drop;", "")
	b.add(st, 85, "arp || nd", "drop;", "")
	b.add(st, 84, "nd_rs || nd_ra", "next;", "")
	b.add(st, 83, "ip6.mcast_rsvd", "drop;", "")
	b.add(st, 82, "ip4.mcast || ip6.mcast", "drop;", "")
	b.add(st, 50, "eth.bcast", "drop;", "")
	b.add(st, 32, "ip.ttl == {0, 1} && !ip.later_frag && (ip4.mcast || ip6.mcast)", "drop;", "")
	ttlDrop := 30
	if b.rel.Has(release.RouterTTLExceeded) {
		ttlDrop = 29
	}
	b.add(st, ttlDrop, "ip.ttl == {0, 1}", "drop;", "")
	b.add(st, 0, "1", "next;", "")
}

// floodStatic is the router's mcast_info.rtr.flood_static: an enabled
// port of it has options:mcast_flood=true (init_mcast_port_info,
// smap_get_bool).
func (b *routerBuilder) floodStatic() bool {
	for _, p := range b.ports() {
		if (p.NB.Enabled == nil || *p.NB.Enabled) && strings.EqualFold(p.NB.Options["mcast_flood"], "true") {
			return true
		}
	}
	return false
}

// buildDHCPv6ReplyFlowsPort is build_dhcpv6_reply_flows_for_lrouter_port
// (no port has options:prefix_delegation: those routers are not
// compiled).
func (b *routerBuilder) buildDHCPv6ReplyFlowsPort(p *RouterPort) {
	if b.rel.Has(release.RouterDHCPv6PDOnly) {
		return
	}
	for _, n := range p.V6 {
		b.add(lflow.LRInIPInput, 100, "ip6.dst == "+n.addrS()+" && udp.src == 547 && udp.dst == 546",
			"reg0 = 0; handle_dhcpv6_reply;", p.NB.UUID)
	}
}

// unreachable is the port-unreachable and protocol-unreachable flows of
// build_lrouter_ipv4_ip_input / build_ipv6_input_flows_for_lrouter_port
// for one router address.
func (b *routerBuilder) unreachable(p *RouterPort, fam, addr string) {
	st, icmp, code3 := lflow.LRInIPInput, "icmp4", "icmp4.type = 3; icmp4.code = 3; "
	code2 := "icmp4.type = 3; icmp4.code = 2; "
	if fam == "ip6" {
		icmp, code3, code2 = "icmp6", "icmp6.type = 1; icmp6.code = 4; ", "icmp6.type = 1; icmp6.code = 3; "
	}
	swap := "eth.dst <-> eth.src; " + fam + ".dst <-> " + fam + ".src; "
	m := fam + " && " + fam + ".dst == " + addr + " && !ip.later_frag"
	b.add(st, 80, m+" && tcp", "tcp_reset {"+swap+"next; };", p.NB.UUID)
	b.add(st, 80, m+" && sctp", "sctp_abort {"+swap+"next; };", p.NB.UUID)
	b.add(st, 80, m+" && udp", icmp+" {"+swap+"ip.ttl = 255; "+code3+"next; };", p.NB.UUID)
	b.add(st, 70, m, icmp+" {"+swap+"ip.ttl = 255; "+code2+"next; };", p.NB.UUID)
}

// dropOwnDest is build_lrouter_drop_own_dest with drop_snat_ip false (no
// SNAT or load balancer IPs on the routers aclc compiles).
func (b *routerBuilder) dropOwnDest(p *RouterPort) {
	if len(p.V4) > 0 {
		var ips []string
		for _, n := range p.V4 {
			ips = append(ips, n.addrS())
		}
		b.add(lflow.LRInIPInput, 60, "ip4.dst == {"+strings.Join(ips, ", ")+"}", "drop;", p.NB.UUID)
	}
	if len(p.V6) > 0 {
		var ips []string
		for _, n := range p.V6 {
			ips = append(ips, n.addrS())
		}
		b.add(lflow.LRInIPInput, 60, "ip6.dst == {"+strings.Join(ips, ", ")+"}", "drop;", p.NB.UUID)
	}
}

// buildIPv6InputFlowsPort is build_ipv6_input_flows_for_lrouter_port.
func (b *routerBuilder) buildIPv6InputFlowsPort(p *RouterPort) {
	st := lflow.LRInIPInput
	if len(p.V6) > 0 {
		b.add(st, 90, "ip6.dst == "+v6Networks(p)+" && icmp6.type == 128 && icmp6.code == 0",
			"ip6.dst <-> ip6.src; ip.ttl = 255; icmp6.type = 129; flags.loopback = 1; next; ", p.NB.UUID)
	}
	for _, n := range p.V6 {
		b.add(st, 90, fmt.Sprintf("inport == %s && ip6.dst == {%s, %s} && nd_ns && nd.target == %s%s", p.Key, n.addrS(), n.extra, n.addrS(), gatewayResidence(p)),
			"nd_na_router { eth.src = xreg0[0..47]; ip6.src = nd.target; nd.tll = xreg0[0..47]; outport = inport; flags.loopback = 1; output; };", p.NB.UUID)
	}
	if len(b.gatewayPorts()) == 0 {
		for _, n := range p.V6 {
			b.unreachable(p, "ip6", n.addrS())
		}
	}
	b.ttlExceeded6(p)
}

// ttlExceededEth is how a TTL-exceeded reply of port p sets its Ethernet
// addresses, and what its per-network flows print between the source
// address and ";" (northd's "%s ;" before RouterTTLSourceMAC).
func (b *routerBuilder) ttlExceededEth(p *RouterPort) (eth, sp string) {
	if b.rel.Has(release.RouterTTLSourceMAC) {
		return "eth.dst = eth.src; eth.src = " + p.MAC + ";", ""
	}
	return "eth.dst <-> eth.src;", " "
}

// ttlExceededAddrs is how a per-network TTL-exceeded reply of port p from
// its address addr sets the IP addresses (fam "ip4" or "ip6"), up to the
// ";": before RouterTTLSourceMAC a gateway port's reply swaps them ("fix
// ttl exceeded with FIP", 4ecc61247); and the residence check its flows'
// matches end with: from RouterTTLSourceMAC (f5025f58e) a gateway port
// answers only on its gateway chassis.
func (b *routerBuilder) ttlExceededAddrs(p *RouterPort, fam, addr string) (addrs, residence string) {
	_, sp := b.ttlExceededEth(p)
	if b.rel.Has(release.RouterTTLSourceMAC) {
		return fam + ".dst = " + fam + ".src; " + fam + ".src = " + addr + sp, gatewayResidence(p)
	}
	if p.Gateway {
		return fam + ".dst <-> " + fam + ".src" + sp, ""
	}
	return fam + ".dst = " + fam + ".src; " + fam + ".src = " + addr + sp, ""
}

// ttlExceeded6 is build_lrouter_ipv6_default_ttl_expired_flows (or, before
// RouterTTLExceeded, its loop in build_ipv6_input_flows_for_lrouter_port).
func (b *routerBuilder) ttlExceeded6(p *RouterPort) {
	st := lflow.LRInIPInput
	newer := b.rel.Has(release.RouterTTLExceeded)
	eth, _ := b.ttlExceededEth(p)
	_, res := b.ttlExceededAddrs(p, "ip6", "")
	for i, n := range p.V6 {
		if newer && i == len(p.V6)-1 || !newer && n.network.IsLinkLocalUnicast() {
			continue
		}
		addrs, _ := b.ttlExceededAddrs(p, "ip6", n.addrS())
		b.add(st, 31, fmt.Sprintf("inport == %s && ip6 && ip6.src == %s/%d && ip.ttl == {0, 1} && !ip.later_frag%s", p.Key, n.netS(), n.plen, res),
			fmt.Sprintf("icmp6 {%s %s; ip.ttl = 254; icmp6.type = 3; /* Time exceeded */ icmp6.code = 0; /* TTL exceeded in transit */ outport = %s; flags.loopback = 1; output; };", eth, addrs, p.Key),
			p.NB.UUID)
	}
	if newer {
		b.add(st, 30, fmt.Sprintf("inport == %s && ip6 && ip.ttl == {0, 1} && !ip.later_frag%s", p.Key, res),
			fmt.Sprintf("icmp6 {%s ip6.dst = ip6.src; ip6.src = %s; ip.ttl = 254; icmp6.type = 3; /* Time exceeded */ icmp6.code = 0; /* TTL exceeded in transit */ outport = %s; flags.loopback = 1; output; };", eth, p.V6[0].addrS(), p.Key),
			p.NB.UUID)
	}
}

// ttlExceeded4 is build_lrouter_ipv4_default_ttl_expired_flows (or, before
// RouterTTLExceeded, its loop in build_lrouter_ipv4_ip_input).
func (b *routerBuilder) ttlExceeded4(p *RouterPort) {
	st := lflow.LRInIPInput
	newer := b.rel.Has(release.RouterTTLExceeded)
	eth, _ := b.ttlExceededEth(p)
	_, res := b.ttlExceededAddrs(p, "ip4", "")
	for _, n := range p.V4 {
		m := fmt.Sprintf("inport == %s && ip4 && ip.ttl == {0, 1} && !ip.later_frag", p.Key)
		if newer {
			m = fmt.Sprintf("inport == %s && ip4 && ip4.src == %s/%d && ip.ttl == {0, 1} && !ip.later_frag%s", p.Key, n.netS(), n.plen, res)
		}
		addrs, _ := b.ttlExceededAddrs(p, "ip4", n.addrS())
		b.add(st, 31, m,
			fmt.Sprintf("icmp4 {%s icmp4.type = 11; /* Time exceeded */ icmp4.code = 0; /* TTL exceeded in transit */ %s; ip.ttl = 254; outport = %s; flags.loopback = 1; output; };", eth, addrs, p.Key),
			p.NB.UUID)
	}
	if newer && len(p.V4) > 0 {
		b.add(st, 30, fmt.Sprintf("inport == %s && ip4 && ip.ttl == {0, 1} && !ip.later_frag%s", p.Key, res),
			fmt.Sprintf("icmp4 {%s icmp4.type = 11; /* Time exceeded */ icmp4.code = 0; /* TTL exceeded in transit */ ip4.dst = ip4.src; ip4.src = %s; ip.ttl = 254; outport = %s; flags.loopback = 1; output; };", eth, p.V4[0].addrS(), p.Key),
			p.NB.UUID)
	}
}

// buildIPv4InputFlowsPort is build_lrouter_ipv4_ip_input for a port of a
// distributed router without NAT or load balancers (no port-unreachable
// replies on a router with gateway ports).
func (b *routerBuilder) buildIPv4InputFlowsPort(p *RouterPort) {
	st := lflow.LRInIPInput
	if len(p.V4) > 0 {
		b.add(st, 100, "ip4.src == "+v4Networks(p, true)+" && reg9[0] == 0", "drop;", p.NB.UUID)
		b.add(st, 90, "ip4.dst == "+v4Networks(p, false)+" && icmp4.type == 8 && icmp4.code == 0",
			"ip4.dst <-> ip4.src; ip.ttl = 255; icmp4.type = 0; flags.loopback = 1; next; ", p.NB.UUID)
	}
	b.ttlExceeded4(p)
	for _, n := range p.V4 {
		b.add(st, 90, fmt.Sprintf("inport == %s && arp.op == 1 && arp.tpa == %s && arp.spa == %s/%d%s", p.Key, n.addrS(), n.netS(), n.plen, b.arpReplyResidence(p)),
			"eth.dst = eth.src; eth.src = xreg0[0..47]; arp.op = 2; /* ARP reply */ arp.tha = arp.sha; arp.sha = xreg0[0..47]; arp.tpa <-> arp.spa; outport = inport; flags.loopback = 1; output;",
			p.NB.UUID)
	}
	if len(b.gatewayPorts()) == 0 {
		for _, n := range p.V4 {
			b.unreachable(p, "ip4", n.addrS())
		}
	}
	b.dropOwnDest(p)
}
