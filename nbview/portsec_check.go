package nbview

import (
	"net/netip"

	"github.com/aclc/aclc/internal/ethaddr"
)

// PortSecPacket is what port security reads of one packet, as ovn-trace
// holds it in its struct flow: fields a packet does not have are zero
// (ND's link-layer addresses and target whatever the packet's TTL and
// code, as ovn-trace reads them).
type PortSecPacket struct {
	EthSrc, EthDst ethaddr.Addr
	EthType        uint16
	IPProto        uint8
	IP4Src, IP4Dst netip.Addr
	ARPSpa         netip.Addr
	IP6Src, IP6Dst netip.Addr
	UDPSrc, UDPDst uint16
	ARPSha         ethaddr.Addr
	ICMP6Type      uint8
	NDSll, NDTll   ethaddr.Addr
	NDTarget       netip.Addr
}

// Allowed reports whether port security with entries lets the packet in
// from the port (ingress: ovn-trace's execute_check_in_port_sec) or out
// to it (egress: execute_check_out_port_sec; the egress stage skips it for
// eth.mcast packets before asking). With no entries nothing is checked.
// These are PortSecurityOf's rules for one packet, plus the ICMPv6 ND
// checks PortSecurityND leaves out of the sets.
func (pk PortSecPacket) Allowed(entries []PortSecEntry, ingress bool) bool {
	if len(entries) == 0 {
		return true
	}
	eth := pk.EthDst
	if ingress {
		eth = pk.EthSrc
	}
	for _, e := range entries {
		if e.MAC != eth {
			continue
		}
		// the first entry of the packet's MAC decides
		switch {
		case pk.EthType == 0x800 && ingress:
			return pk.inIP4(e)
		case pk.EthType == 0x806 && ingress:
			return pk.ARPSha == e.MAC && (len(e.IP4) == 0 || in(e.IP4, pk.ARPSpa))
		case pk.EthType == 0x86dd && ingress:
			return pk.inIP6(e)
		case pk.EthType == 0x800:
			return e.anyIP() || len(e.IP4) > 0 && (in(e.IP4, pk.IP4Dst) || pk.IP4Dst == broadcast4 || pk.IP4Dst.As4()[0]&0xf0 == 0xe0)
		case pk.EthType == 0x86dd:
			return e.anyIP() || len(e.IP6) > 0 && (in(e.IP6, pk.IP6Dst) || pk.IP6Dst == linkLocal(e.MAC) || pk.IP6Dst.As16()[0] == 0xff)
		}
		return true
	}
	return false
}

var broadcast4 = netip.AddrFrom4([4]byte{255, 255, 255, 255})

func in(list []netip.Addr, a netip.Addr) bool {
	for _, b := range list {
		if a == b {
			return true
		}
	}
	return false
}

// inIP4 is check_in_port_sec_ip4: a source of the entry's, or a DHCP
// request from 0.0.0.0 to the broadcast address.
func (pk PortSecPacket) inIP4(e PortSecEntry) bool {
	if e.anyIP() || in(e.IP4, pk.IP4Src) {
		return true
	}
	return pk.IPProto == 17 && pk.UDPSrc == 68 && pk.UDPDst == 67 &&
		pk.IP4Src == netip.IPv4Unspecified() && pk.IP4Dst == broadcast4
}

// inIP6 is check_in_port_sec_ip6: a source of the entry's or the MAC's
// link-local address; a solicitation's source link-layer address and an
// advertisement's target link-layer address the MAC (or none), an
// advertisement's target one of the entry's addresses (or the link-local
// one) when it has IPv6 addresses.
func (pk PortSecPacket) inIP6(e PortSecEntry) bool {
	if e.anyIP() {
		return true
	}
	lla := linkLocal(e.MAC)
	if !in(e.IP6, pk.IP6Src) && pk.IP6Src != lla {
		return false
	}
	if pk.IPProto != 58 {
		return true
	}
	var zero ethaddr.Addr
	switch pk.ICMP6Type {
	case 135:
		return pk.NDSll == zero || pk.NDSll == e.MAC
	case 136:
		if pk.NDTll != zero && pk.NDTll != e.MAC {
			return false
		}
		return len(e.IP6) == 0 || in(e.IP6, pk.NDTarget) || pk.NDTarget == lla
	}
	return true
}
