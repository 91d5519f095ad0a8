package nbview

import (
	"net/netip"
	"strings"

	"github.com/aclc/aclc/internal/ethaddr"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// PortSecurity is the set of packets a port's port_security lets through
// (ingress: from the port, what check_in_port_sec() returns 0 for; egress:
// to it, check_out_port_sec(), which the egress stage skips for eth.mcast
// packets, not part of this set), in matches: Typed ∪ (Other − Known).
// (OVN's language cannot say eth.type ∉ {...}: eth.type is nominal.)
// PortSecPacket.Allowed is the same rules for one packet, with the
// ICMPv6 ND checks too; a test holds the two forms equal.
//
// The rules are ovn-trace's execute_check_in_port_sec and
// execute_check_out_port_sec, which ovn-controller's port security flows
// implement: the first entry whose MAC is the packet's source (ingress)
// or destination (egress) decides; with addresses, IPv4 sources must be
// one of them (or a DHCP request from 0.0.0.0 to the broadcast address),
// ARP must carry the MAC and one of them, IPv6 sources one of them or the
// MAC's link-local address (ICMPv6 ND aside: PortSecurityND); egress
// IPv4/IPv6 destinations must be one of them, broadcast or multicast;
// other ethertypes need only the MAC. Only the addresses of prefixes
// count, as in ovn-trace.
type PortSecurity struct {
	Typed string // the packets of the checked ethertypes that pass
	Other string // the entries' MACs
	Known string // the checked ethertypes
}

// PortSecEntry is one port_security entry as OVN parses it
// (extract_lsp_addresses into struct lport_addresses): a MAC and the
// addresses given with it. Only the addresses of prefixes count, as in
// ovn-trace.
type PortSecEntry struct {
	MAC      ethaddr.Addr
	IP4, IP6 []netip.Addr
}

// anyIP reports whether the entry names no address: then only its MAC is
// checked.
func (e PortSecEntry) anyIP() bool { return len(e.IP4) == 0 && len(e.IP6) == 0 }

// PortSecurityEntries returns p's usable port_security entries, the first
// of each MAC only (the first entry whose MAC is the packet's decides), in
// NB order; none: nothing is checked.
func PortSecurityEntries(p *nbdb.LogicalSwitchPort) []PortSecEntry {
	var out []PortSecEntry
	seen := map[ethaddr.Addr]bool{}
	for _, s := range p.PortSecurity {
		f := strings.Fields(s)
		if len(f) == 0 {
			continue
		}
		hw, err := ethaddr.Parse(f[0])
		if err != nil || seen[hw] {
			continue
		}
		seen[hw] = true
		e := PortSecEntry{MAC: hw}
		for _, ipf := range f[1:] {
			ip, err := netip.ParseAddr(strings.SplitN(ipf, "/", 2)[0])
			switch {
			case err != nil:
			case ip.Is4():
				e.IP4 = append(e.IP4, ip)
			default:
				e.IP6 = append(e.IP6, ip)
			}
		}
		out = append(out, e)
	}
	return out
}

// PortSecurityOf returns p's port security at ingress or egress; ok is
// false when p has no usable port_security entry: nothing is checked.
func PortSecurityOf(p *nbdb.LogicalSwitchPort, ingress bool) (ps PortSecurity, ok bool) {
	var alts, macs []string
	for _, e := range PortSecurityEntries(p) {
		mac := e.MAC.String()
		macs = append(macs, mac)
		ip4, ip6 := addrStrings(e.IP4), addrStrings(e.IP6)
		lla := linkLocal(e.MAC).String()
		any := e.anyIP()
		if ingress {
			alts = append(alts, "(eth.src == "+mac+" && ((eth.type == 0x800 && "+inIP4(any, ip4)+") || (eth.type == 0x806 && arp.sha == "+mac+inARP(ip4)+
				") || (eth.type == 0x86dd && "+inIP6(any, lla, ip6)+")))")
		} else {
			alts = append(alts, "(eth.dst == "+mac+" && ((eth.type == 0x800 && "+outIP(any, ip4, "ip4.dst", "255.255.255.255, 224.0.0.0/4")+
				") || (eth.type == 0x86dd && "+outIP(any, ip6, "ip6.dst", lla+", ff00::/8")+")))")
		}
	}
	if len(alts) == 0 {
		return PortSecurity{}, false
	}
	ps = PortSecurity{Typed: strings.Join(alts, " || "), Other: "eth.src == {" + strings.Join(macs, ", ") + "}", Known: "eth.type == {0x800, 0x806, 0x86dd}"}
	if !ingress {
		ps.Other, ps.Known = "eth.dst == {"+strings.Join(macs, ", ")+"}", "eth.type == {0x800, 0x86dd}"
	}
	return ps, true
}

func addrStrings(as []netip.Addr) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.String()
	}
	return out
}

// inIP4 is the ingress IPv4 rule of one entry.
func inIP4(any bool, ip4 []string) string {
	if any {
		return "1"
	}
	dhcp := "(ip4.src == 0.0.0.0 && ip4.dst == 255.255.255.255 && udp.src == 68 && udp.dst == 67)"
	if len(ip4) == 0 {
		return dhcp
	}
	return "(ip4.src == {" + strings.Join(ip4, ", ") + "} || " + dhcp + ")"
}

// inARP is the ingress ARP rule's address part of one entry.
func inARP(ip4 []string) string {
	if len(ip4) == 0 {
		return ""
	}
	return " && arp.spa == {" + strings.Join(ip4, ", ") + "}"
}

// inIP6 is the ingress IPv6 rule of one entry, for packets other than
// ICMPv6 types 135 and 136 (whose ND options and target port security
// checks too: see PortSecurityND).
func inIP6(any bool, lla string, ip6 []string) string {
	if any {
		return "1"
	}
	return "ip6.src == {" + strings.Join(append(append([]string{}, ip6...), lla), ", ") + "}"
}

// PortSecurityND is the match of the ICMPv6 packets (types 135 and 136:
// neighbor solicitations and advertisements, whatever their TTL and code)
// whose port security check PortSecurityMatch leaves out: it also compares
// their link-layer address options and target, which are fields of the
// packet only where the ND prerequisites hold.
const PortSecurityND = "icmp6.type == {135, 136}"

// outIP is the egress rule of one entry for one IP version.
func outIP(any bool, ips []string, field, more string) string {
	switch {
	case any:
		return "1"
	case len(ips) == 0:
		return "0"
	}
	return field + " == {" + strings.Join(ips, ", ") + ", " + more + "}"
}

// linkLocal is the IPv6 link-local address of a MAC (EUI-64).
func linkLocal(m ethaddr.Addr) netip.Addr {
	return m.LinkLocal()
}
