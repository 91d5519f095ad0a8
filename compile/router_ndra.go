package compile

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aclc/aclc/lflow"
)

// buildNDRAFlowsPort is build_ND_RA_flows_for_lrouter_port: for a port
// peered with a switch whose ipv6_ra_configs has a valid address_mode and
// which has a global IPv6 network, the router solicitation's
// put_nd_ra_opts() (lr_in_nd_ra_options) and the advertisement back to
// the sender (lr_in_nd_ra_response). The same text in every version aclc
// compiles routers for. (The periodic advertisements are ovn-controller's;
// ipv6_prefix, prefix delegation, is not compiled.)
func (b *routerBuilder) buildNDRAFlowsPort(p *RouterPort) {
	if p.NB.Peer != nil || p.PeerLSP == nil || len(p.V6) == 0 {
		return
	}
	cfg := p.NB.Ipv6RaConfigs
	mode, ok := cfg["address_mode"]
	if !ok || mode != "slaac" && mode != "dhcpv6_stateful" && mode != "dhcpv6_stateless" {
		return
	}
	var a strings.Builder
	fmt.Fprintf(&a, "reg0[5] = put_nd_ra_opts(addr_mode = \"%s\", slla = %s", mode, p.MAC)
	if mtu := atoi(cfg["mtu"]); mtu >= 1280 { // RFC 2460's minimum
		fmt.Fprintf(&a, ", mtu = %d", uint32(mtu))
	}
	if prf, ok := cfg["router_preference"]; ok && prf != "MEDIUM" {
		fmt.Fprintf(&a, ", router_preference = \"%s\"", prf)
	}
	if v, ok := cfg["rdnss"]; ok {
		fmt.Fprintf(&a, ", rdnss = %s", v)
	}
	if v, ok := cfg["dnssl"]; ok {
		fmt.Fprintf(&a, ", dnssl = \"%s\"", v)
	}
	if v, ok := cfg["route_info"]; ok {
		fmt.Fprintf(&a, ", route_info = \"%s\"", v)
	}
	global := false
	for _, n := range p.V6 {
		if n.network.IsLinkLocalUnicast() {
			continue
		}
		fmt.Fprintf(&a, ", prefix = %s/%d", n.netS(), n.plen)
		global = true
	}
	if !global {
		return
	}
	a.WriteString("); next;")
	b.add(lflow.LRInNDRAOptions, 50, "inport == "+p.Key+" && ip6.dst == ff02::2 && nd_rs", a.String(), p.NB.UUID)
	lla := p.V6[len(p.V6)-1].addrS() // (extract_lrp_networks adds it last)
	b.add(lflow.LRInNDRAResponse, 50, "inport == "+p.Key+" && ip6.dst == ff02::2 && nd_ra && reg0[5]",
		"eth.dst = eth.src; eth.src = "+p.MAC+"; ip6.dst = ip6.src; ip6.src = "+lla+"; outport = inport; flags.loopback = 1; output;", p.NB.UUID)
}

// atoi is C's atoi: the decimal number at the start of s (after blanks),
// 0 when there is none.
func atoi(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	end := 0
	if end < len(s) && (s[end] == '-' || s[end] == '+') {
		end++
	}
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, _ := strconv.ParseInt(s[:end], 10, 64)
	return n
}
