package trace

import (
	"github.com/aclc/aclc/nbschema/nbdb"
)

// isUUID reports whether s has the form of a UUID (8-4-4-4-12 hex digits).
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// shortenUUID is ovn-trace's shorten_uuid: a name ending in a UUID keeps
// only the first 6 digits of it ("neutron-2b1f6a1e-..." → "neutron-2b1f6a").
func shortenUUID(s string) string {
	if len(s) >= 36 && isUUID(s[len(s)-36:]) {
		return s[:len(s)-30]
	}
	return s
}

// friendlyPort is the name ovn-trace prints for a port: the Port_Binding
// external_ids:name (the NB neutron:port_name, or an NB external_ids:name)
// or the port name, UUIDs shortened.
func friendlyPort(p *nbdb.LogicalSwitchPort, name string) string {
	if p != nil {
		if n := p.ExternalIDs["neutron:port_name"]; n != "" {
			return shortenUUID(n)
		}
		if n := p.ExternalIDs["name"]; n != "" {
			return shortenUUID(n)
		}
	}
	return shortenUUID(name)
}

// friendlyDP is the name ovn-trace prints for a switch: its
// neutron:network_name, or its name, UUIDs shortened.
func friendlyDP(ls *nbdb.LogicalSwitch) string {
	if n := ls.ExternalIDs["neutron:network_name"]; n != "" {
		return shortenUUID(n)
	}
	return shortenUUID(ls.Name)
}

// friendlyLR is the name ovn-trace prints for a router: its
// neutron:router_name (northd's Datapath_Binding name2), or its name,
// UUIDs shortened.
func friendlyLR(lr *nbdb.LogicalRouter, name string) string {
	if lr != nil {
		if n := lr.ExternalIDs["neutron:router_name"]; n != "" {
			return shortenUUID(n)
		}
	}
	return shortenUUID(name)
}

// fport returns the friendly name of the port called name on the traced
// switch.
func (r *run) fport(name string) string {
	return friendlyPort(r.dp.ports[name], name)
}

// FriendlyPort is the name ovn-trace prints for port p (in its pipeline
// headers and output lines), for tests that read ovn-trace's output.
func FriendlyPort(p *nbdb.LogicalSwitchPort) string { return friendlyPort(p, p.Name) }
