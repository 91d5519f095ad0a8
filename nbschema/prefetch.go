package nbschema

import (
	"io"
	"sync"
)

// prefetch reads a connection ahead of its consumer, into memory: a
// goroutine reads the socket as fast as the kernel delivers, the decoder
// reads the blocks at its own pace. ovsdb-server takes a session's next
// request only once the reply before is all sent (its send backlog
// empty); without the prefetch a pipelined read would hold the server
// back by the decoder's speed, and the server's build of the next reply
// would not overlap the decode of this one. The blocks read ahead are at
// most maxAhead bytes: then the goroutine waits, and the server's backlog
// grows instead.
type prefetch struct {
	mu      sync.Mutex
	cond    sync.Cond
	queue   [][]byte // read, not yet consumed
	ahead   int      // the bytes in queue
	ended   bool     // the reader returned err
	err     error
	stopped bool
	cur     []byte
}

// prefetchBlock is the size of the blocks read into; maxAhead bounds the
// bytes read ahead of the consumer.
const (
	prefetchBlock = 1 << 20
	maxAhead      = 256 << 20
)

// newPrefetch starts reading r. Close stops the goroutine once r's
// current Read returns (close the connection too, or let its deadline
// pass).
func newPrefetch(r io.Reader) *prefetch {
	p := &prefetch{}
	p.cond.L = &p.mu
	go p.run(r)
	return p
}

func (p *prefetch) run(r io.Reader) {
	var block []byte
	for {
		if len(block) == 0 {
			block = make([]byte, prefetchBlock)
		}
		n, err := r.Read(block)
		p.mu.Lock()
		for p.ahead >= maxAhead && !p.stopped {
			p.cond.Wait()
		}
		if p.stopped {
			p.mu.Unlock()
			return
		}
		if n > 0 {
			p.queue = append(p.queue, block[:n:n])
			p.ahead += n
			block = block[n:]
		}
		if err != nil {
			p.ended, p.err = true, err
		}
		p.cond.Broadcast()
		p.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// Read reads the bytes prefetched, in order; at their end, the reader's
// error.
func (p *prefetch) Read(b []byte) (int, error) {
	if len(p.cur) == 0 {
		p.mu.Lock()
		for len(p.queue) == 0 && !p.ended {
			p.cond.Wait()
		}
		if len(p.queue) == 0 {
			err := p.err
			p.mu.Unlock()
			return 0, err
		}
		p.cur = p.queue[0]
		p.queue[0] = nil
		p.queue = p.queue[1:]
		p.ahead -= len(p.cur)
		p.cond.Broadcast()
		p.mu.Unlock()
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

// Close stops the prefetching.
func (p *prefetch) Close() {
	p.mu.Lock()
	p.stopped = true
	p.cond.Broadcast()
	p.mu.Unlock()
}
