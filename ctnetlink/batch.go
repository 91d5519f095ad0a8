package ctnetlink

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// exchange sends n requests, built on demand by build, packed into
// batches of at most c.batchBytes per sendmsg (mdlayher/netlink's
// SendMessages). Only the last request of a batch asks for an
// acknowledgement: the kernel processes a batch in order and answers
// failures without being asked, so that acknowledgement is a fence after
// which every outcome of the batch is known — one round trip per batch,
// not per request. For every rejected request onErr is called with its
// index and errno; when it returns false no further batch is sent.
// exchange returns how many requests were sent.
//
// The next batch is built on another goroutine while the kernel works
// through the current one inside sendmsg (on the same socket, in order),
// so a bulk create costs about the kernel's time rather than the sum of
// both. build must therefore be safe to call from another goroutine; it is
// called once per request, in index order, perhaps for some requests past
// a batch that stopped (they are then not sent), and never after exchange
// has returned.
func (c *Conn) exchange(n int, build func(i int, a *attrs) (netlink.Message, error), onErr func(i int, err error) bool) (int, error) {
	// A slot is one batch being built or sent: its requests, laid out
	// one after another in one buffer. Two slots take turns.
	type slot struct {
		msgs []netlink.Message
		a    attrs
		wire []byte // msgs in netlink wire format, when c.raw
	}
	type batch struct {
		s   *slot
		err error // build failed: nothing more comes
	}
	ready := make(chan batch, 1)
	free := make(chan *slot, 2)
	for range 2 {
		free <- &slot{msgs: make([]netlink.Message, 0, 1024), a: attrs{b: make([]byte, 0, c.batchBytes+4096)}}
	}
	// When exchange returns the builder has stopped: build is never
	// called afterwards (a Load's text may be unmapped right after).
	stop, done := make(chan struct{}), make(chan struct{})
	defer func() {
		close(stop)
		<-done
	}()
	go func() {
		defer close(done)
		defer close(ready)
		var carry []byte // a request built that did not fit the previous batch
		var carryHdr netlink.Header
		for next := 0; next < n; {
			var sl *slot
			select {
			case sl = <-free:
			case <-stop:
				return
			}
			msgs := sl.msgs[:0]
			sl.a.b, sl.a.off = sl.a.b[:0], 0
			size := 0
			for ; next < n; next++ {
				select {
				case <-stop:
					return
				default:
				}
				var m netlink.Message
				if carry != nil {
					// Copied: it lives in the other slot's buffer.
					sl.a.off = len(sl.a.b)
					sl.a.b = append(sl.a.b, carry...)
					m = netlink.Message{Header: carryHdr, Data: sl.a.b[sl.a.off:len(sl.a.b):len(sl.a.b)]}
					carry = nil
				} else {
					var err error
					if m, err = build(next, &sl.a); err != nil {
						select {
						case ready <- batch{err: err}:
						case <-stop:
						}
						return
					}
				}
				l := nlmsgAlign(16 + len(m.Data))
				if len(msgs) > 0 && size+l > c.batchBytes {
					carry, carryHdr = m.Data, m.Header
					break
				}
				m.Header.Flags = netlink.Request | m.Header.Flags&^netlink.Acknowledge
				msgs = append(msgs, m)
				size += l
			}
			msgs[len(msgs)-1].Header.Flags |= netlink.Acknowledge
			sl.msgs = msgs
			if c.raw != nil {
				sl.wire = c.appendWire(sl.wire[:0], msgs)
			}
			select {
			case ready <- batch{s: sl}:
			case <-stop:
				return
			}
		}
	}()
	sent := 0
	for b := range ready {
		if b.err != nil {
			return sent, b.err
		}
		more, err := c.roundTrip(b.s.msgs, b.s.wire, sent, onErr)
		sent += len(b.s.msgs)
		if err != nil {
			return sent, err
		}
		if !more {
			break
		}
		free <- b.s
	}
	return sent, nil
}

// batchRun runs exchange over n requests and sorts the outcomes: ok
// requests the kernel applied, tolerated ones it rejected with errno
// tolerate (ENOENT for deletes, EEXIST for creates). Any other rejection
// stops after its batch and is returned, described by describe(i); the
// counts then cover every request sent.
func (c *Conn) batchRun(n int, build func(i int, a *attrs) (netlink.Message, error), tolerate error, describe func(i int) string) (ok, tolerated int, err error) {
	var firstErr error
	failed := 0
	sent, err := c.exchange(n, build, func(i int, err error) bool {
		if errors.Is(err, tolerate) {
			tolerated++
			return true
		}
		failed++
		if firstErr == nil {
			firstErr = fmt.Errorf("%s: %w", describe(i), err)
		}
		return false
	})
	if firstErr != nil && err == nil {
		err = firstErr
	}
	return sent - tolerated - failed, tolerated, err
}

// roundTrip sends one batch and reads until its fence acknowledgement.
// base is the index of the batch's first request; wire, when not nil, is
// the batch already in wire format (appendWire). It reports whether onErr
// wants more batches.
func (c *Conn) roundTrip(batch []netlink.Message, wire []byte, base int, onErr func(int, error) bool) (bool, error) {
	out := batch
	if wire != nil {
		if err := c.writeRaw(wire); err != nil {
			return false, err
		}
	} else {
		var err error
		if out, err = c.nl.SendMessages(batch); err != nil {
			return false, err
		}
	}
	first, fence := out[0].Header.Sequence, out[len(out)-1].Header.Sequence
	more := true
	for {
		done := false
		for m, err := range c.nl.ReceiveIter() {
			if err != nil {
				var oe *netlink.OpError
				if !errors.As(err, &oe) || oe.Sequence == 0 {
					return false, err
				}
				idx := int(oe.Sequence - first)
				if idx < 0 || idx >= len(out) {
					return false, fmt.Errorf("reply for unknown sequence %d: %w", oe.Sequence, err)
				}
				if !onErr(base+idx, oe.Err) {
					more = false
				}
				done = oe.Sequence == fence
				break
			}
			if m.Header.Type == netlink.Error && m.Header.Sequence == fence {
				done = true
			}
		}
		if done {
			return more, nil
		}
	}
}

// appendWire appends msgs to b in netlink wire format, numbering them
// from c's own sequence counter (and writing the numbers back into msgs):
// what mdlayher/netlink's SendMessages does, but into a buffer that is
// reused from batch to batch and on the goroutine that builds the next
// batch. SendMessages marshals every message into a new slice and appends
// those to a growing one, which measured 12% of a bulk load's CPU time
// and most of its garbage, on the goroutine that waits for the kernel.
func (c *Conn) appendWire(b []byte, msgs []netlink.Message) []byte {
	for i := range msgs {
		m := &msgs[i]
		c.seq++
		m.Header.Sequence = c.seq
		m.Header.Length = uint32(nlmsgHeaderLen + len(m.Data))
		off := len(b)
		b = append(b, make([]byte, nlmsgAlign(int(m.Header.Length)))...)
		binary.NativeEndian.PutUint32(b[off:], m.Header.Length)
		binary.NativeEndian.PutUint16(b[off+4:], uint16(m.Header.Type))
		binary.NativeEndian.PutUint16(b[off+6:], uint16(m.Header.Flags))
		binary.NativeEndian.PutUint32(b[off+8:], m.Header.Sequence)
		binary.NativeEndian.PutUint32(b[off+12:], 0) // the kernel fills in our port
		copy(b[off+nlmsgHeaderLen:], m.Data)
	}
	return b
}

// nlmsgHeaderLen is the size of struct nlmsghdr.
const nlmsgHeaderLen = 16

// writeRaw sends one datagram of requests already in wire format on the
// library's socket (through its syscall.RawConn; the kernel handles them
// inside the call, so it never waits).
func (c *Conn) writeRaw(b []byte) error {
	var werr error
	err := c.raw.Write(func(fd uintptr) bool {
		var n int
		n, werr = unix.Write(int(fd), b)
		if werr == nil && n != len(b) {
			werr = fmt.Errorf("short netlink write: %d of %d bytes", n, len(b))
		}
		return werr != unix.EAGAIN
	})
	if err != nil {
		return err
	}
	if werr != nil {
		return os.NewSyscallError("write", werr)
	}
	return nil
}

// nlmsgAlign rounds n up to the netlink alignment of 4 bytes.
func nlmsgAlign(n int) int { return (n + 3) &^ 3 }
