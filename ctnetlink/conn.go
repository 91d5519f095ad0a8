package ctnetlink

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// Defaults for Config fields left zero.
const (
	// DefaultReadBuffer is the socket receive buffer asked for: batched
	// acknowledgements and errors must not overflow it (they would be
	// lost with ENOBUFS although the kernel applied the requests).
	DefaultReadBuffer = 32 << 20
	// DefaultBatchBytes bounds the requests packed into one sendmsg.
	// 64 KiB batches measured faster than 1 MiB ones.
	DefaultBatchBytes = 64 << 10
	// messageBuffer is the userspace buffer for one recvmsg. Anything
	// above 32 KiB lets the kernel fill dump datagrams of 32 KiB instead
	// of one page, and saves the peek before every read.
	messageBuffer = 64 << 10
)

// Config tunes Dial. The zero value talks to the caller's own network
// namespace with the defaults above.
type Config struct {
	// NetNS selects the network namespace by name (/run/netns/NAME).
	NetNS string
	// NetNSPath selects the network namespace by path, e.g.
	// /proc/PID/ns/net. It wins over NetNS.
	NetNSPath string
	// ReadBuffer is the socket receive buffer in bytes (SO_RCVBUFFORCE
	// when permitted, else SO_RCVBUF capped by net.core.rmem_max).
	ReadBuffer int
	// BatchBytes bounds the bytes of requests sent in one sendmsg.
	BatchBytes int
	// Support, when set, is used instead of detecting whether the kernel
	// honours the zone filter (see Detect). Tests use it to play an old
	// kernel; callers that already know can skip the probe.
	Support *Support
}

// Conn is one ctnetlink socket. A whole operation (a flush, a dump plus
// its deletes, a load) runs over the same Conn. A Conn is not safe for
// concurrent use.
type Conn struct {
	nl         *netlink.Conn
	netnsName  string
	batchBytes int
	support    *Support

	// raw is the socket under nl, for sending batches already in wire
	// format; nil when nl has none (a test's fake kernel), and batches
	// then go through SendMessages.
	raw syscall.RawConn
	seq uint32 // sequence numbers of those batches
}

// netnsPath returns the namespace file cfg selects and a name for errors.
func (cfg *Config) netnsPath() (path, name string) {
	switch {
	case cfg.NetNSPath != "":
		return cfg.NetNSPath, cfg.NetNSPath
	case cfg.NetNS != "":
		return filepath.Join("/run/netns", cfg.NetNS), cfg.NetNS
	}
	return "", ""
}

// Dial opens a ctnetlink socket, inside the network namespace cfg names,
// with a large receive buffer. cfg may be nil.
func Dial(cfg *Config) (*Conn, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	c := &Conn{}
	path, name := cfg.netnsPath()
	c.netnsName = name
	nlcfg := &netlink.Config{MessageBufferSize: messageBuffer}
	if path != "" {
		f, err := os.Open(path)
		if err != nil {
			return nil, c.opError("dial", -1, fmt.Errorf("open network namespace: %w", err))
		}
		// The socket keeps the namespace alive; the fd is only needed
		// while the socket is created.
		defer f.Close()
		var st unix.Statfs_t
		if err := unix.Fstatfs(int(f.Fd()), &st); err == nil && st.Type != unix.NSFS_MAGIC && st.Type != unix.PROC_SUPER_MAGIC {
			return nil, c.opError("dial", -1, fmt.Errorf("%s is not a network namespace file", path))
		}
		nlcfg.NetNS = int(f.Fd())
	}
	nl, err := netlink.Dial(unix.NETLINK_NETFILTER, nlcfg)
	if err != nil {
		return nil, c.opError("dial", -1, err)
	}
	c.init(nl, cfg)
	if err := c.setReadBuffer(cfg.ReadBuffer); err != nil {
		nl.Close()
		return nil, c.opError("dial", -1, err)
	}
	// Errors need not echo the whole request back.
	_ = nl.SetOption(netlink.CapAcknowledge, true)
	return c, nil
}

// NewConn wraps an existing netlink connection, for example one from
// mdlayher/netlink/nltest or a fake kernel in tests.
func NewConn(nl *netlink.Conn, cfg *Config) *Conn {
	if cfg == nil {
		cfg = &Config{}
	}
	c := &Conn{}
	_, c.netnsName = cfg.netnsPath()
	c.init(nl, cfg)
	return c
}

func (c *Conn) init(nl *netlink.Conn, cfg *Config) {
	c.nl = nl
	if rc, err := nl.SyscallConn(); err == nil {
		c.raw = rc
		// Random, like the library's own counter for the other requests
		// on this socket; the two never have requests in flight at once.
		c.seq = rand.Uint32()
	}
	c.batchBytes = cfg.BatchBytes
	if c.batchBytes <= 0 {
		c.batchBytes = DefaultBatchBytes
	}
	c.support = cfg.Support
}

// setReadBuffer sets SO_RCVBUFFORCE (root) or else SO_RCVBUF.
func (c *Conn) setReadBuffer(n int) error {
	if n <= 0 {
		n = DefaultReadBuffer
	}
	rc, err := c.nl.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, n)
	}); err != nil {
		return err
	}
	if serr == nil {
		return nil
	}
	return c.nl.SetReadBuffer(n)
}

// ReadBuffer returns the socket's receive buffer size as the kernel
// reports it (twice the requested size, for bookkeeping overhead).
func (c *Conn) ReadBuffer() (int, error) { return c.nl.ReadBuffer() }

// Close closes the socket.
func (c *Conn) Close() error { return c.nl.Close() }
