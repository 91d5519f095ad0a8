package ctnetlink

import (
	"github.com/mdlayher/netlink"
	"github.com/ti-mo/netfilter"
)

// Message types of the ctnetlink subsystem (IPCTNL_MSG_CT_*).
const (
	msgNew    netfilter.MessageType = 0
	msgGet    netfilter.MessageType = 1
	msgDelete netfilter.MessageType = 2
)

// Top-level conntrack attributes (CTA_*), uapi nfnetlink_conntrack.h.
const (
	ctaTupleOrig  = 1
	ctaTupleReply = 2
	ctaStatus     = 3
	ctaProtoInfo  = 4
	ctaTimeout    = 7
	ctaMark       = 8
	ctaUse        = 11
	ctaID         = 12
	ctaZone       = 18
)

// Tuple attributes (CTA_TUPLE_*, CTA_IP_*, CTA_PROTO_*).
const (
	ctaTupleIP    = 1
	ctaTupleProto = 2
	ctaTupleZone  = 3

	ctaIPv4Src = 1
	ctaIPv4Dst = 2
	ctaIPv6Src = 3
	ctaIPv6Dst = 4

	ctaProtoNum       = 1
	ctaProtoSrcPort   = 2
	ctaProtoDstPort   = 3
	ctaProtoICMPID    = 4
	ctaProtoICMPType  = 5
	ctaProtoICMPCode  = 6
	ctaProtoICMPv6ID  = 7
	ctaProtoICMPv6Typ = 8
	ctaProtoICMPv6Cod = 9
)

// Protocol info attributes (CTA_PROTOINFO_TCP*).
const (
	ctaProtoInfoTCP      = 1
	ctaProtoInfoTCPState = 1
)

// header returns the netfilter header of a ctnetlink request.
// version 0 with AF_UNSPEC means "both families"; version 1 makes the
// kernel honour family on flushes (Linux >= 5.x).
func header(t netfilter.MessageType, family Family, version uint8, flags netlink.HeaderFlags) netfilter.Header {
	return netfilter.Header{
		SubsystemID: netfilter.NFSubsysCTNetlink,
		MessageType: t,
		Family:      netfilter.ProtoFamily(family),
		Version:     version,
		Flags:       netlink.Request | flags,
	}
}

// isDelete reports whether m is a ctnetlink delete request.
func isDelete(m netlink.Message) bool {
	return m.Header.Type == netlink.HeaderType(uint16(netfilter.NFSubsysCTNetlink)<<8|uint16(msgDelete))
}
