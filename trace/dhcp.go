package trace

import (
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc/aclc/internal/ethaddr"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// This file models OVN's native DHCP responder on a switch: the
// ls_in_dhcp_options flow whose put_dhcp_opts() (put_dhcpv6_opts()) makes
// ovn-controller answer a port's DHCP requests, and the
// ls_in_dhcp_response flow that sends the answer back out of the port
// (northd build_lswitch_dhcp_options_and_response). ovn-trace assumes the
// request is a DHCPDISCOVER or DHCPREQUEST and the action succeeds.
// External ports, relays and options the model does not read as OVN's
// action parser does stay not traced.

// dhcpv4OptionTypes are the DHCPv4 options OVN knows (lib/ovn-l7.h, the
// same in every release aclc verifies) by the kind of value its action
// parser requires: a string or a number ("host_id": either).
var dhcpv4OptionTypes = map[string]string{
	"offerip": "num", "netmask": "num", "router": "num", "dns_server": "num", "log_server": "num",
	"lpr_server": "num", "hostname": "str", "domain_name": "str", "swap_server": "num",
	"policy_filter": "num", "router_solicitation": "num", "nis_server": "num", "ntp_server": "num",
	"server_id": "num", "tftp_server": "host_id", "classless_static_route": "num",
	"ms_classless_static_route": "num", "ip_forward_enable": "num", "router_discovery": "num",
	"ethernet_encap": "num", "default_ttl": "num", "tcp_ttl": "num", "mtu": "num", "lease_time": "num",
	"T1": "num", "T2": "num", "bootfile_name": "str", "wpad": "str", "path_prefix": "str",
	"tftp_server_address": "num", "domain_search_list": "str", "broadcast_address": "num",
	"netbios_name_server": "num", "netbios_node_type": "num", "arp_cache_timeout": "num",
	"tcp_keepalive_interval": "num", "next_server": "num",
}

// dhcpv6OptionTypes are the DHCPv6 options every release aclc verifies
// knows (lib/ovn-l7.h; later ones, such as bootfile_name and fqdn, are
// not modelled).
// ndRAOptionTypes are put_nd_ra_opts()'s options (ovn-l7.h
// nd_ra_opts_init, the same from 23.03 to 26.09).
var ndRAOptionTypes = map[string]string{
	"addr_mode": "str", "router_preference": "str", "slla": "num", "prefix": "num",
	"mtu": "num", "rdnss": "num", "dnssl": "str", "route_info": "str",
}

var dhcpv6OptionTypes = map[string]string{
	"server_id": "num", "ia_addr": "num", "dns_server": "num", "domain_search": "str",
}

// modelDHCP adds the DHCP responder flows of switch d's ports: for each
// port with DHCPv4 (DHCPv6) options, the flows northd writes for the first
// of its IPv4 (IPv6) addresses in the options' cidr
// (build_dhcpv4_options_flows, build_dhcpv6_options_flows); what the model
// does not write as northd does (an external or disabled port, a DHCP
// relay on the switch, several address entries, an option it cannot read)
// ends a DHCP request from the port "not traced".
func (d *dpModel) modelDHCP(s *nbschema.Snapshot) {
	any := false
	for _, name := range slices.Sorted(maps.Keys(d.ports)) {
		p := d.ports[name]
		if p.Dhcpv4Options == nil && p.Dhcpv6Options == nil {
			continue
		}
		any = true
		if p.Type == "external" {
			// (its flows match the requests from the switch's
			// localnet ports, on the chassis of its HA group)
			for _, ln := range slices.Sorted(maps.Keys(d.ports)) {
				if d.ports[ln].Type == "localnet" {
					d.notDHCP(ln, "((udp.src == 68 && udp.dst == 67) || (udp.src == 546 && udp.dst == 547))",
						"external port "+name+" has DHCP options: OVN's DHCP responder for it is not modelled")
				}
			}
		}
		for _, v6 := range []bool{false, true} {
			id, req := p.Dhcpv4Options, "(udp.src == 68 && udp.dst == 67)"
			if v6 {
				id, req = p.Dhcpv6Options, "(udp.src == 546 && udp.dst == 547)"
			}
			if id == nil {
				continue
			}
			if reason := d.dhcpFlows(s.DHCPOptions[*id], p, v6); reason != "" {
				d.notDHCP(name, req, "it has DHCP options, but "+reason)
			}
		}
	}
	if any {
		d.ensureDefault(lflow.InDHCPOptions)
		d.ensureDefault(lflow.InDHCPResponse)
	}
}

// notDHCP ends the DHCP requests (match) from port name not traced.
func (d *dpModel) notDHCP(name, match, why string) {
	m := "inport == " + strconv.Quote(name) + " && " + match
	why = "DHCP request from port " + name + ": " + why
	d.notTracedFlow(lflow.InDHCPOptions, 65535, m, why)
	d.notTracedFlow(lflow.InDHCPResponse, 65535, m, why)
}

// dhcpFlows adds port p's DHCPv4 (v6: DHCPv6) flows for options opts, or
// says why it cannot.
func (d *dpModel) dhcpFlows(opts *nbdb.DHCPOptions, p *nbdb.LogicalSwitchPort, v6 bool) string {
	switch {
	case opts == nil:
		return "its DHCP_Options row is missing"
	case p.Type != "":
		return "its DHCP flows as a port of type " + p.Type + " are not modelled"
	case p.Enabled != nil && !*p.Enabled:
		return "the port is disabled"
	case hasKey(d.ls.OtherConfig, "dhcp_relay_port"):
		return "the switch has a DHCP relay (other_config:dhcp_relay_port): not modelled"
	}
	var entries [][]string
	for _, a := range p.Addresses {
		if a == "dynamic" && p.DynamicAddresses != nil {
			a = *p.DynamicAddresses
		}
		if f := strings.Fields(a); len(f) > 1 {
			entries = append(entries, f)
		} else if len(f) == 1 && f[0] != "unknown" && f[0] != "dynamic" && f[0] != "router" {
			if _, err := ethaddr.Parse(f[0]); err != nil {
				return "its address " + strconv.Quote(a) + " is not read as northd does"
			}
		}
	}
	if len(entries) > 1 {
		return "several address entries: not modelled"
	}
	if len(entries) == 0 {
		return "" // (no address: northd writes no flow)
	}
	mac, err := ethaddr.Parse(entries[0][0])
	if err != nil {
		return "its address " + strconv.Quote(strings.Join(entries[0], " ")) + " is not read as northd does"
	}
	cidr, err := netip.ParsePrefix(opts.Cidr)
	if err != nil || cidr.Addr().Is4() == v6 {
		return "its DHCP options' cidr " + strconv.Quote(opts.Cidr) + " is not read as northd does"
	}
	var offer netip.Addr
	for _, f := range entries[0][1:] {
		ip, err := netip.ParseAddr(strings.SplitN(f, "/", 2)[0])
		if err != nil {
			return "its address " + strconv.Quote(strings.Join(entries[0], " ")) + " is not read as northd does"
		}
		if ip.Is4() != v6 && cidr.Masked().Contains(ip) && !offer.IsValid() {
			offer = ip
		}
	}
	if !offer.IsValid() {
		return "" // (no address in the cidr: northd writes no flow)
	}
	in := "inport == " + strconv.Quote(p.Name) + " && eth.src == " + mac.String()
	if v6 {
		return d.dhcpv6Flows(opts, in, offer)
	}
	return d.dhcpv4Flows(opts, p, in, offer, cidr)
}

// dhcpv4Flows adds the DHCPv4 flows of build_dhcpv4_action for the port
// whose match starts with in, offering offer.
func (d *dpModel) dhcpv4Flows(opts *nbdb.DHCPOptions, p *nbdb.LogicalSwitchPort, in string, offer netip.Addr, cidr netip.Prefix) string {
	serverID, hasID := opts.Options["server_id"]
	serverMAC, hasMAC := opts.Options["server_mac"]
	_, hasLease := opts.Options["lease_time"]
	if !hasID || !hasMAC || !hasLease {
		return "" // build_dhcpv4_action: no flow
	}
	if _, ok := opts.Options["netmask"]; ok {
		return "its options set netmask, which northd adds too: not modelled"
	}
	// the options less server_mac, with the cidr's netmask and the
	// port's hostname, sorted by name
	args := map[string]string{}
	for k, v := range opts.Options {
		if k != "server_mac" {
			args[k] = v
		}
	}
	args["netmask"] = net4Mask(cidr.Bits())
	if h, ok := p.Options["hostname"]; ok {
		args["hostname"] = h
	}
	act := "reg0[3] = put_dhcp_opts(offerip = " + offer.String()
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if _, why := formatDHCPValue(dhcpv4OptionTypes, k, args[k]); why != "" {
			return why
		}
		act += ", " + k + " = " + args[k]
	}
	act += "); next;"
	if d.has(release.DHCPOneRequestFlow) {
		d.add(lflow.InDHCPOptions, 100, in+" && (ip4.src == {"+offer.String()+", 0.0.0.0} && ip4.dst == {"+serverID+", 255.255.255.255}) && udp.src == 68 && udp.dst == 67", act, opts.UUID)
	} else {
		d.add(lflow.InDHCPOptions, 100, in+" && ip4.src == 0.0.0.0 && ip4.dst == 255.255.255.255 && udp.src == 68 && udp.dst == 67", act, opts.UUID)
		d.add(lflow.InDHCPOptions, 100, in+" && ip4.src == "+offer.String()+" && ip4.dst == {"+serverID+", 255.255.255.255} && udp.src == 68 && udp.dst == 67", act, opts.UUID)
	}
	d.add(lflow.InDHCPResponse, 100, in+" && ip4 && udp.src == 68 && udp.dst == 67 && reg0[3]",
		"eth.dst = eth.src; eth.src = "+serverMAC+"; ip4.src = "+serverID+"; udp.src = 67; udp.dst = 68; outport = inport; flags.loopback = 1; output;", opts.UUID)
	return ""
}

// dhcpv6Flows adds the DHCPv6 flows of build_dhcpv6_action for the port
// whose match starts with in, offering offer: put_dhcpv6_opts with
// ia_addr (unless options:dhcpv6_stateless) and the options sorted by
// name, answered from server_id's link-local address.
func (d *dpModel) dhcpv6Flows(opts *nbdb.DHCPOptions, in string, offer netip.Addr) string {
	serverMAC, ok := opts.Options["server_id"]
	hw, err := ethaddr.Parse(serverMAC)
	if _, _, scans := ethaddr.Scan(serverMAC); !ok || err != nil {
		if ok && scans {
			return "its server_id " + strconv.Quote(serverMAC) + " is not read as northd does"
		}
		return "" // build_dhcpv6_action: no flow
	}
	var args []string
	if !strings.EqualFold(opts.Options["dhcpv6_stateless"], "true") {
		args = append(args, "ia_addr = "+offer.String())
	}
	for _, k := range slices.Sorted(maps.Keys(opts.Options)) {
		if k == "dhcpv6_stateless" {
			continue
		}
		if _, why := formatDHCPValue(dhcpv6OptionTypes, k, opts.Options[k]); why != "" {
			return why
		}
		args = append(args, k+" = "+opts.Options[k])
	}
	act := "reg0[3] = put_dhcpv6_opts(" + strings.Join(args, ", ") + "); next;"
	m := in + " && ip6.dst == ff02::1:2 && udp.src == 546 && udp.dst == 547"
	if d.has(release.DHCPv6Multicast) {
		m = in + " && ip6.mcast && ip6.dst == ff02::1:2 && udp.src == 546 && udp.dst == 547"
	}
	d.add(lflow.InDHCPOptions, 100, m, act, opts.UUID)
	d.add(lflow.InDHCPResponse, 100, m+" && reg0[3]",
		"eth.dst = eth.src; eth.src = "+serverMAC+"; ip6.dst = ip6.src; ip6.src = "+hw.LinkLocal().String()+"; udp.src = 547; udp.dst = 546; outport = inport; flags.loopback = 1; output;", opts.UUID)
	return ""
}

// net4Mask is the dotted IPv4 netmask of a prefix length.
func net4Mask(bits int) string {
	m := uint32(0xffffffff) << (32 - bits)
	if bits == 0 {
		m = 0
	}
	return netip.AddrFrom4([4]byte{byte(m >> 24), byte(m >> 16), byte(m >> 8), byte(m)}).String()
}

// formatDHCPValue is option name's value v as ovn-trace prints it
// (expr_constant_set_format of what OVN's lexer read), or why the model
// does not read it as OVN does: an unknown option, a value of the wrong
// kind, or a token it does not print the way OVN's lexer would (only
// canonical IPv4 addresses and networks, decimal numbers, MACs and plain
// quoted strings are read).
func formatDHCPValue(types map[string]string, name, v string) (string, string) {
	kind, ok := types[name]
	if !ok {
		return "", "DHCP option " + name + ": not modelled"
	}
	bad := "DHCP option " + name + "'s value " + strconv.Quote(v) + " is not read as OVN's action parser does"
	s := strings.TrimSpace(v)
	curlies := strings.HasPrefix(s, "{")
	if curlies {
		if !strings.HasSuffix(s, "}") {
			return "", bad
		}
		s = s[1 : len(s)-1]
	}
	var vals []string
	strs, nums := 0, 0
	for _, tok := range strings.Split(s, ",") {
		tok = strings.TrimSpace(tok)
		switch {
		case len(tok) >= 2 && tok[0] == '"' && tok[len(tok)-1] == '"' && !strings.ContainsAny(tok[1:len(tok)-1], "\"\\") && printableASCII(tok):
			strs++
			vals = append(vals, tok)
		case canonicalNum(tok):
			nums++
			vals = append(vals, tok)
		default:
			return "", bad
		}
	}
	if len(vals) == 0 || strs > 0 && nums > 0 || kind == "str" && nums > 0 || kind == "num" && strs > 0 {
		return "", bad
	}
	out := strings.Join(vals, ", ")
	if curlies || len(vals) != 1 {
		out = "{" + out + "}"
	}
	return out, ""
}

// canonicalNum reports whether tok is a number OVN's lexer prints back
// unchanged: a decimal without leading zeros, an IPv4 address (with a
// prefix length), an IPv6 address in inet_ntop's form or a MAC in
// ETH_ADDR_FMT.
func canonicalNum(tok string) bool {
	if n, err := strconv.ParseUint(tok, 10, 64); err == nil && strconv.FormatUint(n, 10) == tok {
		return true
	}
	if mac, err := ethaddr.Parse(tok); err == nil && mac.String() == tok {
		return true
	}
	addr, plen, masked := strings.Cut(tok, "/")
	ip, err := netip.ParseAddr(addr)
	if err != nil || ip.Zone() != "" || ip.String() != addr {
		return false // (an address as inet_ntop prints it)
	}
	if !masked {
		return true
	}
	n, err := strconv.Atoi(plen)
	if err != nil || strconv.Itoa(n) != plen || n < 0 || n > ip.BitLen() {
		return false
	}
	pf := netip.PrefixFrom(ip, n)
	return pf.Masked().Addr() == ip // (unmasked 1-bits are an error)
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// formatPutOpts is the arguments of put_dhcp_opts(), put_dhcpv6_opts() or
// put_nd_ra_opts() (action) as ovn-trace prints them (execute_put_opts:
// each option's name and value, re-read), or ok false.
func formatPutOpts(args, action string) (string, bool) {
	types := map[string]map[string]string{"put_dhcp_opts": dhcpv4OptionTypes, "put_dhcpv6_opts": dhcpv6OptionTypes,
		"put_nd_ra_opts": ndRAOptionTypes}[action]
	var out []string
	depth, start := 0, 0
	args += ","
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case '{':
			depth++
		case '}':
			depth--
		case '"':
			j := strings.IndexByte(args[i+1:], '"')
			if j < 0 {
				return "", false
			}
			i += j + 1
		case ',':
			if depth > 0 {
				continue
			}
			k, v, ok := strings.Cut(args[start:i], "=")
			if !ok {
				return "", false
			}
			k = strings.TrimSpace(k)
			f, why := formatDHCPValue(types, k, v)
			if why != "" {
				return "", false
			}
			out = append(out, k+" = "+f)
			start = i + 1
		}
	}
	return strings.Join(out, ", "), true
}

func hasKey(m map[string]string, k string) bool {
	_, ok := m[k]
	return ok
}
