package compile

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/aclc/aclc/internal/ethaddr"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/release"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// lspAddress is one parsed entry of a switch port's addresses
// (extract_lsp_addresses): the MAC as northd prints it, then the IPv4
// and IPv6 addresses in the order given.
type lspAddress struct {
	mac    string
	v4, v6 []netip.Addr
}

// lspAddresses parses the addresses of p that northd takes as the port's
// own: "router" and "unknown" are skipped, "dynamic" is the assigned
// dynamic_addresses.
func lspAddresses(p *nbdb.LogicalSwitchPort) []lspAddress {
	var out []lspAddress
	for _, a := range p.Addresses {
		if a == "dynamic" {
			if p.DynamicAddresses == nil {
				continue
			}
			a = *p.DynamicAddresses
		}
		f := strings.Fields(a)
		if len(f) == 0 || f[0] == "router" || f[0] == "unknown" || f[0] == "dynamic" {
			continue
		}
		hw, err := ethaddr.Parse(f[0])
		if err != nil {
			continue
		}
		la := lspAddress{mac: hw.String()}
		ok := true
		for _, ipf := range f[1:] {
			ip, err := netip.ParseAddr(strings.SplitN(ipf, "/", 2)[0])
			if err != nil {
				ok = false
				break
			}
			if ip.Is4() {
				la.v4 = append(la.v4, ip)
			} else {
				la.v6 = append(la.v6, ip)
			}
		}
		if ok {
			out = append(out, la)
		}
	}
	return out
}

// buildARPResolveFlows is build_arp_resolve_flows_for_lrouter.
func (b *routerBuilder) buildARPResolveFlows() {
	b.add(lflow.LRInARPResolve, 500, "ip4.mcast || ip6.mcast", "next;", "")
	v4, v6 := "ip4", "ip6"
	if b.rel.Has(release.RouterNexthopFamily) {
		v4, v6 = "reg9[9] == 1", "reg9[9] == 0"
	}
	b.add(lflow.LRInARPResolve, 1, v4, "get_arp(outport, reg0); next;", "")
	b.add(lflow.LRInARPResolve, 1, v6, "get_nd(outport, xxreg0); next;", "")
	b.add(lflow.LRInARPResolve, 0, "1", "drop;", "")
}

// switchRouterPorts returns the router ports whose peer is a port of the
// switch sid (od->router_ports, seen from the router side).
func (b *routerBuilder) switchRouterPorts(sid string) []*RouterPort {
	var out []*RouterPort
	for _, pid := range b.s.Switches[sid].Ports {
		lsp := b.s.Ports[pid]
		if lsp == nil || lsp.Type != "router" {
			continue
		}
		if p := b.byName[lsp.Options["router-port"]]; p != nil && p.PeerLSP == lsp {
			out = append(out, p)
		}
	}
	return out
}

// buildARPResolvePeerFlows is the part of
// build_arp_resolve_flows_for_lrouter_port that lands in this router:
// next hops that are router ports peered with one of its ports, the
// addresses of the VMs on the switches its ports connect to, and the
// other router ports on those switches.
func (b *routerBuilder) buildARPResolvePeerFlows() {
	for _, p := range b.ports() {
		if q := p.PeerRouter; q != nil && q.PeerRouter == p {
			// q's flows, added to its peer's (p's) router.
			if len(q.V4) > 0 {
				b.add(lflow.LRInARPResolve, 100, "outport == "+p.Key+" && reg0== "+v4Networks(q, false), "eth.dst = "+q.MAC+"; next;", q.NB.UUID)
			}
			if len(q.V6) > 0 {
				b.add(lflow.LRInARPResolve, 100, "outport == "+p.Key+" && xxreg0 == "+v6Networks(q), "eth.dst = "+q.MAC+"; next;", q.NB.UUID)
			}
		}
		if p.PeerLSP == nil {
			continue
		}
		ls := b.s.Switches[p.PeerSwitch]
		others := b.switchRouterPorts(p.PeerSwitch)
		for _, pid := range ls.Ports {
			lsp := b.s.Ports[pid]
			if lsp == nil || (lsp.Enabled != nil && !*lsp.Enabled) {
				continue
			}
			if lsp.Type == "virtual" {
				if !b.rel.Has(release.RouterVPortDynamicMAC) {
					b.vportUnclaimed(p, ls, lsp)
				}
				continue
			}
			if lsp.Type == "router" {
				// lsp's peer resolves the other router ports on the switch:
				// flows for p come from the switch's router port peered with p.
				if lsp != p.PeerLSP || b.lr.Options["dynamic_neigh_routers"] == "true" {
					continue
				}
				for _, o := range others {
					if o == p {
						continue
					}
					if len(o.V4) > 0 {
						b.add(lflow.LRInARPResolve, 100, "outport == "+p.Key+" && reg0 == "+v4Networks(o, false), "eth.dst = "+o.MAC+"; next;", lsp.UUID)
					}
					if len(o.V6) > 0 {
						b.add(lflow.LRInARPResolve, 100, "outport == "+p.Key+" && xxreg0 == "+v6Networks(o), "eth.dst = "+o.MAC+"; next;", lsp.UUID)
					}
				}
				continue
			}
			for _, la := range lspAddresses(lsp) {
				for _, ip := range la.v4 {
					if p.HasIP(ip) {
						b.add(lflow.LRInARPResolve, 100, fmt.Sprintf("outport == %s && reg0 == %s", p.Key, ip), "eth.dst = "+la.mac+"; next;", lsp.UUID)
					}
				}
				for _, ip := range la.v6 {
					if p.HasIP(ip) {
						b.add(lflow.LRInARPResolve, 100, fmt.Sprintf("outport == %s && xxreg0 == %s", p.Key, ip), "eth.dst = "+la.mac+"; next;", lsp.UUID)
					}
				}
			}
		}
	}
}

// vportUnclaimed is 23.03's flow for virtual port lsp's IP on the router
// port p that resolves it: "all zeros", so that the router asks for it
// with arp { }, while no virtual parent claims the port in the SB (the
// state aclc assumes: it reads no SB Port_Binding).
func (b *routerBuilder) vportUnclaimed(p *RouterPort, ls *nbdb.LogicalSwitch, lsp *nbdb.LogicalSwitchPort) {
	rp, n := vportResolver(b.s, ls, lsp, b.byName)
	if n != 1 || rp != p {
		return // (several: routerUnsupported)
	}
	vip, _ := netip.ParseAddr(lsp.Options["virtual-ip"])
	reg := "reg0"
	if vip.Is6() {
		reg = "xxreg0"
	}
	b.add(lflow.LRInARPResolve, 100, fmt.Sprintf("outport == %s && %s == %s", p.Key, reg, vip), "eth.dst = 00:00:00:00:00:00; next;", lsp.UUID)
}

// vportResolver returns the router port of switch ls that northd 23.03
// resolves virtual port lsp's IP on and how many router ports of ls have
// it in a network (the one returned when exactly one does): none when lsp
// has no valid virtual-ip or no virtual-parents.
func vportResolver(s *nbschema.Snapshot, ls *nbdb.LogicalSwitch, lsp *nbdb.LogicalSwitchPort, byName map[string]*RouterPort) (*RouterPort, int) {
	vip, err := netip.ParseAddr(lsp.Options["virtual-ip"])
	if err != nil || lsp.Options["virtual-parents"] == "" {
		return nil, 0
	}
	var found *RouterPort
	n := 0
	for _, pid := range ls.Ports {
		q := s.Ports[pid]
		if q == nil || q.Type != "router" {
			continue
		}
		if rp := byName[q.Options["router-port"]]; rp != nil && rp.PeerLSP == q && rp.HasIP(vip) {
			found, n = rp, n+1
		}
	}
	return found, n
}

// buildARPRequestFlows is build_arp_request_flows_for_lrouter.
func (b *routerBuilder) buildARPRequestFlows() {
	// then: what follows the request (RouterARPRequestResume,
	// RouterECMPStatefulEgr); v4, v6: the next hop's family.
	then, v4, v6, last := "", " && ip4", " && ip6", "output;"
	if b.rel.Has(release.RouterARPRequestResume) {
		then = " output;"
	}
	if b.rel.Has(release.RouterECMPStatefulEgr) {
		then, last = " next;", "next;"
	}
	if b.rel.Has(release.RouterNexthopFamily) {
		v4, v6 = " && reg9[9] == 1", " && reg9[9] == 0"
	}
	_, srcReg := b.nextHopRegs(true)
	for _, id := range b.lr.StaticRoutes {
		rt := b.s.StaticRoutes[id]
		if rt == nil || b.rel.Has(release.RouterNoRouteNDNS) {
			continue
		}
		nh, err := parseCIDRAddr(rt.Nexthop)
		if err != nil || nh.Addr().Is4() || nh.Bits() != 128 {
			continue
		}
		a := nh.Addr().As16()
		sn := netip.AddrFrom16([16]byte{0: 0xff, 1: 0x02, 11: 0x01, 12: 0xff, 13: a[13], 14: a[14], 15: a[15]})
		mac := fmt.Sprintf("33:33:ff:%02x:%02x:%02x", a[13], a[14], a[15])
		b.add(lflow.LRInARPRequest, 200, "eth.dst == 00:00:00:00:00:00"+v6+" && xxreg0 == "+rt.Nexthop,
			"nd_ns { eth.dst = "+mac+"; ip6.dst = "+sn.String()+"; nd.target = "+rt.Nexthop+"; output; };"+then, rt.UUID)
	}
	b.add(lflow.LRInARPRequest, 100, "eth.dst == 00:00:00:00:00:00"+v4,
		"arp { eth.dst = ff:ff:ff:ff:ff:ff; arp.spa = "+srcReg+"; arp.tpa = reg0; arp.op = 1; output; };"+then, "")
	b.add(lflow.LRInARPRequest, 100, "eth.dst == 00:00:00:00:00:00"+v6, "nd_ns { nd.target = xxreg0; output; };"+then, "")
	b.add(lflow.LRInARPRequest, 0, "1", last, "")
}
