// Package watch follows a live OVN Northbound database and keeps the
// ACL-stage logical flows aclc compiles for it up to date, change batch by
// change batch, with the incremental engine of package compile.
//
// A Watcher monitors the NB tables the compiler reads through libovsdb
// (reconnecting with backoff, probing an idle connection, following a
// clustered NB across leader changes and dead members), turns every batch
// of row changes into a delta of flows, and hands it on: as a JSON line
// (Config.Deltas), as the full current flows in lflow-list format
// (Config.WriteSnapshot), as Prometheus metrics, and, when a switch stops
// needing conntrack or a port goes away, as flushes of the conntrack zones
// concerned (see zones.go and docs/watch.md).
package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"reflect"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ovn-kubernetes/libovsdb/cache"
	"github.com/ovn-kubernetes/libovsdb/model"
	"golang.org/x/sys/unix"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// Config says what a Watcher reads and where its results go.
type Config struct {
	// NB says how to reach the NB. Reconnect is always on. Its Timeout
	// bounds each step of one attempt (dial, handshake) and sets the
	// inactivity probe, not how long the watcher waits for the NB at
	// start (ConnectTimeout).
	NB nbschema.Options
	// ConnectTimeout is how long the watcher keeps trying to reach the
	// NB at start before it gives up with an error; 0 means forever, as
	// ovn-northd and ovn-controller wait for their databases. Once the
	// initial NB is read the watcher never gives up: it reconnects after
	// losing the NB with backoff, forever.
	ConnectTimeout time.Duration
	// RetryMin and RetryMax bound the backoff between attempts to reach
	// the NB at start (default DefaultRetryMin, DefaultRetryMax).
	RetryMin, RetryMax time.Duration
	// ReadyFile, when set, is written (atomically) once the watcher is
	// ready — the initial NB compiled, its snapshot out, the load settled
	// — and removed when it stops. See ready.go.
	ReadyFile string
	// ShutdownGrace bounds, once ctx is done, the zone flushes still
	// queued for the batches already emitted (default 5s).
	ShutdownGrace time.Duration
	// WriteSnapshot, when set, is called once the initial NB is compiled
	// and after every batch that changed flows, with a function that
	// writes the full current flows in lflow-list format to a writer. It
	// should replace its target atomically. The flows are streamed: at
	// 50k ACLs they are 60 MB of text, which as one byte slice grown by
	// doubling took the watcher's peak from 180 to 320 MiB.
	WriteSnapshot func(write func(io.Writer) error) error
	// Deltas, when set, receives one JSON line per change batch.
	Deltas io.Writer
	// Lacking are the chassis features to compile as lacking
	// (compile.Options.Lacking; not applied while the NB says
	// ignore_chassis_features).
	Lacking compile.ChassisFeatures
	// Zones maps logical switch ports to conntrack zones; with Flusher it
	// enables zone flushes.
	Zones ZoneSource
	// Flusher flushes conntrack zones; nil disables flushes.
	Flusher Flusher
	// Log receives the watcher's log; nil means slog.Default().
	Log *slog.Logger
	// Metrics, when set, is updated as batches go by.
	Metrics *Metrics
	// Debounce is how long the watcher coalesces under a burst (default
	// 2ms): when row events arrive while a batch is being processed or
	// within Debounce of the last batch, the next batch waits until no
	// event came for Debounce (at most 20 Debounces). An event that finds
	// the watcher idle is processed at once (see settle).
	Debounce time.Duration
	// Quiet is how long the event stream must be silent, once the NB
	// update in flight is in the cache, before an idle watcher takes its
	// batch (default 50µs): it only lets libovsdb's event goroutine hand
	// over the rest of the transaction's row events. Where the watcher can
	// see that goroutine's queue it waits for the queue to be empty and
	// then a tenth of Quiet.
	Quiet time.Duration
	// ResyncEvery is the period of the full comparison of the engine with
	// the NB cache that backs up the row events (default 5 min; <0:
	// never).
	ResyncEvery time.Duration
	// OnBatch, when set, is called after each batch has been emitted.
	OnBatch func(*Batch)
	// LoadGCPercent is the garbage collector's target (as GOGC) while the
	// initial NB is read and compiled (default 15; <0: leave it alone),
	// put back once the initial batch is out. Not applied when the GOGC
	// environment variable is set. See loadGC.
	LoadGCPercent int
}

// Batch is one change batch as the watcher emitted it.
type Batch struct {
	// Seq counts batches from 0 (the initial compile).
	Seq int
	// Initial is the first batch: every flow is "added".
	Initial bool
	// Resync is a batch that came from comparing the whole NB (after a
	// reconnect), not from row events.
	Resync bool
	// Delta is the engine's delta.
	Delta *compile.Delta
	// listing returns the full current flows; see Listing.
	listing func() *lflow.Listing
	flows   *lflow.Listing
	// Compile is the time the engine took for the delta; Latency the time
	// from the first row event of the batch to the delta being emitted.
	Compile, Latency time.Duration
	// CompileCPU is the CPU time of the thread that ran the engine during
	// Compile (0 when not measured).
	CompileCPU time.Duration
	// First is when the batch's first NB row event reached the watcher
	// (zero for the initial and resync batches).
	First time.Time
	// NbCfg is NB_Global's nb_cfg after the batch (0 without NB_Global).
	NbCfg int
}

// Listing returns the full current flows after the batch (shared with the
// engine: read only). It is built on first use, from the engine's state at
// that moment: call it before the batch's OnBatch returns.
func (b *Batch) Listing() *lflow.Listing {
	if b.flows == nil && b.listing != nil {
		b.flows = b.listing()
	}
	return b.flows
}

// threadCPU returns the CPU time the calling thread has used.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// Watcher is one running watch.
type Watcher struct {
	cfg    Config
	log    *slog.Logger
	nb     *nbschema.NB
	engine *compile.Engine
	northd string // NB_Global options:northd_internal_version as last seen
	// undecided: the switches Undecided last reported, joined.
	undecided string
	track     *tracker
	flusher   *zoneFlusher
	seq       int
	tables    map[string]bool
	ct        ctTracker // per switch conntrack use, read from its flows (with flushes)
	// monitorStart is when the attempt that reached the NB began.
	monitorStart time.Time
}

// key names one NB row.
type key struct{ table, uuid string }

// tracker is the libovsdb cache event handler: it only records which rows
// changed (level-triggered); the watcher reads their current content from
// the cache when it processes the batch, so a late or repeated event can
// never bring back an old version of a row.
type tracker struct {
	tables map[string]bool
	mu     sync.Mutex
	dirty  map[key]bool // true: seen as an add
	first  time.Time
	wake   chan struct{}
	// events counts every row event received (for settle's quiet test).
	events atomic.Uint64
}

func newTracker(tables map[string]bool) *tracker {
	return &tracker{tables: tables, dirty: map[key]bool{}, wake: make(chan struct{}, 1)}
}

func uuidOf(m model.Model) string {
	v := reflect.ValueOf(m)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	if f := v.FieldByName("UUID"); f.IsValid() {
		return f.String()
	}
	return ""
}

func (t *tracker) mark(table string, m model.Model, add bool) {
	if !t.tables[table] || m == nil {
		return
	}
	k := key{table, uuidOf(m)}
	t.events.Add(1)
	t.mu.Lock()
	if len(t.dirty) == 0 {
		t.first = time.Now()
	}
	t.dirty[k] = t.dirty[k] || add
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// OnAdd implements cache.EventHandler.
func (t *tracker) OnAdd(table string, m model.Model) { t.mark(table, m, true) }

// OnUpdate implements cache.EventHandler.
func (t *tracker) OnUpdate(table string, _, m model.Model) { t.mark(table, m, false) }

// OnDelete implements cache.EventHandler.
func (t *tracker) OnDelete(table string, m model.Model) { t.mark(table, m, false) }

// drain returns the dirty rows and the time of the first event.
func (t *tracker) drain() (map[key]bool, time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d, first := t.dirty, t.first
	t.dirty = map[key]bool{}
	return d, first
}

func (t *tracker) pending() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.dirty)
}

// New checks cfg and returns a Watcher; Run starts it.
func New(cfg Config) *Watcher {
	if cfg.Debounce <= 0 {
		cfg.Debounce = 2 * time.Millisecond
	}
	if cfg.Quiet <= 0 {
		cfg.Quiet = 50 * time.Microsecond
	}
	if cfg.LoadGCPercent == 0 {
		cfg.LoadGCPercent = 15
	}
	if cfg.ResyncEvery == 0 {
		cfg.ResyncEvery = 5 * time.Minute
	}
	if cfg.RetryMin <= 0 {
		cfg.RetryMin = DefaultRetryMin
	}
	if cfg.RetryMax <= 0 {
		cfg.RetryMax = DefaultRetryMax
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = 5 * time.Second
	}
	cfg.NB.Reconnect = true
	w := &Watcher{cfg: cfg, log: cfg.Log, tables: map[string]bool{}}
	if w.log == nil {
		w.log = slog.Default()
	}
	for _, t := range nbschema.Tables() {
		w.tables[t.Name] = true
	}
	return w
}

// Run connects, compiles the initial NB, and then follows it until ctx is
// done (returning nil). It waits for the NB as a daemon does (see
// connect): it returns an error at start only for an NB it must not
// follow (another database, a version aclc cannot vouch for) or when
// Config.ConnectTimeout passes first. When ctx ends, the batch in flight
// is finished (its delta line, its snapshot, its zone flushes within
// ShutdownGrace) and Run returns nil.
func (w *Watcher) Run(ctx context.Context) error {
	restoreGC := w.loadGC()
	defer restoreGC()
	w.track = newTracker(w.tables)
	nb, err := w.connect(ctx)
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	if nb == nil {
		w.log.Info("stopped before the NB was reached")
		return nil
	}
	defer nb.Close()
	w.nb = nb
	if w.cfg.Metrics != nil {
		w.cfg.Metrics.Connected.Set(1)
	}
	start := w.monitorStart
	w.releaseReply(ctx)
	// The initial rows come as add events too: let them arrive and drop
	// them, the snapshot below holds those rows.
	w.quiesce(ctx, 100*time.Millisecond, 30*time.Second)
	w.track.drain()
	snap, err := w.cacheSnapshot()
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	w.engine = compile.NewEngineWith(snap, compile.Options{Release: snap.Release, Lacking: w.cfg.Lacking})
	if snap.Global != nil {
		w.northd = snap.Global.Options[release.NorthdVersionKey]
	}
	took := time.Since(start)
	listing := w.engine.Listing()
	initial := initialDelta(listing)
	nflows, nswitches := listing.NumFlows(), len(listing.Datapaths)
	w.log.Info("initial NB compiled", "endpoint", nb.Client.CurrentEndpoint(), "switches", nswitches,
		"flows", nflows, "took", took)
	if w.cfg.Metrics != nil {
		w.cfg.Metrics.setFlows(listing)
	}
	if err := w.emit(&Batch{Initial: true, Delta: initial, flows: listing, Compile: took, NbCfg: w.nbCfg()}); err != nil {
		return err
	}
	initial, snap, listing = nil, nil, nil
	if w.cfg.Flusher != nil && w.cfg.Zones != nil {
		w.ct = ctTracker{}
		w.ct.load(w.engine.Listing())
		w.flusher = newZoneFlusher(w.cfg.Flusher, w.log, w.cfg.Metrics, w.cfg.ShutdownGrace)
		done := make(chan struct{})
		fctx, cancel := context.WithCancel(context.Background())
		go func() { w.flusher.run(fctx); close(done) }()
		defer func() { cancel(); <-done }()
	}
	w.settleLoad(restoreGC)
	w.becomeReady(nflows, nswitches)
	defer w.stopping()
	return w.loop(ctx)
}

// settleLoad does, before the watcher says it is ready, what the initial
// load would otherwise leave to the first change: it puts the GC target
// back, collects the load's garbage (the decoded monitor reply, the
// initial delta line) and returns it to the system, rather than keep it
// resident while the watcher idles or collect it in the middle of the
// first batch.
func (w *Watcher) settleLoad(restoreGC func()) {
	restoreGC()
	debug.FreeOSMemory()
}

// loadGC sets the GC target for the initial load and returns the function
// that puts the previous one back (once). The load's peak is its live
// heap (the decoded monitor reply, then the cache, the engine's indexes
// and the compiled flows: about 125 MiB at 50k ACLs) plus what the
// collector lets grow on top of it: with GOGC=100 as much again, up to
// the soft memory limit, so the load alone reached --memory-limit. At 15
// the peak is about 1.35 times the live heap (163-172 MiB RSS at 50k;
// 171-185 at 20), for about 1 s more GC CPU during the load (3.4 -> 4.4
// s under load); once the watcher idles the default target is back. The target is the process's:
// with several watchers loading at once (tests), the first sets it and
// the last puts it back.
func (w *Watcher) loadGC() func() {
	if w.cfg.LoadGCPercent < 0 || os.Getenv("GOGC") != "" {
		return func() {}
	}
	loading.Lock()
	if loading.n == 0 {
		loading.prev = debug.SetGCPercent(w.cfg.LoadGCPercent)
	}
	loading.n++
	loading.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			loading.Lock()
			defer loading.Unlock()
			if loading.n--; loading.n == 0 {
				debug.SetGCPercent(loading.prev)
			}
		})
	}
}

// loading counts the watchers in their initial load, and keeps the GC
// target from before the first.
var loading struct {
	sync.Mutex
	n, prev int
}

// releaseReply makes the JSON-RPC codec drop the monitor reply: it keeps
// the raw bytes of the last reply it read until the next reply replaces
// them, and the initial monitor reply of a large NB (15 MB at 50k ACLs)
// would otherwise stay resident through the compile and after, until the
// first inactivity probe. An echo round trip replaces it. A failed echo
// only costs that memory (a lost connection is the reconnect logic's).
func (w *Watcher) releaseReply(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := w.nb.Client.Echo(ctx); err != nil {
		w.log.Warn("echo after the initial monitor failed", "err", err)
	}
}

// quiesce waits until no row event came for quiet (at most max).
func (w *Watcher) quiesce(ctx context.Context, quiet, max time.Duration) {
	deadline := time.Now().Add(max)
	n := w.track.pending()
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(quiet)
		m := w.track.pending()
		if m == n {
			return
		}
		n = m
	}
}

// initialDelta is the delta from nothing to l.
func initialDelta(l *lflow.Listing) *compile.Delta {
	d := &compile.Delta{Recompiled: len(l.Datapaths), Full: true}
	for _, dp := range l.Datapaths {
		d.Datapaths = append(d.Datapaths, compile.DatapathDelta{UUID: dp.UUID, Name: dp.Name, Name2: dp.Name2,
			Created: true, Added: dp.Flows})
	}
	return d
}

func (w *Watcher) loop(ctx context.Context) error {
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	var resync <-chan time.Time
	if w.cfg.ResyncEvery > 0 {
		t := time.NewTicker(w.cfg.ResyncEvery)
		defer t.Stop()
		resync = t.C
	}
	connected, endpoint := true, w.nb.Client.CurrentEndpoint()
	var (
		lastBatch time.Time     // when the last batch was done
		lost      time.Time     // when the connection was lost
		logAt     time.Time     // when to say again that it still is
		every     time.Duration // and how long after that
	)
	for {
		select {
		case <-ctx.Done():
			w.log.Info("stopping", "batches", w.seq)
			return nil
		case <-w.track.wake:
			if w.track.pending() == 0 {
				continue // a wake for rows already taken (e.g. the initial ones)
			}
			burst := time.Since(lastBatch) < w.cfg.Debounce
			w.settle(ctx, burst)
			if err := w.process(ctx); err != nil {
				return err
			}
			lastBatch = time.Now()
		case <-poll.C:
			// libovsdb keeps Connected() true while it reconnects; it is
			// the endpoint that is empty until a server is back.
			ep := w.nb.Client.CurrentEndpoint()
			now := w.nb.Client.Connected() && ep != ""
			switch {
			case now && (!connected || ep != endpoint):
				w.log.Warn("NB reconnected", "endpoint", ep, "previous", endpoint,
					"down", time.Since(lost).Round(time.Millisecond))
				if w.cfg.Metrics != nil {
					w.cfg.Metrics.Reconnects.Inc()
					w.cfg.Metrics.Connected.Set(1)
				}
				if err := w.resync(ctx, "reconnect"); err != nil {
					return err
				}
				endpoint = ep
			case !now && connected:
				w.log.Warn("NB connection lost; reconnecting", "endpoint", endpoint)
				if w.cfg.Metrics != nil {
					w.cfg.Metrics.Connected.Set(0)
				}
				lost, every = time.Now(), time.Second
				logAt = lost.Add(every)
			case !now && time.Now().After(logAt):
				// libovsdb retries with backoff on its own; say how long
				// the NB has been gone, less and less often.
				w.log.Warn("NB still unreachable; reconnecting", "endpoint", endpoint,
					"down", time.Since(lost).Round(time.Second))
				every = min(2*every, time.Minute)
				logAt = time.Now().Add(every)
			}
			connected = now
		case <-resync:
			if err := w.resync(ctx, "periodic"); err != nil {
				return err
			}
		}
	}
}

// settle decides when the dirty rows are a batch. It always waits for the
// NB update in flight: libovsdb applies one update (one NB transaction, or
// several the server sent together) to its cache under the cache's lock,
// queueing one row event per row as it goes, so once the lock is free every
// event of the update is queued; then until libovsdb's event goroutine has
// handed the queued events over (see handedOver). An idle watcher then goes
// at once: a single transaction is processed in tens of microseconds, not
// after a fixed debounce. Under a burst (events that came while the last
// batch was being processed, or within Debounce of its end) it coalesces:
// it waits until no event came for Debounce, at most 20 Debounces.
func (w *Watcher) settle(ctx context.Context, burst bool) {
	w.cacheBarrier()
	w.handedOver()
	if !burst {
		return
	}
	deadline := time.Now().Add(20 * w.cfg.Debounce)
	n := w.track.events.Load()
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(w.cfg.Debounce):
		}
		m := w.track.events.Load()
		if m == n {
			break
		}
		n = m
	}
	w.cacheBarrier()
	w.handedOver()
}

// cacheBarrier returns once no update is being applied to the libovsdb
// cache (it takes and releases the cache's read lock).
func (w *Watcher) cacheBarrier() {
	if c := w.nb.Client.Cache(); c != nil {
		c.Table(nbschema.Tables()[0].Name)
	}
}

// handedOver returns once the row events queued in libovsdb's event
// channel have reached the tracker: when the channel's length can be read,
// once it is empty and a tenth of Quiet passed without an event (for the
// one event the event goroutine may have taken but not handed over yet);
// otherwise once no event came for Quiet. At most 40 Quiets either way.
func (w *Watcher) handedOver() {
	max := 40 * w.cfg.Quiet
	queued, ok := eventQueue(w.nb.Client.Cache())
	if !ok {
		w.track.quiet(w.cfg.Quiet, max)
		return
	}
	start := time.Now()
	for queued() > 0 && time.Since(start) < max {
		runtime.Gosched()
	}
	w.track.quiet(w.cfg.Quiet/10, max-time.Since(start))
}

// eventQueue returns a function reporting how many row events wait in
// libovsdb's cache event channel (the unexported
// TableCache.eventProcessor.events of libovsdb v0.8), and false when c has
// no such channel.
func eventQueue(c *cache.TableCache) (func() int, bool) {
	if c == nil {
		return nil, false
	}
	ep := reflect.ValueOf(c).Elem().FieldByName("eventProcessor")
	if ep.Kind() != reflect.Pointer || ep.IsNil() {
		return nil, false
	}
	ch := ep.Elem().FieldByName("events")
	if ch.Kind() != reflect.Chan {
		return nil, false
	}
	return ch.Len, true
}

// quiet returns once no row event has arrived for q (at most max). It
// yields instead of sleeping: q is far below a timer's granularity.
func (t *tracker) quiet(q, max time.Duration) {
	start := time.Now()
	last, n := start, t.events.Load()
	for {
		runtime.Gosched()
		now := time.Now()
		if m := t.events.Load(); m != n {
			last, n = now, m
		}
		if now.Sub(last) >= q || now.Sub(start) >= max {
			return
		}
	}
}

// process turns the dirty rows into one batch.
func (w *Watcher) process(ctx context.Context) error {
	dirty, first := w.track.drain()
	if len(dirty) == 0 {
		return nil
	}
	cache := w.nb.Client.Cache()
	if cache == nil {
		return nil
	}
	keys := make([]key, 0, len(dirty))
	for k, add := range dirty {
		if add && w.engine.Row(k.table, k.uuid) != nil {
			// An add of a row the engine already has: libovsdb purged
			// and refilled its cache (a reconnect without a usable
			// last transaction id), and deletions made meanwhile came
			// with no event. Compare everything.
			return w.resync(ctx, "cache refilled")
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].table != keys[j].table {
			return keys[i].table < keys[j].table
		}
		return keys[i].uuid < keys[j].uuid
	})
	changes := make([]compile.RowChange, 0, len(keys))
	for _, k := range keys {
		var row model.Model
		if t := cache.Table(k.table); t != nil {
			if r := t.Row(k.uuid); r != nil {
				row = nbschema.FromClient(k.table, r)
			}
		}
		changes = append(changes, compile.RowChange{Table: k.table, UUID: k.uuid, Row: row})
		if g, ok := row.(*nbdb.NBGlobal); ok {
			if err := w.followNorthd(g.Options[release.NorthdVersionKey]); err != nil {
				return err
			}
		}
	}
	// The engine runs on this goroutine (it only fans out for big
	// rebuilds): lock it to its thread to read the thread's CPU time too,
	// which a loaded machine does not inflate the way it does wall time.
	runtime.LockOSThread()
	cpu0 := threadCPU()
	start := time.Now()
	d := w.engine.Apply(changes)
	took := time.Since(start)
	cpu := threadCPU() - cpu0
	runtime.UnlockOSThread()
	if len(d.Changes) == 0 {
		return nil
	}
	return w.emit(&Batch{Delta: d, listing: w.engine.Listing, Compile: took, CompileCPU: cpu, Latency: time.Since(first), First: first, NbCfg: w.nbCfg()})
}

// followNorthd follows NB_Global options:northd_internal_version: when
// another ovn-northd takes over the NB (an upgrade, or the first run of
// northd on an NB the watcher assumed a version for), the engine compiles
// for its version from this batch on, rebuilding every switch. A version
// aclc cannot vouch for stops the watcher with an error: its flows would
// be a confident guess.
func (w *Watcher) followNorthd(northd string) error {
	if northd == w.northd {
		return nil
	}
	w.northd = northd
	r, how, err := w.nb.Redetect(northd)
	if err != nil {
		return fmt.Errorf("NB at %s: %w", w.nb.Client.CurrentEndpoint(), err)
	}
	if old := w.engine.Release(); !r.Equal(old) {
		w.log.Warn("another ovn-northd serves the NB: compiling for its version", "was", old.Name(), "now", r.Name(), "from", how)
		w.nb.Release, w.nb.ReleaseFrom = r, how
		w.engine.SetRelease(r)
	}
	return nil
}

// nbCfg returns NB_Global's nb_cfg as the engine has it.
func (w *Watcher) nbCfg() int {
	if g := w.engine.Snapshot().Global; g != nil {
		return g.NbCfg
	}
	return 0
}

// cacheSnapshot builds a Snapshot that shares its rows with the libovsdb
// cache instead of copying them: libovsdb never modifies a cached row (it
// replaces it with an updated copy), and neither does the engine. A row
// whose set columns are not in OVSDB's sorted order is copied and sorted;
// so is every row of an NB older than the newest release, whose client
// models are not the in-memory ones (nbschema.FromClient). Origin is left
// empty: the watcher prints no problems.
func (w *Watcher) cacheSnapshot() (*nbschema.Snapshot, error) {
	cache := w.nb.Client.Cache()
	if cache == nil {
		return nil, errors.New("no NB cache")
	}
	s := nbschema.NewSnapshot()
	s.Release, s.ReleaseFrom = w.nb.Release, w.nb.ReleaseFrom
	for _, nt := range nbschema.Tables() {
		t := cache.Table(nt.Name)
		if t == nil {
			continue
		}
		for id, row := range t.RowsShallow() {
			nt.Set(s, id, sortedRow(nt, nbschema.FromClient(nt.Name, row)))
		}
	}
	return s, nil
}

// sortedRow returns row, or a sorted copy of it when its sets are not
// sorted. It copies nothing when they are (as ovsdb-server sends them):
// a copy of every row would double the rows held for the initial
// snapshot.
func sortedRow(t *nbschema.Table, row model.Model) model.Model {
	if t.SetsSorted(row) {
		return row
	}
	c := model.Clone(row)
	t.SortSets(c)
	return c
}

// resync compares the whole NB cache with the engine, row by row, without
// copying the cache, and applies what differs.
func (w *Watcher) resync(_ context.Context, why string) error {
	w.track.drain()
	cache := w.nb.Client.Cache()
	if cache == nil {
		return nil
	}
	var changes []compile.RowChange
	for _, nt := range nbschema.Tables() {
		table := nt.Name
		t := cache.Table(table)
		if t == nil {
			continue
		}
		rows := t.RowsShallow()
		for id, row := range rows {
			row = nbschema.FromClient(table, row)
			old := w.engine.Row(table, id)
			if old != nil && reflect.DeepEqual(old, row) {
				continue
			}
			c := sortedRow(nt, row)
			if old == nil || !reflect.DeepEqual(old, c) {
				changes = append(changes, compile.RowChange{Table: table, UUID: id, Row: c})
			}
		}
		w.engine.ForEachRow(table, func(id string, _ model.Model) {
			if _, ok := rows[id]; !ok {
				changes = append(changes, compile.RowChange{Table: table, UUID: id})
			}
		})
	}
	if len(changes) == 0 {
		return nil
	}
	start := time.Now()
	d := w.engine.Apply(changes)
	took := time.Since(start)
	w.log.Info("resync changed the NB view", "why", why, "rows", len(d.Changes), "datapaths", len(d.Datapaths))
	if len(d.Changes) == 0 {
		return nil
	}
	return w.emit(&Batch{Resync: true, Delta: d, listing: w.engine.Listing, Compile: took, Latency: took, NbCfg: w.nbCfg()})
}

// warnUndecided logs, when it changes, which switches' flows the NB's
// northd may write otherwise depending on its own state
// (compile.KindNorthdUndecided): their flows are then one of northd's
// outcomes, not necessarily its own.
func (w *Watcher) warnUndecided() {
	ids := w.engine.Undecided()
	key := strings.Join(ids, ",")
	if key == w.undecided {
		return
	}
	w.undecided = key
	if len(ids) == 0 {
		w.log.Info("every switch's flows are decided by the NB again")
		return
	}
	var names []string
	for _, id := range ids {
		if ls, ok := w.engine.Snapshot().Switches[id]; ok {
			names = append(names, ls.Name)
		}
	}
	w.log.Warn("not exact: northd may write other flows for these switches, depending on its own state (northd-undecided; aclc compile says why)",
		"switches", names, "release", w.engine.Snapshot().Release.Name())
}

// emit hands a batch on: deltas line, snapshot, metrics, then zone
// flushes (once the new flows are out).
func (w *Watcher) emit(b *Batch) error {
	w.warnUndecided()
	b.Seq = w.seq
	w.seq++
	if b.Latency == 0 {
		b.Latency = b.Compile
	}
	if w.cfg.Deltas != nil {
		if err := writeDeltaLine(w.cfg.Deltas, b); err != nil {
			return fmt.Errorf("watch: write delta: %w", err)
		}
	}
	if w.cfg.WriteSnapshot != nil && (b.Initial || !b.Delta.Empty()) {
		l := b.Listing()
		if err := w.cfg.WriteSnapshot(func(out io.Writer) error { return lflow.WriteText(out, l) }); err != nil {
			// A snapshot that cannot be written is reported; the watch
			// goes on and the next batch tries again.
			w.log.Error("cannot write the snapshot", "err", err)
		}
	}
	if m := w.cfg.Metrics; m != nil {
		m.observe(b)
	}
	if !b.Initial {
		w.log.Info("batch", "seq", b.Seq, "rows", len(b.Delta.Changes), "recompiled", b.Delta.Recompiled,
			"added", b.Delta.NumAdded(), "removed", b.Delta.NumRemoved(), "compile", b.Compile, "resync", b.Resync)
	}
	if w.flusher != nil {
		w.scheduleFlushes(b.Delta)
	}
	if w.cfg.OnBatch != nil {
		w.cfg.OnBatch(b)
	}
	return nil
}

// scheduleFlushes applies the zone-flush policy to one delta.
func (w *Watcher) scheduleFlushes(d *compile.Delta) {
	type why struct{ port, reason string }
	zones := map[uint16]why{}
	add := func(port, reason string) {
		z, ok := w.cfg.Zones.Zone(port)
		if !ok {
			w.log.Info("no conntrack zone known for port; nothing to flush", "port", port, "reason", reason)
			return
		}
		if _, dup := zones[z]; !dup {
			zones[z] = why{port, reason}
		}
	}
	for _, r := range w.ct.apply(d) {
		for _, p := range w.engine.SwitchPortNames(r.id) {
			add(p, r.reason)
		}
	}
	for _, p := range d.DeletedPorts {
		add(p, "port "+p+" deleted")
	}
	ids := make([]uint16, 0, len(zones))
	for z := range zones {
		ids = append(ids, z)
	}
	slices.Sort(ids)
	for _, z := range ids {
		w.flusher.enqueue(flushReq{zone: z, port: zones[z].port, reason: zones[z].reason})
	}
}

// Run is New(cfg).Run(ctx).
func Run(ctx context.Context, cfg Config) error { return New(cfg).Run(ctx) }
