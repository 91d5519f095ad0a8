package ctnetlink

import (
	"errors"

	"github.com/mdlayher/netlink"
	"github.com/ti-mo/netfilter"
)

// errStop ends a dump early without an error.
var errStop = errors.New("stop dump")

// DumpZone streams the entries of zone (and family, FamilyAny for both)
// to fn, one at a time, as the kernel sends them. It sends one dump
// request carrying the zone: kernels since 6.8 then return only that
// zone; older kernels ignore the attribute and return everything, so
// entries of other zones are always dropped here as well. If fn returns
// an error the dump is abandoned and that error returned.
func (c *Conn) DumpZone(zone uint16, family Family, fn func(Entry) error) error {
	z := int(zone)
	// A kernel without the zone filter sends every zone: skip the others
	// before decoding them.
	keep := func(m netlink.Message) bool { return msgZone(m) == zone }
	return c.opError("dump", z, c.dump(&zone, family, keep, func(e Entry) error {
		if e.Zone != zone || !family.matches(e.Family) {
			return nil
		}
		return fn(e)
	}))
}

// DumpAll streams every entry of the namespace (of family, FamilyAny for
// both) to fn.
func (c *Conn) DumpAll(family Family, fn func(Entry) error) error {
	return c.opError("dump", -1, c.dump(nil, family, nil, func(e Entry) error {
		if !family.matches(e.Family) {
			return nil
		}
		return fn(e)
	}))
}

// CountZone returns how many entries zone holds (of family).
func (c *Conn) CountZone(zone uint16, family Family) (int, error) {
	n := 0
	err := c.DumpZone(zone, family, func(Entry) error { n++; return nil })
	return n, err
}

// CountByZone returns the number of entries of every zone that has any.
func (c *Conn) CountByZone(family Family) (map[uint16]int, error) {
	m := map[uint16]int{}
	err := c.DumpAll(family, func(e Entry) error { m[e.Zone]++; return nil })
	return m, err
}

// dump sends one IPCTNL_MSG_CT_GET dump request, with CTA_ZONE when zone
// is not nil, and decodes the replies as they arrive, skipping undecoded
// those keep (if not nil) rejects.
func (c *Conn) dump(zone *uint16, family Family, keep func(netlink.Message) bool, fn func(Entry) error) error {
	req, err := dumpRequest(zone, family)
	if err != nil {
		return err
	}
	if _, err := c.nl.Send(req); err != nil {
		return err
	}
	var ferr error
	for m, err := range c.nl.ReceiveIter() {
		if err != nil {
			return err
		}
		if ferr != nil {
			continue // drain the rest of the dump
		}
		if keep != nil && !keep(m) {
			continue
		}
		e, err := decodeEntry(m)
		if err != nil {
			ferr = err
			continue
		}
		if err := fn(e); err != nil {
			ferr = err
		}
	}
	if errors.Is(ferr, errStop) {
		return nil
	}
	return ferr
}

// dumpRequest builds a dump request, with the zone filter if zone != nil.
func dumpRequest(zone *uint16, family Family) (netlink.Message, error) {
	ae := netfilter.NewAttributeEncoder()
	if zone != nil {
		ae.Uint16(ctaZone, *zone)
	}
	return netfilter.EncodeNetlink(header(msgGet, family, 0, netlink.Dump), ae)
}

// msgZone reads only the CTA_ZONE attribute of a conntrack message (0 when
// absent), so that entries of other zones are skipped without decoding.
func msgZone(m netlink.Message) uint16 {
	var z uint16
	if len(m.Data) < nfHeaderLen {
		return 0
	}
	_ = walk(m.Data[nfHeaderLen:], func(typ uint16, p []byte) error {
		if typ == ctaZone {
			z = be16(p)
			return errStop
		}
		return nil
	})
	return z
}
