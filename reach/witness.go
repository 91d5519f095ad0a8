package reach

import (
	"fmt"
	"math/big"
	"net/netip"
	"slices"
	"strings"

	"github.com/aclc/aclc/internal/ethaddr"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/pset"
)

// This file chooses each part's witness: the packet of the part the from
// port would really send to the to port, so that ovn-trace, given only
// the microflow (and the --ct states), takes it where reach says.

// endpoint is what a port's addresses say about the packets it sends and
// receives: its first MAC and IPv4/IPv6 address, whether it takes
// packets for unknown MACs.
type endpoint struct {
	mac      *big.Int // nil: none
	ip4, ip6 *big.Int
	unknown  bool
}

// endpointOf reads p's addresses as northd does for the L2 lookup
// (build_lswitch_ip_unicast_lookup, as package trace models it): "MAC
// IP...", "dynamic" (the dynamic_addresses northd assigned), "unknown";
// an entry that does not start with a MAC gives nothing.
func endpointOf(p *nbdb.LogicalSwitchPort) endpoint {
	var ep endpoint
	for _, a := range p.Addresses {
		if a == "unknown" {
			ep.unknown = true
			continue
		}
		if a == "dynamic" && p.DynamicAddresses != nil {
			a = *p.DynamicAddresses
		}
		f := strings.Fields(a)
		mac, _, ok := ethaddr.Scan(a)
		if len(f) == 0 || !ok {
			continue
		}
		if ep.mac == nil {
			ep.mac = new(big.Int).SetBytes(mac[:])
		}
		for _, tok := range f[1:] {
			ip, err := netip.ParseAddr(strings.SplitN(tok, "/", 2)[0])
			switch {
			case err != nil:
			case ip.Is4() && ep.ip4 == nil:
				ep.ip4 = new(big.Int).SetBytes(ip.AsSlice())
			case ip.Is6() && ep.ip6 == nil:
				ep.ip6 = new(big.Int).SetBytes(ip.AsSlice())
			}
		}
	}
	return ep
}

// witnessChooser picks the witnesses of one pair's parts.
type witnessChooser struct {
	m     *pset.Manager
	prefs []pset.Preference
	// delivered is the packets the L2 lookup outputs to the to port:
	// eth.dst its MAC, a multicast (the flood includes every port) or,
	// when it takes unknown MACs, one no port of the switch has.
	delivered pset.Set
}

// Example L4 values of a witness where its part leaves them free: a web
// request from an ephemeral port, a DNS query, an echo request.
const (
	witnessTCPDst, witnessUDPDst, witnessSrcPort = 80, 53, 40000
	witnessTCPFlags                              = 0x002 // SYN: a connection's first packet, as --ct new has it
)

// newWitnessChooser prepares the preferences of the pair from -> to on
// switch sw: from's MAC and addresses as source, to's as destination
// (eth.dst to's MAC, else broadcast, else an unknown unicast MAC when
// to takes those), IPv4 before IPv6 unless only IPv6 is configured, tcp
// before udp before icmp, with the example L4 values above.
func (x *exec) newWitnessChooser(sw *nbview.Switch, from, to *nbdb.LogicalSwitchPort) (*witnessChooser, error) {
	m := x.m
	sp := m.Space()
	src, dst := endpointOf(from), endpointOf(to)
	w := &witnessChooser{m: m}
	var err error
	match := func(text string) pset.Set {
		if err != nil {
			return pset.Empty
		}
		var s pset.Set
		s, err = x.conv.Match(text)
		return s
	}
	value := func(field string, v *big.Int) {
		if err != nil || v == nil {
			return
		}
		var p pset.Preference
		if p, err = sp.PreferValue(field, v); err == nil {
			w.prefs = append(w.prefs, p)
		}
	}
	in := func(s pset.Set) { w.prefs = append(w.prefs, pset.PreferIn(s)) }

	// The L2 lookup: eth.dst to's MAC, a multicast, or unknown.
	var known []string
	for _, p := range x.e.view.Ports(sw) {
		if ep := endpointOf(p); ep.mac != nil {
			known = append(known, macString(ep.mac))
		} else if rp := x.e.view.RouterPortPeer(p); rp != nil && slices.Contains(p.Addresses, "router") {
			if mac, _, ok := ethaddr.Scan(rp.MAC); ok {
				known = append(known, mac.String())
			}
		}
	}
	w.delivered = match("eth.mcast")
	var unknownMAC *big.Int
	if dst.mac != nil {
		w.delivered = m.Or(w.delivered, match("eth.dst == "+macString(dst.mac)))
	}
	if dst.unknown {
		unk := match("!eth.mcast")
		if len(known) > 0 {
			unk = m.Diff(unk, match("eth.dst == {"+strings.Join(known, ", ")+"}"))
		}
		w.delivered = m.Or(w.delivered, unk)
		unknownMAC = unusedMAC(known)
	}
	bcast := new(big.Int).SetUint64(0xffffffffffff)
	switch {
	case dst.mac != nil:
		value("eth.dst", dst.mac) // where allowed; else the nearest that is delivered:
	case dst.unknown:
		in(match("eth.dst == " + macString(unknownMAC)))
	}
	in(match("eth.bcast"))
	in(w.delivered)
	value("eth.dst", bcast)
	value("eth.src", src.mac)

	// IPv4 first, unless only IPv6 is configured.
	fams := []string{"ip4", "ip6"}
	if src.ip4 == nil && dst.ip4 == nil && (src.ip6 != nil || dst.ip6 != nil) {
		fams = []string{"ip6", "ip4"}
	}
	for _, f := range fams {
		in(match(f))
	}
	value("ip4.src", src.ip4)
	value("ip4.dst", dst.ip4)
	value("ip6.src", src.ip6)
	value("ip6.dst", dst.ip6)
	for _, l4 := range []string{"tcp", "udp", "icmp"} {
		in(match(l4))
	}
	value("tcp.dst", big.NewInt(witnessTCPDst))
	value("tcp.src", big.NewInt(witnessSrcPort))
	value("tcp.flags", big.NewInt(witnessTCPFlags))
	value("udp.dst", big.NewInt(witnessUDPDst))
	value("udp.src", big.NewInt(witnessSrcPort))
	value("icmp4.type", big.NewInt(8))
	value("icmp6.type", big.NewInt(128))
	if err != nil {
		return nil, fmt.Errorf("reach: the witness preferences: %w", err)
	}
	return w, nil
}

// choose sets p's witness, and says when no packet of the part reaches
// the to port through the L2 lookup.
func (w *witnessChooser) choose(p *Part, to string) {
	pkt, _ := w.m.WitnessPreferring(p.Set, w.prefs...)
	p.Witness = pkt.String()
	if !w.m.Intersects(p.Set, w.delivered) {
		p.Undelivered = "the L2 lookup sends no packet of this part to " + to +
			" (its eth.dst is neither " + to + "'s MAC nor a multicast nor, for a port with unknown addresses, an unknown MAC): replayed, the packet does not reach it"
	}
}

// macString prints a MAC held as a number.
func macString(v *big.Int) string {
	b := make([]byte, 6)
	v.FillBytes(b)
	return ethaddr.Addr(b).String()
}

// unusedMAC returns a locally administered unicast MAC no port has.
func unusedMAC(known []string) *big.Int {
	for i := uint64(1); ; i++ {
		v := new(big.Int).SetUint64(0x0a0000000000 + i)
		if !slices.Contains(known, macString(v)) {
			return v
		}
	}
}
