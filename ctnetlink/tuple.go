package ctnetlink

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/ti-mo/conntrack"
	"golang.org/x/sys/unix"
)

// A Tuple is one direction of a connection: addresses, protocol, ports or
// ICMP type/code/id. It is ti-mo/conntrack's Tuple, so values interoperate
// with that library; this package encodes and decodes it itself because
// ti-mo/conntrack keeps its marshalling unexported.
type Tuple = conntrack.Tuple

var errBadTuple = errors.New("malformed tuple")

// hasPorts reports whether the kernel keys protocol p by two 16-bit ports
// (or GRE keys in the same attributes).
func hasPorts(p uint8) bool {
	switch p {
	case unix.IPPROTO_TCP, unix.IPPROTO_UDP, unix.IPPROTO_UDPLITE, unix.IPPROTO_SCTP, unix.IPPROTO_DCCP, unix.IPPROTO_GRE:
		return true
	}
	return false
}

// encodeTuple appends t as the nested tuple attribute typ.
func encodeTuple(a *attrs, typ uint16, t Tuple) {
	outer := a.begin(typ)
	ip := a.begin(ctaTupleIP)
	if src, dst := t.IP.SourceAddress, t.IP.DestinationAddress; src.Is4() {
		s4, d4 := src.As4(), dst.As4()
		a.bytes(ctaIPv4Src, s4[:])
		a.bytes(ctaIPv4Dst, d4[:])
	} else {
		s16, d16 := src.As16(), dst.As16()
		a.bytes(ctaIPv6Src, s16[:])
		a.bytes(ctaIPv6Dst, d16[:])
	}
	a.end(ip)
	proto := a.begin(ctaTupleProto)
	p := t.Proto
	a.u8(ctaProtoNum, p.Protocol)
	switch {
	case p.Protocol == unix.IPPROTO_ICMP:
		a.u16(ctaProtoICMPID, p.ICMPID)
		a.u8(ctaProtoICMPType, p.ICMPType)
		a.u8(ctaProtoICMPCode, p.ICMPCode)
	case p.Protocol == unix.IPPROTO_ICMPV6:
		a.u16(ctaProtoICMPv6ID, p.ICMPID)
		a.u8(ctaProtoICMPv6Typ, p.ICMPType)
		a.u8(ctaProtoICMPv6Cod, p.ICMPCode)
	case hasPorts(p.Protocol):
		a.u16(ctaProtoSrcPort, p.SourcePort)
		a.u16(ctaProtoDstPort, p.DestinationPort)
	}
	a.end(proto)
	if t.Zone != 0 {
		a.u16(ctaTupleZone, t.Zone)
	}
	a.end(outer)
}

// decodeTuple decodes the payload of a nested tuple attribute.
func decodeTuple(b []byte) (Tuple, error) {
	var t Tuple
	err := walk(b, func(typ uint16, p []byte) error {
		switch typ {
		case ctaTupleIP:
			return walk(p, func(typ uint16, p []byte) error {
				a, ok := netip.AddrFromSlice(p)
				if !ok {
					return fmt.Errorf("%w: address of %d bytes", errBadTuple, len(p))
				}
				switch typ {
				case ctaIPv4Src, ctaIPv6Src:
					t.IP.SourceAddress = a
				case ctaIPv4Dst, ctaIPv6Dst:
					t.IP.DestinationAddress = a
				}
				return nil
			})
		case ctaTupleProto:
			pt := &t.Proto
			err := walk(p, func(typ uint16, p []byte) error {
				switch typ {
				case ctaProtoNum:
					pt.Protocol = u8(p)
				case ctaProtoSrcPort:
					pt.SourcePort = be16(p)
				case ctaProtoDstPort:
					pt.DestinationPort = be16(p)
				case ctaProtoICMPID, ctaProtoICMPv6ID:
					pt.ICMPID = be16(p)
				case ctaProtoICMPType, ctaProtoICMPv6Typ:
					pt.ICMPType = u8(p)
				case ctaProtoICMPCode, ctaProtoICMPv6Cod:
					pt.ICMPCode = u8(p)
				}
				return nil
			})
			pt.ICMPv4 = pt.Protocol == unix.IPPROTO_ICMP
			pt.ICMPv6 = pt.Protocol == unix.IPPROTO_ICMPV6
			return err
		case ctaTupleZone:
			t.Zone = be16(p)
		}
		return nil
	})
	return t, err
}

// invert returns the reply-direction tuple of an original tuple, as the
// kernel expects for a new entry (ICMP echo request 8 answers with 0,
// ICMPv6 128 with 129).
func invert(t Tuple) Tuple {
	r := t
	r.IP.SourceAddress, r.IP.DestinationAddress = t.IP.DestinationAddress, t.IP.SourceAddress
	r.Proto.SourcePort, r.Proto.DestinationPort = t.Proto.DestinationPort, t.Proto.SourcePort
	switch t.Proto.Protocol {
	case unix.IPPROTO_ICMP:
		if v, ok := icmpReply[t.Proto.ICMPType]; ok {
			r.Proto.ICMPType = v
		}
	case unix.IPPROTO_ICMPV6:
		if v, ok := icmpv6Reply[t.Proto.ICMPType]; ok {
			r.Proto.ICMPType = v
		}
	}
	return r
}

// icmpReply maps an ICMP query type to its answer and back (the kernel's
// invmap in nf_conntrack_proto_icmp.c).
var icmpReply = map[uint8]uint8{8: 0, 0: 8, 13: 14, 14: 13, 15: 16, 16: 15, 17: 18, 18: 17}

// icmpv6Reply is icmpReply for ICMPv6 (echo 128/129, node info 139/140).
var icmpv6Reply = map[uint8]uint8{128: 129, 129: 128, 139: 140, 140: 139}
