package trace

import (
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc/aclc/internal/ethaddr"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// This file models the proxy ARP responder of a switch's router ports
// with the arp_proxy option (ovn-kubernetes' KubeVirt live migration):
// northd's build_lswitch_arp_nd_responder_known_ips answers ARP requests
// for the option's addresses and networks on the router's behalf, and
// ovn-trace executes the reply as any other ls_in_arp_rsp flow.

// arpProxy is what northd reads from a router port's arp_proxy option
// (join_logical_ports).
type arpProxy struct {
	mac string   // the MAC the option starts with, "" if none
	ip4 []string // IPv4 addresses and networks as the match prints them
	ip6 bool     // it has IPv6 addresses (the ND responder: not traced)
}

// parseARPProxy reads an arp_proxy option as northd does: from
// release.ARPProxyResponder on extract_addresses (a MAC, then addresses)
// or else extract_ip_addresses (addresses only), before it
// extract_ip_addresses alone, which stops at a MAC. valid is northd's
// verdict (false: no proxy at all); exact is false where the option holds
// something this parser does not read as northd's scanf-based one would
// (leading zeros, a netmask, text glued to an address), and the caller
// then does not model the responder.
func parseARPProxy(opt string, responder bool) (px arpProxy, valid, exact bool) {
	rest := opt
	if responder {
		if mac, n, ok := ethaddr.Scan(opt); ok {
			px.mac, rest = mac.String(), opt[n:]
			valid = true // extract_addresses: a MAC is enough
			if rest != "" && !isSpace(rest[0]) {
				return px, valid, false
			}
		}
	}
	for _, tok := range strings.Fields(rest) {
		addr, plen, hasPlen := strings.Cut(tok, "/")
		ip, err := netip.ParseAddr(addr)
		n, perr := strconv.Atoi(plen)
		switch {
		case err == nil && ip.Is4() && (!hasPlen || perr == nil && n >= 0 && n <= 32 && plen == strconv.Itoa(n)):
			if !hasPlen {
				n = 32
			}
			if responder {
				px.ip4 = append(px.ip4, ip.String()+"/"+strconv.Itoa(n))
			} else {
				px.ip4 = append(px.ip4, ip.String())
			}
		case err == nil && !ip.Is4() && ip.Zone() == "" && (!hasPlen || perr == nil && n >= 0 && n <= 128 && plen == strconv.Itoa(n)):
			px.ip6 = true
		case !hasPlen && isMAC(tok):
			// the address scan stops at a MAC (it reads neither as
			// IPv4 nor as IPv6)
			return px, valid || len(px.ip4) > 0 || px.ip6, true
		default:
			return px, valid || len(px.ip4) > 0 || px.ip6, false
		}
	}
	return px, valid || len(px.ip4) > 0 || px.ip6, true
}

func isMAC(s string) bool {
	_, err := ethaddr.Parse(s)
	return err == nil
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// modelARPProxy adds the proxy responder flows of switch d's router ports
// with arp_proxy (northd build_lswitch_arp_nd_responder_known_ips, after
// the port's own addresses): from release.ARPProxyResponder one flow at
// priority 30 for all the port's IPv4 addresses and networks (from
// release.FromRouterPortBit not for packets from a router port,
// reg0[18]), answered with the option's MAC or the peer router port's;
// before it one at priority 50 for the addresses, with the peer's MAC.
// The IPv6 ND responder stays not traced (unmodelled.go's nd_ns flow on a
// switch with a router port). A port with "unknown" addresses or on a
// vlan-passthru switch has no proxy responder; one whose option or state
// the model does not read as northd does (disabled, an option parsed
// inexactly) makes every ARP/ND request on the switch not traced. It reports whether the switch has an
// arp_proxy port as northd counts it (has_arp_proxy_port), which adds
// unicast flows to the ports' own responder (modelARP) and whether it
// added flows to the stage.
func (d *dpModel) modelARPProxy(v *nbview.View) (hasProxy, added bool) {
	responder := d.has(release.ARPProxyResponder)
	for _, name := range slices.Sorted(maps.Keys(d.ports)) {
		p := d.ports[name]
		opt, ok := p.Options["arp_proxy"]
		if !ok || p.Type != "router" {
			continue
		}
		rp := v.RouterPortPeer(p)
		if rp == nil {
			continue // (northd parses the option of a peered port only)
		}
		px, valid, exact := parseARPProxy(opt, responder)
		if exact && !valid {
			continue
		}
		hasProxy = hasProxy || valid
		if !proxyAnswers(d.ls, p) {
			continue // (northd returns before the proxy responder)
		}
		if !exact || (p.Enabled != nil && !*p.Enabled) {
			added = true
			d.notTracedFlow(lflow.InARPRsp, 65535, "arp.op == 1 || nd_ns",
				"has arp_proxy port "+name+": the proxy ARP/ND responder for its option or state is not modelled")
			continue
		}
		if len(px.ip4) == 0 {
			continue
		}
		mac := px.mac
		if hw, _, ok := ethaddr.Scan(rp.MAC); mac == "" && ok {
			mac = hw.String()
		}
		if mac == "" {
			continue // (no MAC to answer with: northd writes nothing)
		}
		reply := "eth.dst = eth.src; eth.src = " + mac + "; arp.op = 2; /* ARP reply */ arp.tha = arp.sha; arp.sha = " + mac +
			"; arp.tpa <-> arp.spa; outport = inport; flags.loopback = 1; output;"
		m, prio := "arp.op == 1 && arp.tpa == {"+strings.Join(px.ip4, ",")+"}", 50
		if responder {
			prio = 30
			if d.has(release.FromRouterPortBit) {
				m = "reg0[18] == 0 && " + m
			}
		}
		added = true
		d.add(lflow.InARPRsp, prio, m, reply, p.UUID)
	}
	return hasProxy, added
}

// proxyAnswers reports whether northd reaches the proxy responder of
// router port p: build_lswitch_arp_nd_responder_known_ips returns before
// it for a port with "unknown" addresses or on a vlan-passthru switch.
func proxyAnswers(ls *nbdb.LogicalSwitch, p *nbdb.LogicalSwitchPort) bool {
	return !slices.Contains(p.Addresses, "unknown") && !nbview.VLANPassthru(ls)
}
