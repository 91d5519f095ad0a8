package nbview

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// Resolver returns what $name and @name resolve to for ovn-controller on
// logical switch datapath (a name or UUID), as ovn-northd writes the
// Southbound:
//
//   - every NB Address_Set, by name, and svc_monitor_mac (NB_Global
//     options:svc_monitor_mac);
//   - for every Port_Group, the address sets <pg>_ip4 and <pg>_ip6 holding
//     the IPv4/IPv6 addresses of its ports (from Logical_Switch_Port
//     "MAC IP..." addresses and dynamic_addresses), whether or not the group
//     has ports;
//   - a Port_Group exists on the datapath only if it has a port the
//     switch owns, and then holds only those ports.
//
// Ports lists the ports the switch owns. With datapath "" a port group
// exists if it has a port on any switch, and Ports lists every owned port.
func (v *View) Resolver(datapath string) (expr.MapResolver, error) {
	s := v.s
	r := expr.MapResolver{AddressSets: v.addressSets(), PortGroups: map[string][]string{}, Ports: map[string]bool{}}
	onDP := map[string]bool{} // switch UUID → wanted
	for id, ls := range s.Switches {
		if datapath == "" || ls.Name == datapath || id == datapath {
			onDP[id] = true
		}
	}
	if datapath != "" && len(onDP) == 0 {
		return r, fmt.Errorf("no logical switch named %q", datapath)
	}
	for p, sw := range v.portSwitch {
		if onDP[sw] {
			r.Ports[s.Ports[p].Name] = true
		}
	}
	for _, pg := range s.PortGroups {
		var ports []string
		for _, pid := range pg.Ports {
			if lsp := s.Ports[pid]; lsp != nil && onDP[v.portSwitch[pid]] {
				ports = append(ports, lsp.Name)
			}
		}
		if len(ports) > 0 {
			r.PortGroups[pg.Name] = ports
		}
	}
	return r, nil
}

// SwitchPortGroupPorts returns the port groups present on switch sw, by
// name, each with the names of its ports the switch owns (in the port
// group's column order): what @name resolves to there.
func (v *View) SwitchPortGroupPorts(sw string) map[string][]string {
	s := v.s
	out := make(map[string][]string, len(v.switchPGs[sw]))
	for _, id := range v.switchPGs[sw] {
		pg := s.PortGroups[id]
		var ports []string
		for _, p := range pg.Ports {
			if v.portSwitch[p] == sw {
				ports = append(ports, s.Ports[p].Name)
			}
		}
		out[pg.Name] = ports
	}
	return out
}

// addressSets returns every address set the SB holds, by name.
func (v *View) addressSets() map[string][]string {
	s := v.s
	out := make(map[string][]string, len(s.AddressSets)+2*len(s.PortGroups)+1)
	for _, as := range s.AddressSets {
		out[as.Name] = append([]string(nil), as.Addresses...)
	}
	// northd always publishes svc_monitor_mac (randomly generated and
	// written back to NB_Global options when unset).
	// From 26.03 the set also holds svc_monitor_mac_dst (network function
	// health checks), likewise generated when unset.
	out["svc_monitor_mac"] = nil
	keys := []string{"svc_monitor_mac"}
	if s.Release.Has(release.SvcMonitorMACDst) {
		keys = append(keys, "svc_monitor_mac_dst")
	}
	for _, k := range keys {
		if mac := s.GlobalOption(k); mac != "" {
			out["svc_monitor_mac"] = append(out["svc_monitor_mac"], mac)
		}
	}
	for _, pg := range s.PortGroups {
		var v4, v6 []string
		for _, pid := range pg.Ports {
			if lsp := s.Ports[pid]; lsp != nil {
				v4, v6 = appendPortIPs(lsp, v4, v6)
			}
		}
		out[pg.Name+"_ip4"] = v4
		out[pg.Name+"_ip6"] = v6
	}
	return out
}

// PortIPs returns the IPv4 and IPv6 addresses of a Logical_Switch_Port
// as northd puts them in its port group's <pg>_ip4 and <pg>_ip6 address
// sets: those of its "MAC IP..." addresses entries (not the dynamic
// ones), then those of dynamic_addresses; prefixes dropped, entries that
// do not parse skipped whole.
func PortIPs(lsp *nbdb.LogicalSwitchPort) (v4, v6 []string) {
	return appendPortIPs(lsp, nil, nil)
}

func appendPortIPs(lsp *nbdb.LogicalSwitchPort, v4, v6 []string) ([]string, []string) {
	for _, a := range lsp.Addresses {
		if !isDynamicAddress(a) {
			v4, v6 = splitAddresses(a, v4, v6)
		}
	}
	if lsp.DynamicAddresses != nil {
		v4, v6 = splitAddresses(*lsp.DynamicAddresses, v4, v6)
	}
	return v4, v6
}

// isDynamicAddress is northd's is_dynamic_lsp_address: "dynamic",
// "MAC dynamic", "dynamic IP..." .
func isDynamicAddress(a string) bool {
	f := strings.Fields(a)
	return len(f) > 0 && (f[0] == "dynamic" || (len(f) > 1 && f[1] == "dynamic"))
}

// splitAddresses appends the IPs of a port address entry "MAC IP..." as
// northd's split_addresses does: entries that do not parse are skipped
// whole, prefixes are dropped.
func splitAddresses(a string, v4, v6 []string) ([]string, []string) {
	f := strings.Fields(a)
	if len(f) == 0 {
		return v4, v6
	}
	if !expr.IsMAC(f[0]) {
		return v4, v6
	}
	var n4, n6 []string
	for _, tok := range f[1:] {
		addr, _, _ := strings.Cut(tok, "/")
		ip, err := netip.ParseAddr(addr)
		switch {
		case err != nil || ip.Zone() != "":
			return v4, v6
		case ip.Is4():
			n4 = append(n4, ip.String())
		default:
			n6 = append(n6, ip.String())
		}
	}
	return append(v4, n4...), append(v6, n6...)
}
