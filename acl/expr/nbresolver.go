package expr

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/aclc/aclc/nbschema"
)

// MapResolver is a Resolver backed by maps: AddressSets maps a name to its
// addresses, PortGroups a name to its ports on the datapath in question (a
// group absent from PortGroups does not exist there).
type MapResolver struct {
	AddressSets map[string][]string // address set name → addresses
	PortGroups  map[string][]string // port group name → port names
	// Ports, when non-nil, lists the logical ports of the datapath; Eval
	// then treats other names as ovn-trace does (never equal, never
	// chassis-resident).
	Ports map[string]bool
}

// PortExists implements PortLookup: every name exists when Ports is nil.
func (m MapResolver) PortExists(name string) bool { return m.Ports == nil || m.Ports[name] }

// IsChassisResident implements ChassisResidency like ovn-trace, which
// treats every existing port as resident.
func (m MapResolver) IsChassisResident(port string) bool { return port == "" || m.PortExists(port) }

// AddressSet implements Resolver.
func (m MapResolver) AddressSet(name string) ([]string, bool) {
	a, ok := m.AddressSets[name]
	return a, ok
}

// PortGroup implements Resolver.
func (m MapResolver) PortGroup(name string) ([]string, bool) {
	p, ok := m.PortGroups[name]
	return p, ok
}

// NewSnapshotResolver returns the Resolver ovn-controller would see for
// logical switch datapath (a name or UUID) given the NB snapshot s, as
// ovn-northd 23.03 builds the Southbound from it:
//
//   - every NB Address_Set, by name, and svc_monitor_mac (NB_Global
//     options:svc_monitor_mac);
//   - for every Port_Group, the address sets <pg>_ip4 and <pg>_ip6 holding
//     the IPv4/IPv6 addresses of its ports (from Logical_Switch_Port
//     "MAC IP..." addresses and dynamic_addresses), whether or not the group
//     has ports;
//   - a Port_Group exists on the datapath only if it has at least one port
//     on that switch, and then holds only those ports.
//
// Ports lists the switch's logical ports. With datapath "" a port group
// exists if it has a port on any switch, and Ports lists every port.
func NewSnapshotResolver(s *nbschema.Snapshot, datapath string) (MapResolver, error) {
	r := MapResolver{AddressSets: map[string][]string{}, PortGroups: map[string][]string{}, Ports: map[string]bool{}}
	onDP := map[string]bool{} // port UUID → on the wanted switch
	found := datapath == ""
	for id, ls := range s.Switches {
		if datapath == "" || ls.Name == datapath || id == datapath {
			found = true
			for _, p := range ls.Ports {
				onDP[p] = true
				if lsp := s.Ports[p]; lsp != nil {
					r.Ports[lsp.Name] = true
				}
			}
		}
	}
	if !found {
		return r, fmt.Errorf("no logical switch named %q", datapath)
	}
	for _, as := range s.AddressSets {
		r.AddressSets[as.Name] = append([]string(nil), as.Addresses...)
	}
	// northd always publishes svc_monitor_mac (randomly generated and
	// written back to NB_Global options when unset).
	r.AddressSets["svc_monitor_mac"] = nil
	if mac := s.GlobalOption("svc_monitor_mac"); mac != "" {
		r.AddressSets["svc_monitor_mac"] = []string{mac}
	}
	for _, pg := range s.PortGroups {
		var v4, v6, ports []string
		for _, pid := range pg.Ports {
			lsp := s.Ports[pid]
			if lsp == nil {
				continue
			}
			if onDP[pid] {
				ports = append(ports, lsp.Name)
			}
			for _, a := range lsp.Addresses {
				if !isDynamicAddress(a) {
					v4, v6 = splitAddresses(a, v4, v6)
				}
			}
			if lsp.DynamicAddresses != nil {
				v4, v6 = splitAddresses(*lsp.DynamicAddresses, v4, v6)
			}
		}
		r.AddressSets[pg.Name+"_ip4"] = v4
		r.AddressSets[pg.Name+"_ip6"] = v6
		if len(ports) > 0 {
			r.PortGroups[pg.Name] = ports
		}
	}
	return r, nil
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
	if _, ok := parseMAC(f[0]); !ok {
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
