package trace

import (
	"fmt"
	"math/big"
	"net/netip"
	"strings"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/internal/ethaddr"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/sbschema"
)

// SB is what only the Southbound database knows that a trace reads, as
// ovn-trace reads it (read_mac_bindings): the neighbours ovn-controller
// learned. aclc never reads northd's logical flows from it. A nil *SB is
// an SB with none: the answer ovn-trace gives over an SB whose MAC_Binding
// table is empty (a router then sends an ARP request for its next hop),
// and the trace says so in a warning when a router looks a next hop up.
type SB struct {
	MACBindings []sbschema.MACBinding
}

// find is ovntrace_mac_binding_find(_mac_ip): the binding of ip on port,
// which must also be at mac when mac is not nil.
func (sb *SB) find(port string, ip netip.Addr, mac *ethaddr.Addr) (sbschema.MACBinding, bool) {
	if sb == nil {
		return sbschema.MACBinding{}, false
	}
	for _, b := range sb.MACBindings {
		if b.LogicalPort == port && b.IP == ip && (mac == nil || *mac == b.MAC) {
			return b, true
		}
	}
	return sbschema.MACBinding{}, false
}

// neighborArgs parses the arguments of get_arp(P, IP), get_nd(P, IP),
// lookup_arp(P, IP, MAC), lookup_nd(P, IP, MAC), lookup_arp_ip(P, IP) and
// lookup_nd_ip(P, IP): the port field, the IP field and the MAC field
// ("" when none).
func neighborArgs(call string) (port, ip, mac string, ok bool) {
	args, ok := inner(call, '(', ')')
	if !ok {
		return "", "", "", false
	}
	f := strings.Split(args, ",")
	for i := range f {
		f[i] = strings.TrimSpace(f[i])
	}
	switch len(f) {
	case 2:
		return f[0], f[1], "", true
	case 3:
		return f[0], f[1], f[2], true
	}
	return "", "", "", false
}

// ipOf reads an IP from the field an action names: IPv6 from xxregs,
// ip6.* and nd.target, else IPv4 (reg0, ip4.dst, arp.spa).
func ipOf(m *expr.Microflow, field string) netip.Addr {
	n := getInt(m, field)
	if strings.HasPrefix(field, "xxreg") || strings.HasPrefix(field, "ip6.") || field == "nd.target" {
		var b [16]byte
		n.FillBytes(b[:])
		return netip.AddrFrom16(b)
	}
	var b [4]byte
	n.FillBytes(b[:])
	return netip.AddrFrom4(b)
}

// getMACBind is ovn-trace's execute_get_mac_bind (get_arp, get_nd): the
// next hop's MAC from the SB MAC_Binding table into eth.dst, all zeros
// when it has none.
//
// A next hop with an NB Static_MAC_Binding and no SB binding ends the
// trace "not traced" (false): ovn-controller would use the static MAC,
// ovn-trace does not.
func (r *run) getMACBind(a action, m *expr.Microflow, super *Node, stage string) bool {
	portF, ipF, _, ok := neighborArgs(a.text)
	if !ok {
		super.add(NodeError, "*** aclc trace cannot read the arguments of "+a.text)
		return true
	}
	port, ip := getString(m, portF), ipOf(m, ipF)
	b, found := r.opt.SB.find(port, ip, nil)
	if !found {
		for _, id := range nbschema.SortedKeys(r.t.snap.StaticMACBindings) {
			if s := r.t.snap.StaticMACBindings[id]; s.LogicalPort == port && s.IP == ip.String() {
				// ovn-controller uses it, ovn-trace (which reads no SB
				// Static_MAC_Binding) does not: the two disagree
				r.stopNotTraced(super, fmt.Sprintf("%s next hop %s on %s: NB Static_MAC_Binding %s (ovn-controller uses it, ovn-trace does not) (%s)",
					r.dpName(), ip, port, s.MAC, stage))
				return false
			}
		}
	}
	if r.opt.SB == nil {
		r.warnf("%s: no SB given (--sb): its MAC_Binding table is taken as empty, as ovn-trace over an SB with no learned neighbours: no MAC for next hop %s on %s, so the router asks for it", r.dpName(), ip, port)
	}
	if found {
		super.add(NodeAction, fmt.Sprintf("/* MAC binding to %s. */", b.MAC))
	} else {
		super.add(NodeAction, "/* No MAC binding. */")
	}
	m.Set("eth.dst", new(big.Int).SetBytes(b.MAC[:]))
	super.add(NodeModify, "eth.dst = "+b.MAC.String())
	return true
}

// lookupMACBind is ovn-trace's execute_lookup_mac_bind(_ip) (lookup_arp,
// lookup_nd, lookup_arp_ip, lookup_nd_ip): 1 into the destination when the
// SB binds the IP on the port (to the MAC, when one is given). It decides
// only whether the router learns the neighbour, not the packet's fate.
func (r *run) lookupMACBind(a action, m *expr.Microflow, super *Node) {
	portF, ipF, macF, ok := neighborArgs(a.rhs)
	if !ok {
		super.add(NodeError, "*** aclc trace cannot read the arguments of "+a.text)
		return
	}
	var mac *ethaddr.Addr
	if macF != "" {
		var hw ethaddr.Addr
		getInt(m, macF).FillBytes(hw[:])
		mac = &hw
	}
	_, found := r.opt.SB.find(getString(m, portF), ipOf(m, ipF), mac)
	switch {
	case !found:
		m.Set(a.lhs, 0)
		super.add(NodeAction, "/* lookup failed - No MAC binding. */")
		return
	case mac != nil:
		// (ovn-trace prints the packet's eth.dst here, not the binding's)
		var dst ethaddr.Addr
		getInt(m, "eth.dst").FillBytes(dst[:])
		super.add(NodeAction, fmt.Sprintf("/* MAC binding to %s found. */", dst))
	default:
		super.add(NodeAction, "/* MAC binding found. */")
	}
	m.Set(a.lhs, 1)
}
