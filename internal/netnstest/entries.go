package netnstest

import (
	"net/netip"

	"golang.org/x/sys/unix"

	"github.com/aclc/aclc/ctnetlink"
)

// TCPEntries returns n established IPv4 TCP conntrack entries of zone,
// src:sport -> dst:80 with sport firstSport, firstSport+1, ..., for tests
// that fill a namespace's table.
func TCPEntries(zone uint16, n int, src, dst netip.Addr, firstSport uint16) []ctnetlink.Entry {
	es := make([]ctnetlink.Entry, n)
	for i := range es {
		e := &es[i]
		e.Family = ctnetlink.FamilyIPv4
		e.Zone = zone
		e.Timeout = 600
		e.Status = ctnetlink.Status(2) // SEEN_REPLY
		e.TCPState = 3                 // ESTABLISHED
		e.Orig.IP.SourceAddress = src
		e.Orig.IP.DestinationAddress = dst
		e.Orig.Proto.Protocol = unix.IPPROTO_TCP
		e.Orig.Proto.SourcePort = firstSport + uint16(i)
		e.Orig.Proto.DestinationPort = 80
	}
	return es
}
