package watch_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/raftnb"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/watch"
)

// waitLog waits up to d for the watcher's log to hold n lines containing
// every one of parts.
func (r *running) waitLog(t *testing.T, d time.Duration, n int, parts ...string) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		got := 0
		for _, line := range strings.Split(r.logs.String(), "\n") {
			ok := true
			for _, p := range parts {
				ok = ok && strings.Contains(line, p)
			}
			if ok {
				got++
			}
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %d log lines with %q, want %d; log:\n%s", d, got, parts, n, tail(r.logs.String(), 40))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readyFile returns the ready file's content, or "" while there is none.
func (r *running) readyFile() string {
	b, err := os.ReadFile(r.ready)
	if err != nil {
		return ""
	}
	return string(b)
}

// TestWatchStartsBeforeNB starts the watcher while the NB's ovsdb-server
// is not running yet (as a service manager may start it next to the NB,
// or before it), then the NB, then kills the NB under it and brings it
// back: the watcher waits and retries (one log line per remote and
// attempt), says it is ready only once the initial NB is compiled, follows
// the changes made before and after the restart, and its snapshot equals
// the real northd's ACL-stage flows each time.
func TestWatchStartsBeforeNB(t *testing.T) {
	for _, r := range testenv.LiveReleases(t) {
		t.Run(r.Name(), func(t *testing.T) { startsBeforeNB(t, r) })
	}
}

func startsBeforeNB(t *testing.T, r *release.Release) {
	testenv.NeedRelease(t, r)
	sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{Release: r, NBDown: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	w := launchWatch(t, sb.NB, watch.Config{RetryMin: 20 * time.Millisecond, RetryMax: 100 * time.Millisecond})
	w.norm = lflow.RenumberACLIDs
	w.waitLog(t, 10*time.Second, 3, "NB not reachable; retrying", "remote="+sb.NB)
	if got := w.readyFile(); got != "" {
		t.Fatalf("ready file written before the NB is up:\n%s", got)
	}
	if _, err := os.Stat(w.snapshot); err == nil {
		t.Fatal("snapshot written before the NB is up")
	}
	if err := sb.StartNB(); err != nil {
		t.Fatal(err)
	}
	w.waitInitial(t, 30*time.Second)
	w.waitLog(t, 10*time.Second, 1, "msg=ready")
	if got := w.readyFile(); !strings.Contains(got, "endpoint "+sb.NB+"\n") || !strings.Contains(got, "release ") {
		t.Fatalf("ready file:\n%s", got)
	}
	w.waitLog(t, time.Second, 1, "NB reached", "endpoint="+sb.NB)

	nbctl := func(args ...string) {
		t.Helper()
		if _, err := sb.NBCtl(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	nbctl("ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--", "lsp-add", "sw0", "p2", "--",
		"acl-add", "sw0", "from-lport", "1000", `inport == "p1" && ip4`, "allow-related")
	nbctl("pg-add", "pg1", "p1", "p2", "--", "acl-add", "pg1", "to-lport", "1001", "outport == @pg1 && tcp", "allow-stateless")
	w.waitSnapshot(t, "northd "+r.Name()+" before the NB restart", northdFlows(t, ctx, sb), 10*time.Second)

	sb.StopNB()
	w.waitLog(t, 10*time.Second, 1, "NB connection lost; reconnecting")
	time.Sleep(300 * time.Millisecond)
	if err := sb.StartNB(); err != nil {
		t.Fatal(err)
	}
	w.waitLog(t, 60*time.Second, 1, "NB reconnected", "endpoint="+sb.NB)
	nbctl("acl-del", "sw0")
	nbctl("ls-add", "sw1", "--", "lsp-add", "sw1", "p3", "--", "acl-add", "sw1", "to-lport", "900", "ip6", "drop")
	w.waitSnapshot(t, "northd "+r.Name()+" after the NB restart", northdFlows(t, ctx, sb), 10*time.Second)
	if strings.Contains(w.logs.String(), `endpoint=""`) {
		t.Fatalf("a log line names an empty endpoint:\n%s", w.logs.String())
	}
}

// TestWatchConnectTimeout: with ConnectTimeout (--timeout) the watcher
// gives up at start once it passes, with an error naming the remote; and a
// remote that serves another database is an error at once, not retried.
func TestWatchConnectTimeout(t *testing.T) {
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server")
	sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{NoNorthd: true, NBDown: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Stop)
	start := time.Now()
	err = watch.Run(context.Background(), watch.Config{ConnectTimeout: 700 * time.Millisecond, RetryMin: 50 * time.Millisecond,
		NB: nbConnectOptions(sb.NB)})
	took := time.Since(start)
	if err == nil || !strings.Contains(err.Error(), "NB not reached within 700ms (--timeout)") || !strings.Contains(err.Error(), sb.NB) {
		t.Fatalf("err = %v", err)
	}
	if took < 500*time.Millisecond || took > 3*time.Second {
		t.Fatalf("gave up after %v, want about 700ms", took)
	}

	start = time.Now()
	err = watch.Run(context.Background(), watch.Config{NB: nbConnectOptions(sb.SB)})
	if err == nil || !strings.Contains(err.Error(), "has no OVN_Northbound database") || time.Since(start) > 3*time.Second {
		t.Fatalf("watch on the SB: err = %v after %v, want at once: no OVN_Northbound database", err, time.Since(start))
	}

	// Stopped while it waits: no error.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := watch.Run(ctx, watch.Config{NB: nbConnectOptions(sb.NB)}); err != nil {
		t.Fatalf("stopped while waiting for the NB: %v", err)
	}
}

// TestWatchRaftClusterBoots starts the watcher on a 3-member clustered NB
// whose members are all down — a cluster booting — and brings them up one
// by one: one member alone has no leader to elect, so the watcher waits
// (leader-only, as ovn-northd) until the second is up, then compiles the
// NB and follows it.
func TestWatchRaftClusterBoots(t *testing.T) {
	rel := release.MustLookup("23.03.1")
	c := raftnb.StartRelease(t, rel)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.Nbctl(ctx, "ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--",
		"acl-add", "sw0", "from-lport", "1000", "ip4", "allow-related"); err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Members {
		c.Kill(m)
	}
	w := launchWatch(t, c.Remotes(), watch.Config{RetryMin: 50 * time.Millisecond, RetryMax: 500 * time.Millisecond})
	w.waitLog(t, 10*time.Second, 3, "NB not reachable; retrying", "remote="+c.Members[2].Remote)

	c.Start(c.Members[0])
	c.WaitSocket(c.Members[0])
	// One member of three: no majority, no leader. The watcher must not
	// take its data (it may be stale) and says why it waits.
	w.waitLog(t, 30*time.Second, 1, "NB not reachable; retrying", "remote="+c.Members[0].Remote, "not connected to its cluster")
	if w.readyFile() != "" {
		t.Fatalf("ready with one member of three up:\n%s", w.logs.String())
	}
	c.Start(c.Members[1])
	c.WaitSocket(c.Members[1])
	w.waitInitial(t, 60*time.Second)
	w.waitLog(t, 10*time.Second, 1, "msg=ready")
	c.Start(c.Members[2])
	c.WaitSocket(c.Members[2])
	if _, err := c.Nbctl(ctx, "acl-add", "sw0", "to-lport", "1001", "tcp", "allow-stateless"); err != nil {
		t.Fatal(err)
	}
	want := mustParse(t, compileLive(t, ctx, c.Remotes()))
	w.waitSnapshot(t, "aclc compile --nb of the cluster", want, 10*time.Second)
	if !strings.Contains(textOf(t, want), "tcp") {
		t.Fatalf("the change after the boot is not in the flows:\n%s", textOf(t, want))
	}
}

// nbConnectOptions are the NB options of a watcher in these tests.
func nbConnectOptions(remote string) nbschema.Options {
	return nbschema.Options{Remotes: remote, Timeout: 2 * time.Second}
}

// portZones gives port "pN" zone N.
type portZones struct{}

func (portZones) Zone(port string) (uint16, bool) {
	var n uint16
	if _, err := fmt.Sscanf(port, "p%d", &n); err != nil {
		return 0, false
	}
	return n, true
}

// TestWatchStopMidBurst stops the watcher (what SIGTERM does to aclc
// watch: TestWatchCLI) in the middle of a burst of NB changes: Run returns
// nil, the snapshot is whole and equals the flows its delta lines add up
// to, every zone flush of the batches it emitted is done (the flusher is
// slow, so some are still queued when it is told to stop), and a watcher
// started afterwards has exactly northd's flows: nothing missing, nothing
// extra.
func TestWatchStopMidBurst(t *testing.T) {
	r := release.MustLookup("23.03.1")
	testenv.NeedRelease(t, r)
	sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{Release: r})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const n = 40
	var setup []string
	for i := 1; i <= n; i++ {
		setup = append(setup, "--", "lsp-add", "sw0", fmt.Sprintf("p%d", i))
	}
	if _, err := sb.NBCtl(ctx, append([]string{"ls-add", "sw0", "--", "acl-add", "sw0", "to-lport", "1000", "ip4", "allow-related"}, setup...)...); err != nil {
		t.Fatal(err)
	}
	fl := &flakyFlusher{delay: 50 * time.Millisecond, tries: map[uint16]int{}, ok: map[uint16]int{}}
	var mu sync.Mutex
	var deleted []string
	w := startWatch(t, sb.NB, watch.Config{Zones: portZones{}, Flusher: fl, OnBatch: func(b *watch.Batch) {
		mu.Lock()
		defer mu.Unlock()
		deleted = append(deleted, b.Delta.DeletedPorts...)
	}})

	// The burst: one port deleted and one ACL added per transaction.
	burst := make(chan error, 1)
	committed := make(chan int, n)
	go func() {
		for i := 1; i <= n; i++ {
			if _, err := sb.NBCtl(ctx, "lsp-del", fmt.Sprintf("p%d", i), "--",
				"acl-add", "sw0", "from-lport", fmt.Sprint(2000+i), fmt.Sprintf("udp.dst == %d", i), "allow-related"); err != nil {
				burst <- err
				return
			}
			committed <- i
		}
		burst <- nil
	}()
	for i := 0; i < n/3; i++ {
		<-committed
	}
	w.cancel()
	select {
	case err := <-w.done:
		w.done <- err // for the cleanup
		if err != nil {
			t.Fatalf("Run after stop: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the watcher did not stop")
	}
	if err := <-burst; err != nil {
		t.Fatal(err)
	}
	final, _ := w.readSnapshot(t)
	lay, _ := lflow.LayoutFor(r.Series())
	replayed, lines := replayDeltas(t, lay, w.deltas.String())
	if textOf(t, replayed) != textOf(t, final) {
		t.Fatalf("the snapshot left behind is not what the %d delta lines add up to", lines)
	}
	mu.Lock()
	fl.mu.Lock()
	for _, p := range deleted {
		z, _ := portZones{}.Zone(p)
		if fl.ok[z] == 0 {
			t.Errorf("port %s deleted in an emitted batch, its zone %d not flushed before Run returned", p, z)
		}
	}
	t.Logf("stopped after %d delta lines, %d ports deleted in them, %d zones flushed", lines, len(deleted), len(fl.ok))
	fl.mu.Unlock()
	mu.Unlock()
	if w.readyFile() != "" {
		t.Fatal("ready file left behind after the watcher stopped")
	}

	again := startWatch(t, sb.NB, watch.Config{})
	again.norm = lflow.RenumberACLIDs
	again.waitSnapshot(t, "northd after the burst", northdFlows(t, ctx, sb), 10*time.Second)
}
