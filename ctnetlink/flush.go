package ctnetlink

import (
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
	"github.com/ti-mo/netfilter"
)

// Method selects how FlushZone removes a zone.
type Method int

const (
	// MethodAuto uses the kernel's zone filter when Detect (or
	// Config.Support) says the kernel honours it, else the fallback.
	MethodAuto Method = iota
	// MethodKernel sends one delete request carrying only the zone. It is
	// refused unless the kernel is known to honour the zone filter: an
	// older kernel would flush every zone of the namespace.
	MethodKernel
	// MethodFallback dumps the zone, keeps only its entries and deletes
	// them in batches (see Delete).
	MethodFallback
)

// String returns "auto", "kernel" or "fallback".
func (m Method) String() string {
	switch m {
	case MethodKernel:
		return "kernel"
	case MethodFallback:
		return "fallback"
	}
	return "auto"
}

// ParseMethod parses the String form of a Method.
func ParseMethod(s string) (Method, error) {
	for _, m := range []Method{MethodAuto, MethodKernel, MethodFallback} {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("unknown flush method %q (want auto, kernel or fallback)", s)
}

// ErrZoneFilterUnsupported is returned when MethodKernel is asked for on a
// kernel that does not honour the zone filter (or was not shown to).
var ErrZoneFilterUnsupported = errors.New("kernel does not honour the conntrack zone filter; refusing a zone-only delete, which would flush every zone")

// FlushOptions tunes FlushZone.
type FlushOptions struct {
	// Family restricts the flush to IPv4 or IPv6 entries.
	Family Family
	// Method picks the kernel filter or the fallback.
	Method Method
}

// FlushResult says how a zone was flushed.
type FlushResult struct {
	// Method is the method actually used (never MethodAuto).
	Method Method
	// Support is the kernel support the decision was based on.
	Support Support
	// Counted is true when Deleted and Gone are known: the kernel filter
	// answers success without saying how many entries went.
	Counted bool
	// Deleted and Gone are as in DeleteResult (fallback only).
	Deleted, Gone int
}

// FlushZone removes every entry of zone (of opts.Family) from the
// namespace of c.
func (c *Conn) FlushZone(zone uint16, opts FlushOptions) (FlushResult, error) {
	res := FlushResult{Method: opts.Method}
	if opts.Method != MethodFallback {
		s, err := c.Support()
		if err != nil {
			return res, c.opError("flush", int(zone), err)
		}
		res.Support = s
		switch {
		case s.ZoneFlush:
			res.Method = MethodKernel
		case opts.Method == MethodKernel:
			return res, c.opError("flush", int(zone), ErrZoneFilterUnsupported)
		default:
			res.Method = MethodFallback
		}
	}
	if res.Method == MethodKernel {
		return res, c.opError("flush", int(zone), c.flushKernel(zone, opts.Family))
	}
	var entries []Entry
	if err := c.DumpZone(zone, opts.Family, func(e Entry) error {
		entries = append(entries, e)
		return nil
	}); err != nil {
		return res, err
	}
	d, err := c.Delete(entries)
	res.Counted, res.Deleted, res.Gone = err == nil, d.Deleted, d.Gone
	if err != nil {
		return res, c.opError("flush", int(zone), err)
	}
	return res, nil
}

// flushKernel sends the single zone-only delete request. Callers must
// have established that the kernel honours the zone filter.
func (c *Conn) flushKernel(zone uint16, family Family) error {
	req, err := zoneFlushRequest(zone, family)
	if err != nil {
		return err
	}
	_, err = c.nl.Execute(req)
	return err
}

// zoneFlushRequest builds a delete request carrying only CTA_ZONE.
// Version 0 with AF_UNSPEC flushes both families; version 1 makes the
// kernel honour the family.
func zoneFlushRequest(zone uint16, family Family) (netlink.Message, error) {
	var version uint8
	if family != FamilyAny {
		version = 1
	}
	ae := netfilter.NewAttributeEncoder()
	ae.Uint16(ctaZone, zone)
	return netfilter.EncodeNetlink(header(msgDelete, family, version, netlink.Acknowledge), ae)
}

// IsZoneOnlyDelete reports whether m is a delete request that carries a
// zone but no tuple: the request that flushes every zone on a kernel
// without the zone filter. Tests use it to check what was sent.
func IsZoneOnlyDelete(m netlink.Message) bool {
	if !isDelete(m) || len(m.Data) < 4 {
		return false
	}
	attrs, err := netlink.UnmarshalAttributes(m.Data[4:])
	if err != nil {
		return false
	}
	zone, tuple := false, false
	for _, a := range attrs {
		switch a.Type &^ (netlink.Nested | netlink.NetByteOrder) {
		case ctaZone:
			zone = true
		case ctaTupleOrig, ctaTupleReply:
			tuple = true
		}
	}
	return zone && !tuple
}
