package ctnetlink

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mdlayher/netlink"
	"github.com/ti-mo/conntrack"
	"golang.org/x/sys/unix"
)

// Status is the conntrack status bit set (IPS_*), ti-mo/conntrack's type.
type Status = conntrack.Status

// An Entry is one conntrack entry: the attributes a zone flush, a list or
// a load needs, and nothing else (no counters, helpers, NAT or labels).
type Entry struct {
	// Family is the layer-3 family from the message header.
	Family Family `json:"family"`
	// Orig and Reply are the two directions of the connection.
	Orig  Tuple `json:"orig"`
	Reply Tuple `json:"reply"`
	// Zone is the conntrack zone (CTA_ZONE; absent means 0).
	Zone uint16 `json:"zone"`
	// ID is the kernel's conntrack ID (CTA_ID). A delete that carries it
	// only removes this very entry, not a newer one reusing the tuple.
	ID uint32 `json:"id"`
	// Status holds the IPS_* bits.
	Status Status `json:"status"`
	// Timeout is the remaining lifetime in seconds.
	Timeout uint32 `json:"timeout"`
	// Mark is the connection mark.
	Mark uint32 `json:"mark"`
	// Use is the kernel's reference count, shown by conntrack -L.
	Use uint32 `json:"use"`
	// TCPState is the TCP state for TCP entries.
	TCPState TCPState `json:"tcp_state,omitempty"`
}

// TCPState is a conntrack TCP state (TCP_CONNTRACK_*).
type TCPState uint8

// tcpStates are the state names conntrack-tools prints, indexed by value.
var tcpStates = []string{"NONE", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "FIN_WAIT", "CLOSE_WAIT", "LAST_ACK", "TIME_WAIT", "CLOSE", "SYN_SENT2"}

// String returns the conntrack-tools name of s.
func (s TCPState) String() string {
	if int(s) < len(tcpStates) {
		return tcpStates[s]
	}
	return "UNKNOWN"
}

// ParseTCPState parses a state name as conntrack-tools accepts it
// (LISTEN is an alias of SYN_SENT2, value 9).
func ParseTCPState(name string) (TCPState, error) {
	n := strings.ToUpper(name)
	if n == "LISTEN" {
		return 9, nil
	}
	for i, s := range tcpStates {
		if s == n {
			return TCPState(i), nil
		}
	}
	return 0, fmt.Errorf("unknown TCP state %q", name)
}

// decodeEntry decodes one ctnetlink conntrack message, only the
// attributes Entry holds.
func decodeEntry(m netlink.Message) (Entry, error) {
	if len(m.Data) < 4 {
		return Entry{}, errShortAttr
	}
	// nfgenmsg: family, version, resource ID.
	e := Entry{Family: Family(m.Data[0])}
	err := walk(m.Data[4:], func(typ uint16, p []byte) error {
		var err error
		switch typ {
		case ctaTupleOrig:
			e.Orig, err = decodeTuple(p)
		case ctaTupleReply:
			e.Reply, err = decodeTuple(p)
		case ctaZone:
			e.Zone = be16(p)
		case ctaID:
			e.ID = be32(p)
		case ctaStatus:
			e.Status = Status(be32(p))
		case ctaTimeout:
			e.Timeout = be32(p)
		case ctaMark:
			e.Mark = be32(p)
		case ctaUse:
			e.Use = be32(p)
		case ctaProtoInfo:
			err = walk(p, func(typ uint16, p []byte) error {
				if typ != ctaProtoInfoTCP {
					return nil
				}
				return walk(p, func(typ uint16, p []byte) error {
					if typ == ctaProtoInfoTCPState {
						e.TCPState = TCPState(u8(p))
					}
					return nil
				})
			})
		}
		return err
	})
	return e, err
}

// protoNames are the names conntrack -L prints for layer-4 protocols.
var protoNames = map[uint8]string{
	unix.IPPROTO_TCP: "tcp", unix.IPPROTO_UDP: "udp", unix.IPPROTO_ICMP: "icmp",
	unix.IPPROTO_ICMPV6: "icmpv6", unix.IPPROTO_UDPLITE: "udplite",
	unix.IPPROTO_SCTP: "sctp", unix.IPPROTO_DCCP: "dccp", unix.IPPROTO_GRE: "gre",
}

// String formats e the way `conntrack -L` does, e.g.
//
//	tcp      6 49 ESTABLISHED src=1.1.1.1 dst=2.2.2.2 sport=1 dport=3 src=2.2.2.2 dst=1.1.1.1 sport=3 dport=1 [ASSURED] mark=0 zone=5 use=1
func (e Entry) String() string { return string(e.AppendText(nil)) }

// AppendText appends the conntrack -L line of e (without newline) to b:
// what `aclc ct list` prints, one entry at a time, without fmt.
func (e Entry) AppendText(b []byte) []byte {
	p := e.Orig.Proto.Protocol
	name, ok := protoNames[p]
	if !ok {
		name = "unknown"
	}
	b = append(b, name...)
	for i := len(name); i < 8; i++ {
		b = append(b, ' ')
	}
	b = append(b, ' ')
	b = strconv.AppendUint(b, uint64(p), 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, uint64(e.Timeout), 10)
	b = append(b, ' ')
	if p == unix.IPPROTO_TCP {
		b = append(b, e.TCPState.String()...)
		b = append(b, ' ')
	}
	b = appendTuple(b, e.Orig)
	if e.Status&conntrack.StatusSeenReply == 0 {
		b = append(b, "[UNREPLIED] "...)
	}
	b = appendTuple(b, e.Reply)
	if e.Status&conntrack.StatusAssured != 0 {
		b = append(b, "[ASSURED] "...)
	}
	b = append(b, "mark="...)
	b = strconv.AppendUint(b, uint64(e.Mark), 10)
	if e.Zone != 0 {
		b = append(b, " zone="...)
		b = strconv.AppendUint(b, uint64(e.Zone), 10)
	}
	b = append(b, " use="...)
	return strconv.AppendUint(b, uint64(e.Use), 10)
}

// appendTuple appends "src=A dst=B sport=S dport=D " (or ICMP fields).
func appendTuple(b []byte, t Tuple) []byte {
	b = append(b, "src="...)
	b = t.IP.SourceAddress.AppendTo(b)
	b = append(b, " dst="...)
	b = t.IP.DestinationAddress.AppendTo(b)
	b = append(b, ' ')
	num := func(b []byte, key string, v uint64) []byte {
		b = append(b, key...)
		b = strconv.AppendUint(b, v, 10)
		return append(b, ' ')
	}
	switch p := t.Proto; {
	case p.Protocol == unix.IPPROTO_ICMP || p.Protocol == unix.IPPROTO_ICMPV6:
		b = num(b, "type=", uint64(p.ICMPType))
		b = num(b, "code=", uint64(p.ICMPCode))
		b = num(b, "id=", uint64(p.ICMPID))
	case hasPorts(p.Protocol):
		b = num(b, "sport=", uint64(p.SourcePort))
		b = num(b, "dport=", uint64(p.DestinationPort))
	}
	return b
}
