package trace

import (
	"net/netip"
	"slices"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// This file holds the conntrack original-direction tuple a packet carries
// (OVS's ct_nw_dst, ct_ipv6_dst, ct_tp_dst) and ovn-trace's
// chk_lb_hairpin / chk_lb_hairpin_reply, which read it.

// ctTuple is the original destination of the packet's connection, as
// ovn-trace keeps it in the flow's ct_* fields.
type ctTuple struct {
	dst   netip.Addr
	tpDst uint16
}

// clone copies m with its conntrack tuple.
func (r *run) clone(m *expr.Microflow) *expr.Microflow {
	c := m.Clone()
	if t, ok := r.tuples[m]; ok {
		if r.tuples == nil {
			r.tuples = map[*expr.Microflow]ctTuple{}
		}
		r.tuples[c] = t
	}
	return c
}

// packetTuple is m's destination address and port.
func packetTuple(m *expr.Microflow) ctTuple {
	t := ctTuple{tpDst: uint16(tpDst(m))}
	switch getInt(m, "eth.type").Uint64() {
	case 0x800:
		var b [4]byte
		getInt(m, "ip4.dst").FillBytes(b[:])
		t.dst = netip.AddrFrom4(b)
	case 0x86dd:
		var b [16]byte
		getInt(m, "ip6.dst").FillBytes(b[:])
		t.dst = netip.AddrFrom16(b)
	}
	return t
}

// setTuple records orig's destination as the ct tuple of c, the packet
// after a conntrack action: on 25.09+ for every conntrack action, before
// only when ct_lb DNATs (dnat true).
func (r *run) setTuple(c, orig *expr.Microflow, dnat bool) {
	if !dnat && !r.t.snap.Release.Has(release.CtFieldsEveryRecirculation) {
		return
	}
	if r.tuples == nil {
		r.tuples = map[*expr.Microflow]ctTuple{}
	}
	r.tuples[c] = packetTuple(orig)
}

// chkLBHairpin is ovn-trace's execute_chk_lb_hairpin: 1 when the packet
// was DNATted to its own source and the SB Load_Balancer VIP whose address
// is the connection's original destination has the original (reply: the
// current) destination port. ovn-trace takes the first such VIP in SB
// table order, which aclc does not know: when VIPs of that address have
// different ports and the answer would depend on it, ok is false.
func (r *run) chkLBHairpin(m *expr.Microflow, reply bool) (res int, ok bool) {
	if CTState(getInt(m, "ct_state").Uint64())&CTDNAT == 0 {
		return 0, true
	}
	if getInt(m, "ip4.src").Cmp(getInt(m, "ip4.dst")) != 0 || getInt(m, "ip6.src").Cmp(getInt(m, "ip6.dst")) != 0 {
		return 0, true
	}
	t, has := r.tuples[m]
	if !has {
		return 0, true
	}
	ports := r.t.vipPorts(t.dst)
	if len(ports) == 0 {
		return 0, true // no VIP: get_lb_vip_data fails
	}
	want := t.tpDst
	if reply {
		want = uint16(tpDst(m))
	}
	if len(ports) > 1 {
		if slices.Contains(ports, want) {
			return 0, false
		}
		return 0, true
	}
	if ports[0] == want {
		return 1, true
	}
	return 0, true
}

// vipPorts returns the distinct ports of the VIPs with address ip among
// the load balancers northd writes to the SB Load_Balancer table (those
// applied to a switch, directly or through a group).
func (t *Tracer) vipPorts(ip netip.Addr) []uint16 {
	var ports []uint16
	for _, id := range nbschema.SortedKeys(t.snap.Switches) {
		for _, lb := range t.view.SwitchLBs(t.snap.Switches[id], true) {
			for _, v := range nbview.VIPs(lb) {
				if v.IP == ip && !slices.Contains(ports, v.Port) {
					ports = append(ports, v.Port)
				}
			}
		}
	}
	return ports
}
