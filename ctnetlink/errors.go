package ctnetlink

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Sentinel errors. Callers test for them with errors.Is; every error this
// package returns wraps the kernel's errno too, so errors.Is(err,
// unix.ENOENT) and friends also work.
var (
	// ErrPermission means the kernel refused the request: talking to
	// ctnetlink, entering a network namespace or creating one needs root or
	// CAP_NET_ADMIN (CAP_SYS_ADMIN for namespaces).
	ErrPermission = errors.New("permission denied: needs root or CAP_NET_ADMIN")

	// ErrTableFull means the conntrack table of the namespace is full
	// (ENOMEM from the kernel, see net.netfilter.nf_conntrack_max).
	ErrTableFull = errors.New("conntrack table full")

	// ErrInvalidZone means a zone outside 0..65535 was given.
	ErrInvalidZone = errors.New("invalid conntrack zone (want 0-65535)")

	// ErrAcksLost means the socket receive buffer overflowed (ENOBUFS) so
	// the outcome of some batched requests is unknown.
	ErrAcksLost = errors.New("netlink acknowledgements lost (receive buffer overflow)")
)

// OpError is the error returned by Conn methods. It names the operation,
// the zone and network namespace it ran in, and wraps the cause.
type OpError struct {
	// Op is the operation: "dial", "flush", "dump", "delete", "create",
	// "probe".
	Op string
	// Zone is the conntrack zone the operation was about, or -1.
	Zone int
	// NetNS names the network namespace ("" for the caller's own).
	NetNS string
	// Err is the cause.
	Err error
}

// Error implements error.
func (e *OpError) Error() string {
	s := "ctnetlink " + e.Op
	if e.Zone >= 0 {
		s += fmt.Sprintf(" zone %d", e.Zone)
	}
	if e.NetNS != "" {
		s += " in netns " + e.NetNS
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *OpError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrPermission) and errors.Is(err, ErrTableFull)
// true for the kernel errnos they stand for.
func (e *OpError) Is(target error) bool {
	switch target {
	case ErrPermission:
		return errors.Is(e.Err, unix.EPERM) || errors.Is(e.Err, os.ErrPermission)
	case ErrTableFull:
		return errors.Is(e.Err, unix.ENOMEM)
	case ErrAcksLost:
		return errors.Is(e.Err, unix.ENOBUFS)
	}
	return false
}

// opError wraps err with the operation context of c, adding a hint for
// permission errors. It returns nil for a nil err.
func (c *Conn) opError(op string, zone int, err error) error {
	if err == nil {
		return nil
	}
	if oe := (*OpError)(nil); errors.As(err, &oe) {
		return err // already says where it happened
	}
	if errors.Is(err, unix.EPERM) || errors.Is(err, os.ErrPermission) {
		err = fmt.Errorf("%w (%w)", ErrPermission, err)
	}
	name := ""
	if c != nil {
		name = c.netnsName
	}
	return &OpError{Op: op, Zone: zone, NetNS: name, Err: err}
}

// CheckZone returns ErrInvalidZone unless 0 <= zone <= 65535.
func CheckZone(zone int) error {
	if zone < 0 || zone > 0xffff {
		return fmt.Errorf("%w: %d", ErrInvalidZone, zone)
	}
	return nil
}
