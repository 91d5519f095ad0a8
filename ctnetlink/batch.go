package ctnetlink

import (
	"errors"
	"fmt"

	"github.com/mdlayher/netlink"
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
func (c *Conn) exchange(n int, build func(i int) (netlink.Message, error), onErr func(i int, err error) bool) (int, error) {
	batch := make([]netlink.Message, 0, 1024)
	sent := 0
	for sent < n {
		batch = batch[:0]
		size := 0
		for i := sent; i < n; i++ {
			m, err := build(i)
			if err != nil {
				return sent, err
			}
			l := nlmsgAlign(16 + len(m.Data))
			if len(batch) > 0 && size+l > c.batchBytes {
				break
			}
			m.Header.Flags = netlink.Request | m.Header.Flags&^netlink.Acknowledge
			batch = append(batch, m)
			size += l
		}
		batch[len(batch)-1].Header.Flags |= netlink.Acknowledge
		more, err := c.roundTrip(batch, sent, onErr)
		sent += len(batch)
		if err != nil {
			return sent, err
		}
		if !more {
			break
		}
	}
	return sent, nil
}

// batchRun runs exchange over n requests and sorts the outcomes: ok
// requests the kernel applied, tolerated ones it rejected with errno
// tolerate (ENOENT for deletes, EEXIST for creates). Any other rejection
// stops after its batch and is returned, described by describe(i); the
// counts then cover every request sent.
func (c *Conn) batchRun(n int, build func(i int) (netlink.Message, error), tolerate error, describe func(i int) string) (ok, tolerated int, err error) {
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
// base is the index of the batch's first request. It reports whether
// onErr wants more batches.
func (c *Conn) roundTrip(batch []netlink.Message, base int, onErr func(int, error) bool) (bool, error) {
	out, err := c.nl.SendMessages(batch)
	if err != nil {
		return false, err
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

// nlmsgAlign rounds n up to the netlink alignment of 4 bytes.
func nlmsgAlign(n int) int { return (n + 3) &^ 3 }
