package reach

import (
	"net/netip"
	"slices"
	"strings"

	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
)

// This file resolves the endpoints of a question: a port, a port group or
// an address set, to the ports they stand for.

// Endpoints returns the ports a selector stands for, in name order:
//
//   - "NAME": the Logical_Switch_Port called NAME;
//   - "@PG": the ports of the Port_Group called PG (every port it lists
//     that a switch owns, whatever the switch);
//   - "$AS": the ports with an address in the address set AS, as $AS
//     resolves in a match (an NB Address_Set, or a port group's
//     <pg>_ip4/<pg>_ip6): a port is in it when at least one of its IP
//     addresses (nbview.PortIPs: those of its "MAC IP..." addresses and
//     of dynamic_addresses) equals an address of the set or lies in one
//     of its CIDR prefixes. MAC entries of the set, and ports without an
//     IP address, match nothing.
//
// An unknown name, a port group without ports and an address set that
// matches no port are an *InputError.
func (e *Engine) Endpoints(sel string) ([]string, error) {
	var names []string
	switch {
	case strings.HasPrefix(sel, "@"):
		pg := e.portGroup(sel[1:])
		if pg == nil {
			return nil, inputErrorf("no port group %q", sel[1:])
		}
		for _, id := range pg {
			if _, owned := e.owned(id); owned {
				names = append(names, e.snap.Ports[id].Name)
			}
		}
		if len(names) == 0 {
			return nil, inputErrorf("port group %q has no port on a switch", sel[1:])
		}
	case strings.HasPrefix(sel, "$"):
		res, err := e.view.Resolver("")
		if err != nil {
			return nil, err
		}
		set, ok := res.AddressSets[sel[1:]]
		if !ok {
			return nil, inputErrorf("no address set %q", sel[1:])
		}
		prefixes := addressPrefixes(set)
		for id := range e.snap.Ports {
			name, owned := e.owned(id)
			if owned && portInSet(e.snap.Ports[id], prefixes) {
				names = append(names, name)
			}
		}
		if len(names) == 0 {
			return nil, inputErrorf("address set %q holds no address of a port", sel[1:])
		}
	default:
		if _, ok := e.view.PortByName(sel); !ok {
			return nil, inputErrorf("no port %q", sel)
		}
		names = []string{sel}
	}
	slices.Sort(names)
	return slices.Compact(names), nil
}

// DefaultPorts returns the ports an endpoint left out stands for: every
// port a switch owns except those of type router (they stand for the
// routers that join switches, not for endpoints of traffic), in name
// order.
func (e *Engine) DefaultPorts() []string {
	var names []string
	for id, lsp := range e.snap.Ports {
		if name, owned := e.owned(id); owned && lsp.Type != "router" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// owned returns the name of port id and whether a switch owns it (a
// port no switch lists is not in the NB's topology).
func (e *Engine) owned(id string) (string, bool) {
	if e.view.PortSwitch(id) == "" {
		return "", false
	}
	return e.snap.Ports[id].Name, true
}

// portGroup returns the port UUIDs of the port group called name, or nil
// when there is none.
func (e *Engine) portGroup(name string) []string {
	for _, pg := range e.snap.PortGroups {
		if pg.Name == name {
			if pg.Ports == nil {
				return []string{}
			}
			return pg.Ports
		}
	}
	return nil
}

// addressPrefixes parses an address set's entries as prefixes (an address
// is a full-length prefix); entries that are not IP addresses or prefixes
// (MACs) are left out.
func addressPrefixes(set []string) []netip.Prefix {
	var out []netip.Prefix
	for _, a := range set {
		if p, err := netip.ParsePrefix(a); err == nil {
			out = append(out, p.Masked())
		} else if ip, err := netip.ParseAddr(a); err == nil {
			out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
		}
	}
	return out
}

// portInSet reports whether one of the port's IP addresses lies in one of
// the prefixes.
func portInSet(lsp *nbdb.LogicalSwitchPort, prefixes []netip.Prefix) bool {
	v4, v6 := nbview.PortIPs(lsp)
	for _, a := range append(v4, v6...) {
		ip, err := netip.ParseAddr(a)
		if err != nil {
			continue
		}
		for _, p := range prefixes {
			if p.Contains(ip) {
				return true
			}
		}
	}
	return false
}
