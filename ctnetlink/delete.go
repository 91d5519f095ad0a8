package ctnetlink

import (
	"fmt"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// DeleteResult counts the outcome of a batched delete.
type DeleteResult struct {
	// Deleted entries were removed by this call.
	Deleted int
	// Gone entries were not there any more (ENOENT): expired, deleted by
	// someone else, or replaced by a newer entry with the same tuple but
	// another conntrack ID, which is left alone.
	Gone int
}

// Delete removes entries, many delete requests per sendmsg. Each request
// carries the entry's original tuple, its zone and its conntrack ID, so
// only that very entry can go. ENOENT counts as already gone; any other
// rejection stops after the current batch and is returned.
func (c *Conn) Delete(entries []Entry) (DeleteResult, error) {
	var res DeleteResult
	var err error
	res.Deleted, res.Gone, err = c.batchRun(len(entries),
		func(i int, a *attrs) (netlink.Message, error) { return deleteRequest(a, entries[i]) },
		unix.ENOENT,
		func(i int) string { return fmt.Sprintf("entry %d (%s, id %d)", i, entries[i].Orig, entries[i].ID) })
	return res, c.opError("delete", -1, err)
}

// deleteRequest builds the delete of one entry: original tuple, zone and
// ID, in the entry's own family, appended to a.
func deleteRequest(a *attrs, e Entry) (netlink.Message, error) {
	a.start()
	encodeTuple(a, ctaTupleOrig, e.Orig)
	a.u16(ctaZone, e.Zone)
	a.u32(ctaID, e.ID)
	return a.message(header(msgDelete, e.Family, 0, 0))
}
