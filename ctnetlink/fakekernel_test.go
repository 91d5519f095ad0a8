package ctnetlink

import (
	"encoding/binary"
	"errors"
	"iter"
	"slices"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// fakeKernel is a netlink.Socket that plays ctnetlink with a conntrack
// table in memory. With honoursZone false it behaves like a kernel before
// Linux 6.8: CTA_ZONE in dump and flush requests is accepted and ignored,
// so a zone-only delete flushes the whole table. It records every request
// and answers one datagram per reply, as the kernel does.
type fakeKernel struct {
	honoursZone bool
	capacity    int // 0: unlimited; else ENOMEM beyond it
	entries     []Entry
	nextID      uint32
	sent        []netlink.Message
	sendCalls   int
	queue       [][]netlink.Message
}

var errWouldBlock = errors.New("fake kernel: nothing to receive")

func (k *fakeKernel) conn(cfg *Config) *Conn { return NewConn(netlink.NewConn(k, 1), cfg) }

func (k *fakeKernel) Close() error { return nil }

func (k *fakeKernel) Send(m netlink.Message) error { return k.SendMessages([]netlink.Message{m}) }

func (k *fakeKernel) SendMessages(ms []netlink.Message) error {
	k.sendCalls++
	for _, m := range ms {
		k.sent = append(k.sent, m)
		k.handle(m)
	}
	return nil
}

func (k *fakeKernel) Receive() ([]netlink.Message, error) {
	var out []netlink.Message
	for m, err := range k.ReceiveIter() {
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

func (k *fakeKernel) ReceiveIter() iter.Seq2[netlink.Message, error] {
	return func(yield func(netlink.Message, error) bool) {
		if len(k.queue) == 0 {
			yield(netlink.Message{}, errWouldBlock)
			return
		}
		d := k.queue[0]
		k.queue = k.queue[1:]
		for _, m := range d {
			if !yield(m, nil) {
				return
			}
		}
	}
}

// reply queues the answer to req: an error, or an ack if asked for.
func (k *fakeKernel) reply(req netlink.Message, errno unix.Errno) {
	if errno == 0 && req.Header.Flags&netlink.Acknowledge == 0 {
		return
	}
	data := make([]byte, 4, 20)
	binary.NativeEndian.PutUint32(data, uint32(-int32(errno)))
	hdr := make([]byte, 16)
	binary.NativeEndian.PutUint32(hdr, req.Header.Length)
	binary.NativeEndian.PutUint16(hdr[4:], uint16(req.Header.Type))
	binary.NativeEndian.PutUint16(hdr[6:], uint16(req.Header.Flags))
	binary.NativeEndian.PutUint32(hdr[8:], req.Header.Sequence)
	binary.NativeEndian.PutUint32(hdr[12:], req.Header.PID)
	k.queue = append(k.queue, []netlink.Message{{
		Header: netlink.Header{Type: netlink.Error, Sequence: req.Header.Sequence, PID: req.Header.PID},
		Data:   append(data, hdr...),
	}})
}

func (k *fakeKernel) handle(m netlink.Message) {
	msg := uint16(m.Header.Type) & 0xff
	family, version := Family(m.Data[0]), m.Data[1]
	var zone *uint16
	hasTuple, hasID := false, false
	var id uint32
	_ = walk(m.Data[4:], func(typ uint16, p []byte) error {
		switch typ {
		case ctaZone:
			z := be16(p)
			zone = &z
		case ctaTupleOrig, ctaTupleReply:
			hasTuple = true
		case ctaID:
			hasID, id = true, be32(p)
		}
		return nil
	})
	switch netfilterMsg := msg; netfilterMsg {
	case uint16(msgNew):
		e, err := decodeEntry(m)
		if err != nil {
			k.reply(m, unix.EINVAL)
			return
		}
		if k.find(e.Orig, e.Zone) >= 0 {
			k.reply(m, unix.EEXIST)
			return
		}
		if k.capacity > 0 && len(k.entries) >= k.capacity {
			k.reply(m, unix.ENOMEM)
			return
		}
		k.nextID++
		e.ID, e.Use = k.nextID, 1
		k.entries = append(k.entries, e)
		k.reply(m, 0)
	case uint16(msgGet):
		var d []netlink.Message
		for _, e := range k.entries {
			if k.honoursZone && zone != nil && e.Zone != *zone || !family.matches(e.Family) {
				continue
			}
			d = append(d, encodeFakeEntry(e, m.Header.Sequence))
		}
		d = append(d, netlink.Message{Header: netlink.Header{Type: netlink.Done, Flags: netlink.Multi, Sequence: m.Header.Sequence}, Data: make([]byte, 4)})
		k.queue = append(k.queue, d)
	case uint16(msgDelete):
		if hasTuple {
			e, _ := decodeEntry(m)
			z := uint16(0)
			if zone != nil {
				z = *zone
			}
			i := k.find(e.Orig, z)
			if i < 0 || hasID && k.entries[i].ID != id {
				k.reply(m, unix.ENOENT)
				return
			}
			k.entries = slices.Delete(k.entries, i, i+1)
			k.reply(m, 0)
			return
		}
		k.entries = slices.DeleteFunc(k.entries, func(e Entry) bool {
			if k.honoursZone && zone != nil && e.Zone != *zone {
				return false
			}
			return version == 0 || family.matches(e.Family)
		})
		k.reply(m, 0)
	default:
		k.reply(m, unix.EOPNOTSUPP)
	}
}

// find returns the index of the entry with original tuple t in zone.
func (k *fakeKernel) find(t Tuple, zone uint16) int {
	return slices.IndexFunc(k.entries, func(e Entry) bool { return e.Orig == t && e.Zone == zone })
}

// encodeFakeEntry encodes e as a dump reply part.
func encodeFakeEntry(e Entry, seq uint32) netlink.Message {
	a := newAttrs(0)
	encodeTuple(&a, ctaTupleOrig, e.Orig)
	encodeTuple(&a, ctaTupleReply, e.Reply)
	a.u32(ctaStatus, uint32(e.Status))
	a.u32(ctaTimeout, e.Timeout)
	if e.Zone != 0 {
		a.u16(ctaZone, e.Zone)
	}
	a.u32(ctaID, e.ID)
	a.u32(ctaUse, e.Use)
	m, err := a.message(header(msgNew, e.Family, 0, netlink.Multi))
	if err != nil {
		panic(err)
	}
	m.Header.Flags = netlink.Multi
	m.Header.Sequence = seq
	return m
}
