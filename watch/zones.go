package watch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/aclc/aclc/ctnetlink"
)

// ZoneSource says which conntrack zone ovn-controller gave a logical
// switch port. A source remembers zones of ports that have gone: a port's
// zone is flushed after the port is deleted, when ovn-controller may
// already have dropped it.
type ZoneSource interface {
	// Zone returns the zone of the port named port.
	Zone(port string) (uint16, bool)
}

// Flusher removes every conntrack entry of one zone.
type Flusher interface {
	FlushZone(ctx context.Context, zone uint16) error
}

// FileZones reads zones from a YAML file mapping port names to zones
// ("lsp1: 5"). The file is read again whenever its modification time
// changes; zones of ports no longer in the file are remembered.
type FileZones struct {
	Path string

	mu    sync.Mutex
	mtime time.Time
	zones map[string]uint16
}

// NewFileZones reads path and returns the source.
func NewFileZones(path string) (*FileZones, error) {
	f := &FileZones{Path: path, zones: map[string]uint16{}}
	if err := f.reload(true); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *FileZones) reload(force bool) error {
	st, err := os.Stat(f.Path)
	if err != nil {
		return fmt.Errorf("zones file: %w", err)
	}
	if !force && st.ModTime().Equal(f.mtime) {
		return nil
	}
	data, err := os.ReadFile(f.Path)
	if err != nil {
		return fmt.Errorf("zones file: %w", err)
	}
	var m map[string]int
	if err := yaml.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("zones file %s: %w", f.Path, err)
	}
	for port, z := range m {
		if err := ctnetlink.CheckZone(z); err != nil {
			return fmt.Errorf("zones file %s: port %s: %w", f.Path, port, err)
		}
		f.zones[port] = uint16(z)
	}
	f.mtime = st.ModTime()
	return nil
}

// Zone implements ZoneSource.
func (f *FileZones) Zone(port string) (uint16, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.reload(false); err != nil {
		slog.Warn("zones file unreadable; using the zones read before", "err", err)
	}
	z, ok := f.zones[port]
	return z, ok
}

// NetlinkFlusher flushes zones through ctnetlink in the network namespace
// NetNS ("" for the watcher's own), with the kernel zone filter where the
// kernel honours it and the dump-and-delete fallback elsewhere.
type NetlinkFlusher struct {
	NetNS string

	conn *ctnetlink.Conn
}

// FlushZone implements Flusher. It is called from one goroutine only.
func (f *NetlinkFlusher) FlushZone(_ context.Context, zone uint16) error {
	if f.conn == nil {
		c, err := ctnetlink.Dial(&ctnetlink.Config{NetNS: f.NetNS})
		if err != nil {
			return err
		}
		f.conn = c
	}
	if _, err := f.conn.FlushZone(zone, ctnetlink.FlushOptions{}); err != nil {
		f.conn.Close()
		f.conn = nil
		return err
	}
	return nil
}

// DryRunFlusher only logs the zones it would flush.
type DryRunFlusher struct{ Log *slog.Logger }

// FlushZone implements Flusher.
func (f DryRunFlusher) FlushZone(_ context.Context, zone uint16) error {
	f.Log.Info("dry-run: would flush conntrack zone", "zone", zone)
	return nil
}

// flushReq is one zone to flush and why.
type flushReq struct {
	zone   uint16
	port   string
	reason string
}

// zoneFlusher runs the flushes on their own goroutine, so that a slow or
// failing flush never holds up flow updates; a failed flush is retried
// with backoff until it succeeds or another request for the zone arrives.
type zoneFlusher struct {
	f       Flusher
	log     *slog.Logger
	metrics *Metrics
	reqs    chan flushReq
	// grace bounds the flushes still due when run's context ends.
	grace time.Duration
}

func newZoneFlusher(f Flusher, log *slog.Logger, m *Metrics, grace time.Duration) *zoneFlusher {
	return &zoneFlusher{f: f, log: log, metrics: m, reqs: make(chan flushReq, 4096), grace: grace}
}

func (z *zoneFlusher) enqueue(r flushReq) {
	select {
	case z.reqs <- r:
	default:
		z.log.Error("zone flush queue full; dropping flush", "zone", r.zone, "port", r.port, "reason", r.reason)
	}
}

// retryBase and retryMax bound the backoff between attempts at a zone.
const (
	retryBase = 100 * time.Millisecond
	retryMax  = 10 * time.Second
)

func (z *zoneFlusher) run(ctx context.Context) {
	type retry struct {
		req     flushReq
		at      time.Time
		backoff time.Duration
		tries   int
	}
	retries := map[uint16]*retry{}
	attempt := func(ctx context.Context, r flushReq, tries int) error {
		err := z.f.FlushZone(ctx, r.zone)
		if z.metrics != nil {
			z.metrics.flush(err)
		}
		if err != nil {
			z.log.Error("conntrack zone flush failed; will retry", "zone", r.zone, "port", r.port,
				"reason", r.reason, "attempt", tries, "err", err)
			return err
		}
		z.log.Info("flushed conntrack zone", "zone", r.zone, "port", r.port, "reason", r.reason)
		return nil
	}
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		next := time.Now().Add(time.Hour)
		for _, r := range retries {
			if r.at.Before(next) {
				next = r.at
			}
		}
		timer.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			// The watcher stops: the zones of the batches already out
			// are still flushed, each once more at most, within grace —
			// a zone left unflushed keeps connections that the new flows
			// no longer send through conntrack.
			gctx, cancel := context.WithTimeout(context.Background(), z.grace)
			defer cancel()
			for gctx.Err() == nil {
				select {
				case r := <-z.reqs:
					delete(retries, r.zone)
					if attempt(gctx, r, 1) != nil {
						retries[r.zone] = &retry{req: r, tries: 1}
					}
					continue
				default:
				}
				break
			}
			for zone, r := range retries {
				if gctx.Err() == nil && attempt(gctx, r.req, r.tries+1) == nil {
					continue
				}
				z.log.Error("conntrack zone left unflushed at shutdown", "zone", zone, "port", r.req.port, "reason", r.req.reason)
			}
			return
		case r := <-z.reqs:
			delete(retries, r.zone)
			if err := attempt(ctx, r, 1); err != nil {
				retries[r.zone] = &retry{req: r, at: time.Now().Add(retryBase), backoff: retryBase, tries: 1}
			}
		case <-timer.C:
			now := time.Now()
			for zone, r := range retries {
				if r.at.After(now) {
					continue
				}
				r.tries++
				if err := attempt(ctx, r.req, r.tries); err != nil {
					r.backoff = min(2*r.backoff, retryMax)
					r.at = time.Now().Add(r.backoff)
					continue
				}
				delete(retries, zone)
			}
		}
	}
}
