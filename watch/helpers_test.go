package watch_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/watch"
)

// syncBuffer is a bytes.Buffer safe for one writer and readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// running is a watcher started by a test.
type running struct {
	snapshot string
	deltas   *syncBuffer
	logs     *syncBuffer
	cancel   context.CancelFunc
	done     chan error
	batches  chan *watch.Batch
	// norm, when set, is applied to both sides before waitSnapshot
	// compares them (lflow.RenumberACLIDs for live ACL ids).
	norm func(*lflow.Listing) *lflow.Listing
	// ready is Config.ReadyFile.
	ready string
}

// startWatch runs a watcher on remotes in the background until the test
// ends; cfg's NB, snapshot, deltas and log are filled in.
func startWatch(t *testing.T, remotes string, cfg watch.Config) *running {
	t.Helper()
	r := launchWatch(t, remotes, cfg)
	r.waitInitial(t, 30*time.Second)
	return r
}

// launchWatch is startWatch without waiting for the initial snapshot: the
// NB may not be up yet.
func launchWatch(t *testing.T, remotes string, cfg watch.Config) *running {
	t.Helper()
	dir := t.TempDir()
	r := &running{snapshot: filepath.Join(dir, "flows.txt"), deltas: &syncBuffer{}, logs: &syncBuffer{},
		done: make(chan error, 1), batches: make(chan *watch.Batch, 10000), ready: filepath.Join(dir, "ready")}
	cfg.NB = nbschema.Options{Remotes: remotes, Timeout: 5 * time.Second}
	cfg.ReadyFile = r.ready
	cfg.Deltas = r.deltas
	cfg.Log = slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	cfg.WriteSnapshot = func(write func(io.Writer) error) error {
		tmp := r.snapshot + ".tmp"
		f, err := os.Create(tmp)
		if err != nil {
			return err
		}
		err = write(f)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		return os.Rename(tmp, r.snapshot)
	}
	onBatch := cfg.OnBatch
	cfg.OnBatch = func(b *watch.Batch) {
		if onBatch != nil {
			onBatch(b)
		}
		select {
		case r.batches <- b:
		default:
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	go func() { r.done <- watch.Run(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("watch: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("watch did not stop within 10s")
		}
		if t.Failed() {
			t.Logf("watch log:\n%s", tail(r.logs.String(), 60))
		}
	})
	return r
}

// waitInitial waits up to timeout for the initial snapshot.
func (r *running) waitInitial(t *testing.T, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if _, err := os.Stat(r.snapshot); err == nil {
			return
		}
		select {
		case err := <-r.done:
			r.done <- err // for the cleanup
			t.Fatalf("watch stopped: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no initial snapshot after %v; log:\n%s", timeout, r.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (r *running) readSnapshot(t *testing.T) (*lflow.Listing, []byte) {
	t.Helper()
	data, err := os.ReadFile(r.snapshot)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lflow.ParseText(r.snapshot, bytes.NewReader(data))
	if err != nil {
		t.Fatalf("snapshot does not parse: %v", err)
	}
	return l, data
}

// waitSnapshot waits until the snapshot's flows equal want (datapaths
// matched by name) and returns the snapshot's bytes.
func (r *running) waitSnapshot(t *testing.T, what string, want *lflow.Listing, timeout time.Duration) []byte {
	t.Helper()
	data, diff := r.trySnapshot(t, want, timeout)
	if diff != "" {
		t.Fatalf("snapshot still differs from %s after %v:\n%s", what, timeout, diff)
	}
	return data
}

// trySnapshot waits up to timeout for the snapshot's flows to equal want;
// it returns the snapshot's bytes, or the last difference.
func (r *running) trySnapshot(t *testing.T, want *lflow.Listing, timeout time.Duration) ([]byte, string) {
	t.Helper()
	if r.norm != nil {
		want = r.norm(want)
	}
	deadline := time.Now().Add(timeout)
	for {
		got, data := r.readSnapshot(t)
		if r.norm != nil {
			got = r.norm(got)
		}
		ch := lflow.Diff(want, got)
		if len(ch) == 0 && want.NumFlows() == got.NumFlows() {
			return data, ""
		}
		if time.Now().After(deadline) {
			var d bytes.Buffer
			lflow.WriteDiff(&d, "northd", "aclc watch --snapshot", ch)
			return data, tail(d.String(), 40)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// compileLive is what `aclc compile --nb REMOTE` prints now.
func compileLive(t *testing.T, ctx context.Context, remotes string) []byte {
	t.Helper()
	snap, err := nbschema.LoadLive(ctx, nbschema.Options{Remotes: remotes, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := lflow.WriteText(&b, compile.Compile(snap).Flows); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// replayDeltas applies every --deltas line, from nothing, and returns the
// resulting listing.
// replayDeltas applies every --deltas line of a watch on an NB of the
// release whose stage layout is lay, from nothing, and returns the
// resulting listing.
func replayDeltas(t *testing.T, lay *lflow.Layout, data string) (*lflow.Listing, int) {
	t.Helper()
	type dp struct {
		name, name2 string
		flows       map[lflow.Key]lflow.Flow
	}
	dps := map[string]*dp{}
	n := 0
	sc := bufio.NewScanner(strings.NewReader(data))
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		var rec watch.DeltaRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("deltas line %d: %v", n+1, err)
		}
		if rec.Seq != n {
			t.Fatalf("deltas line %d has seq %d", n+1, rec.Seq)
		}
		n++
		flow := func(f watch.DeltaFlow) lflow.Flow {
			st, ok := lay.StageByName(f.Stage)
			if !ok {
				t.Fatalf("deltas: unknown stage %q", f.Stage)
			}
			return lflow.Flow{Stage: st, Priority: f.Priority, Match: f.Match, Actions: f.Actions}
		}
		get := func(uuid, name string) *dp {
			d := dps[uuid]
			if d == nil {
				d = &dp{name: name, flows: map[lflow.Key]lflow.Flow{}}
				dps[uuid] = d
			}
			return d
		}
		for _, f := range rec.Removed {
			delete(get(f.DatapathUUID, f.Datapath).flows, flow(f).Key())
		}
		for _, f := range rec.Added {
			fl := flow(f)
			get(f.DatapathUUID, f.Datapath).flows[fl.Key()] = fl
		}
		for _, op := range rec.Datapaths {
			if op.Deleted {
				delete(dps, op.UUID)
				continue
			}
			d := get(op.UUID, op.Name)
			d.name, d.name2 = op.Name, op.Name2
		}
		for _, f := range rec.Added {
			d := dps[f.DatapathUUID]
			d.name = f.Datapath
		}
	}
	l := &lflow.Listing{}
	for uuid, d := range dps {
		ld := &lflow.Datapath{Name: d.name, Name2: d.name2, UUID: uuid}
		for _, f := range d.flows {
			ld.Flows = append(ld.Flows, f)
		}
		if len(ld.Flows) > 0 {
			l.Datapaths = append(l.Datapaths, ld)
		}
	}
	l.Sort()
	return l, n
}

func textOf(t *testing.T, l *lflow.Listing) string {
	t.Helper()
	var b bytes.Buffer
	if err := lflow.WriteText(&b, l); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var _ = fmt.Sprint

func mustParse(t *testing.T, data []byte) *lflow.Listing {
	t.Helper()
	l, err := lflow.ParseText("listing", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// startNB starts an NB (and SB) ovsdb-server without northd for the test
// and returns it with a one-minute context.
func startNB(t *testing.T) (*ovnsandbox.Sandbox, context.Context) {
	t.Helper()
	return startReleaseNB(t, release.MustLookup("23.03.1"))
}

// startReleaseNB is startNB with release r's ovsdb-server and NB schema.
func startReleaseNB(t *testing.T, r *release.Release) (*ovnsandbox.Sandbox, context.Context) {
	t.Helper()
	testenv.NeedRelease(t, r)
	sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{NoNorthd: true, Release: r})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return sb, ctx
}
