package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/aclc/aclc/internal/ovsdbconn"
)

// rtConn is a unix socket to the NB whose incoming messages are read by
// blocking read(2) calls on a thread of its own at real-time priority
// (SCHED_FIFO, when the bench may set it): the time recorded for a
// message is when the read that returned its first bytes returned, and
// the kernel wakes that thread as soon as they reach the socket, ahead of
// the ovsdb-server, ovn-northd and aclc watch processes competing for the
// same cores (the thread does a few microseconds of work per message).
// No Go netpoller or scheduler queue stands between the bytes and the
// clock: on the 2 shared cores a normal goroutine's clock read lagged the
// watcher's own first row event by up to 0.5 ms.
type rtConn struct {
	fd int
	// handle is called, on the reading thread, with each message and the
	// time its first bytes arrived.
	handle func(msg []byte, at time.Time)
	mu     sync.Mutex
	cond   *sync.Cond
	err    error
	rt     bool // the reading thread runs at real-time priority
}

// rtDenied records that a reading thread could not get real-time
// priority (the report says so).
var rtDenied atomic.Bool

// dialRT connects to remote (unix:PATH) and starts reading it, calling
// handle for each message.
func dialRT(remote string, handle func(c *rtConn, msg []byte, at time.Time)) (*rtConn, error) {
	path, ok := strings.CutPrefix(remote, "unix:")
	if !ok {
		return nil, fmt.Errorf("NB remote %q: want unix:PATH", remote)
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		unix.Close(fd)
		return nil, err
	}
	c := &rtConn{fd: fd}
	c.cond = sync.NewCond(&c.mu)
	c.handle = func(msg []byte, at time.Time) { handle(c, msg, at) }
	started := make(chan struct{})
	go c.read(started)
	<-started
	return c, nil
}

// Close shuts the connection down; the reader ends.
func (c *rtConn) Close() error { return unix.Shutdown(c.fd, unix.SHUT_RDWR) }

// write writes b whole.
func (c *rtConn) write(b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(c.fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// read reads messages until the connection ends.
func (c *rtConn) read(started chan struct{}) {
	runtime.LockOSThread() // never unlocked: the thread ends with the reader
	defer unix.Close(c.fd)
	attr := unix.SchedAttr{Size: uint32(unsafe.Sizeof(unix.SchedAttr{})), Policy: unix.SCHED_FIFO, Priority: 10}
	c.rt = unix.SchedSetAttr(0, &attr, 0) == nil
	if !c.rt {
		rtDenied.Store(true)
	}
	close(started)
	buf := make([]byte, 64<<10)
	var (
		msg  []byte
		at   time.Time
		scan ovsdbconn.MessageScanner
	)
	for {
		n, err := unix.Read(c.fd, buf)
		now := time.Now()
		if n <= 0 {
			if err == unix.EINTR {
				continue
			}
			c.fail(fmt.Errorf("NB connection: read: %v (n=%d)", err, n))
			return
		}
		for _, ch := range buf[:n] {
			in, end, err := scan.Step(ch)
			if err != nil {
				c.fail(err)
				return
			}
			if !in {
				continue
			}
			if len(msg) == 0 {
				at = now
			}
			msg = append(msg, ch)
			if end {
				c.handle(msg, at)
				msg = msg[:0]
			}
		}
	}
}

// fail records the reader's error and wakes the waiters.
func (c *rtConn) fail(err error) {
	c.mu.Lock()
	c.err = err
	c.cond.Broadcast()
	c.mu.Unlock()
}

// rpcMessage is a JSON-RPC message as the bench reads it.
type rpcMessage struct {
	ID     json.RawMessage   `json:"id"`
	Method string            `json:"method"`
	Params []json.RawMessage `json:"params"`
	Result json.RawMessage   `json:"result"`
	Error  json.RawMessage   `json:"error"`
}

// answerEcho answers the server's inactivity probe; it reports whether
// msg was one.
func (c *rtConn) answerEcho(msg *rpcMessage) bool {
	if msg.Method != "echo" {
		return false
	}
	reply, _ := json.Marshal(map[string]any{"id": msg.ID, "result": msg.Params, "error": nil})
	c.write(reply)
	return true
}

// rawMonitor monitors NB_Global nb_cfg on an rtConn of its own and
// records when the first bytes of each update notification reached its
// socket. ovsdb-server writes the update notifications of one commit to
// its sessions in the order they connected, so a raw monitor connected
// just before the watcher and one just after it bracket the moment the
// watcher's notification reaches the watcher's socket.
type rawMonitor struct {
	c    *rtConn
	seen map[int]time.Time // nb_cfg -> first bytes of the update that set it
}

// dialRawMonitor connects to the NB at remote and starts monitoring
// NB_Global's nb_cfg.
func dialRawMonitor(remote string) (*rawMonitor, error) {
	m := &rawMonitor{seen: map[int]time.Time{}}
	c, err := dialRT(remote, m.message)
	if err != nil {
		return nil, err
	}
	m.c = c
	req := `{"id":"mon","method":"monitor","params":["OVN_Northbound",null,{"NB_Global":{"columns":["nb_cfg"]}}]}`
	if err := c.write([]byte(req)); err != nil {
		c.Close()
		return nil, err
	}
	return m, nil
}

// Close stops the monitor.
func (m *rawMonitor) Close() { m.c.Close() }

// message records the nb_cfg of an update notification.
func (m *rawMonitor) message(c *rtConn, raw []byte, at time.Time) {
	var msg rpcMessage
	if json.Unmarshal(raw, &msg) != nil || c.answerEcho(&msg) || msg.Method != "update" || len(msg.Params) != 2 {
		return
	}
	var tu map[string]map[string]struct {
		New *struct {
			NbCfg int `json:"nb_cfg"`
		} `json:"new"`
	}
	if json.Unmarshal(msg.Params[1], &tu) != nil {
		return
	}
	for _, row := range tu["NB_Global"] {
		if row.New != nil {
			c.mu.Lock()
			if _, ok := m.seen[row.New.NbCfg]; !ok {
				m.seen[row.New.NbCfg] = at
			}
			c.cond.Broadcast()
			c.mu.Unlock()
		}
	}
}

// wait returns when the update that set nb_cfg to cfg reached the socket,
// waiting for it at most d.
func (m *rawMonitor) wait(cfg int, d time.Duration) (time.Time, error) {
	c := m.c
	return waitFor(c, d, func() (time.Time, bool) {
		t, ok := m.seen[cfg]
		delete(m.seen, cfg)
		return t, ok
	}, func() error { return fmt.Errorf("raw monitor: no update to nb_cfg %d within %v", cfg, d) })
}

// waitFor waits, with c's lock held, until found reports a result, c's
// reader fails or d passes.
func waitFor[T any](c *rtConn, d time.Duration, found func() (T, bool), timeout func() error) (T, error) {
	deadline := time.Now().Add(d)
	timer := time.AfterFunc(d, func() {
		c.mu.Lock()
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer timer.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero T
	for {
		if v, ok := found(); ok {
			return v, nil
		}
		if c.err != nil {
			return zero, c.err
		}
		if time.Now().After(deadline) {
			return zero, timeout()
		}
		c.cond.Wait()
	}
}
