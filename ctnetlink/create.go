package ctnetlink

import (
	"fmt"

	"github.com/mdlayher/netlink"
	"github.com/ti-mo/conntrack"
	"golang.org/x/sys/unix"
)

// CreateResult counts the outcome of a batched create.
type CreateResult struct {
	// Inserted entries are new in the table.
	Inserted int
	// Existing entries were already there (EEXIST) and were left alone.
	Existing int
}

// Create inserts entries, many create requests per sendmsg (conntrack -R
// sends one and waits for its answer each time). Entries need a Timeout;
// IPS_CONFIRMED is added to every status (the kernel refuses unconfirmed
// entries with EBUSY), and a missing reply tuple is the inverted original.
// When the table is full (ENOMEM) no further batch is sent and the error
// wraps ErrTableFull; the result then says how many went in.
func (c *Conn) Create(entries []Entry) (CreateResult, error) {
	var res CreateResult
	var err error
	res.Inserted, res.Existing, err = c.batchRun(len(entries),
		func(i int, a *attrs) (netlink.Message, error) { return createRequest(a, entries[i]) },
		unix.EEXIST,
		func(i int) string { return fmt.Sprintf("entry %d (%s zone %d)", i, entries[i].Orig, entries[i].Zone) })
	return res, c.opError("create", -1, err)
}

// createRequest builds the create request of one entry, appended to a.
func createRequest(a *attrs, e Entry) (netlink.Message, error) {
	if e.Timeout == 0 {
		return netlink.Message{}, fmt.Errorf("entry %s: a timeout is required", e.Orig)
	}
	reply := e.Reply
	if !reply.IP.SourceAddress.IsValid() {
		reply = invert(e.Orig)
	}
	a.start()
	encodeTuple(a, ctaTupleOrig, e.Orig)
	encodeTuple(a, ctaTupleReply, reply)
	a.u32(ctaStatus, uint32(e.Status|conntrack.StatusConfirmed))
	a.u32(ctaTimeout, e.Timeout)
	if e.Mark != 0 {
		a.u32(ctaMark, e.Mark)
	}
	if e.Zone != 0 {
		a.u16(ctaZone, e.Zone)
	}
	if e.Orig.Proto.Protocol == unix.IPPROTO_TCP {
		pi := a.begin(ctaProtoInfo)
		tcp := a.begin(ctaProtoInfoTCP)
		a.u8(ctaProtoInfoTCPState, uint8(e.TCPState))
		a.end(tcp)
		a.end(pi)
	}
	family := e.Family
	if family == FamilyAny {
		family = FamilyIPv4
		if e.Orig.IP.SourceAddress.Is6() {
			family = FamilyIPv6
		}
	}
	return a.message(header(msgNew, family, 0, netlink.Create|netlink.Excl))
}
