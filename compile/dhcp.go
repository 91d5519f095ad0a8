package compile

import (
	"errors"
	"net"
	"net/netip"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// buildDHCPAndDNS adds the priority-34000 ls_out_acl flows that let
// ovn-controller's DHCP and DNS replies through the egress ACLs.
func (g *global) buildDHCPAndDNS(od *datapath, b *builder, hasStateful bool) {
	act := "next;"
	if g.r.verdicts {
		act = regbitVerdictAllow + " = 1; next;"
	}
	if hasStateful && !g.r.dhcpNoCommit {
		act = "ct_commit; next;"
		if g.r.verdicts {
			act = regbitVerdictAllow + " = 1; ct_commit; next;"
		}
	}
	_, relay := od.LS.OtherConfig["dhcp_relay_port"]
	relay = relay && g.r.dhcpRelaySkip
	for _, p := range od.LS.Ports {
		lsp, ok := g.s.Ports[p]
		if !ok || lsp.Type == "external" {
			continue
		}
		if g.r.dhcpPerAddress && (relay || lsp.Type == "router" || (lsp.Enabled != nil && !*lsp.Enabled)) {
			continue
		}
		if lsp.Dhcpv4Options != nil {
			if d, ok := g.s.DHCPOptions[*lsp.Dhcpv4Options]; ok {
				id, mac, lease := d.Options["server_id"], d.Options["server_mac"], d.Options["lease_time"]
				if id != "" && mac != "" && lease != "" && (!g.r.dhcpPerAddress || offersIn(lsp, d.Cidr, false)) {
					m := "outport == \"" + lsp.Name + "\" && eth.src == " + mac + " && ip4.src == " + id +
						" && udp && udp.src == 67 && udp.dst == 68"
					b.addFrom(lflow.OutACL, 34000, m, act, d.UUID)
				}
			}
		}
		if lsp.Dhcpv6Options != nil {
			if d, ok := g.s.DHCPOptions[*lsp.Dhcpv6Options]; ok {
				mac := d.Options["server_id"]
				if hw, err := parseEthAddr(mac); err == nil && (!g.r.dhcpPerAddress || offersIn(lsp, d.Cidr, true)) {
					m := "outport == \"" + lsp.Name + "\" && eth.src == " + mac + " && ip6.src == " + linkLocal(hw) +
						" && udp && udp.src == 547 && udp.dst == 546"
					b.addFrom(lflow.OutACL, 34000, m, act, d.UUID)
				}
			}
		}
	}
	dnsMatch, dnsAct := "udp.src == 53", "next;"
	if g.r.dnsFromCtrl {
		dnsMatch = "flags.from_ctrl && udp.src == 53"
	}
	if g.r.verdicts {
		dnsAct = regbitVerdictAllow + " = 1; next;"
	}
	if hasStateful {
		dnsAct = "ct_commit; next;"
		if g.r.verdicts {
			dnsAct = regbitVerdictAllow + " = 1; ct_commit; next;"
		}
	}
	for _, id := range od.LS.DNSRecords {
		if dns, ok := g.s.DNS[id]; ok && len(dns.Records) > 0 {
			b.add(lflow.OutACL, 34000, dnsMatch, dnsAct)
			break
		}
	}
}

// offersIn reports whether one of lsp's own IPv4 (v6: IPv6) addresses lies
// in cidr, which build_dhcpv4_action / build_dhcpv6_action require before
// northd writes any DHCP flow for the port (an unparsable cidr: none).
func offersIn(lsp *nbdb.LogicalSwitchPort, cidr string, v6 bool) bool {
	pfx, err := netip.ParsePrefix(cidr)
	if err != nil {
		a, err := netip.ParseAddr(cidr)
		if err != nil {
			return false
		}
		pfx = netip.PrefixFrom(a, a.BitLen())
	}
	for _, la := range lspAddresses(lsp) {
		ips := la.v4
		if v6 {
			ips = la.v6
		}
		for _, ip := range ips {
			if pfx.Masked().Contains(ip) {
				return true
			}
		}
	}
	return false
}

// parseEthAddr accepts what OVS's eth_addr_from_string accepts for the
// common case: six colon-separated hex octets.
func parseEthAddr(s string) (net.HardwareAddr, error) {
	hw, err := net.ParseMAC(s)
	if err != nil {
		return nil, err
	}
	if len(hw) != 6 {
		return nil, errNotEthernet
	}
	return hw, nil
}

// linkLocal is in6_generate_lla: the EUI-64 link-local address of mac.
func linkLocal(mac net.HardwareAddr) string {
	var a [16]byte
	a[0], a[1] = 0xfe, 0x80
	a[8] = mac[0] ^ 0x02
	a[9], a[10] = mac[1], mac[2]
	a[11], a[12] = 0xff, 0xfe
	a[13], a[14], a[15] = mac[3], mac[4], mac[5]
	return netip.AddrFrom16(a).String()
}

var errNotEthernet = errors.New("not a 48-bit Ethernet address")
