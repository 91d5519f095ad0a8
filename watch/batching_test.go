package watch_test

import (
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/watch"
)

// batchTables returns the tables of the rows a batch changed, sorted and
// deduplicated.
func batchTables(b *watch.Batch) []string {
	var out []string
	for _, c := range b.Delta.Changes {
		out = append(out, c.Table)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// nextBatch waits for the next non-initial batch.
func (r *running) nextBatch(t *testing.T, timeout time.Duration) *watch.Batch {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case b := <-r.batches:
			if !b.Initial {
				return b
			}
		case <-deadline:
			t.Fatalf("no batch within %v; log:\n%s", timeout, tail(r.logs.String(), 30))
		}
	}
}

// TestWatchIdleActsAtOnce: with a 1 s coalescing window, a transaction
// that finds the watcher idle is processed at once (far below the
// window), as one batch holding every row the transaction changed.
func TestWatchIdleActsAtOnce(t *testing.T) {
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovn-nbctl")
	sb, ctx := startNB(t)
	w := startWatch(t, sb.NB, watch.Config{Debounce: time.Second})
	var lat []time.Duration
	for i := range 8 {
		sw, p, pg := fmt.Sprintf("sw%d", i), fmt.Sprintf("p%d", i), fmt.Sprintf("pg%d", i)
		if _, err := sb.NBCtl(ctx, "ls-add", sw, "--", "lsp-add", sw, p, "--", "pg-add", pg, p,
			"--", "acl-add", pg, "to-lport", "1000", "outport == @"+pg+" && ip4", "allow-related"); err != nil {
			t.Fatal(err)
		}
		b := w.nextBatch(t, 5*time.Second)
		want := []string{"ACL", "Logical_Switch", "Logical_Switch_Port", "Port_Group"}
		// ovn-nbctl also touches NB_Global in its transaction.
		if got := slices.DeleteFunc(batchTables(b), func(s string) bool { return s == "NB_Global" }); !slices.Equal(got, want) {
			t.Fatalf("transaction %d split: batch %d has rows of %v, want all of %v", i, b.Seq, got, want)
		}
		if b.Delta.NumAdded() == 0 {
			t.Fatalf("transaction %d: batch %d adds no flow", i, b.Seq)
		}
		// Idle: no coalescing window. 200 ms leaves room for a loaded
		// machine and is 5× below the window.
		if b.Latency >= 200*time.Millisecond {
			t.Fatalf("transaction %d: first row event → delta took %v with the watcher idle (window %v)", i, b.Latency, time.Second)
		}
		lat = append(lat, b.Latency)
		// Leave the watcher idle again (past the window) before the next.
		time.Sleep(1100 * time.Millisecond)
	}
	slices.Sort(lat)
	t.Logf("idle batch latency: median %v, max %v", lat[len(lat)/2], lat[len(lat)-1])
	w.waitSnapshot(t, "aclc compile --nb", mustParse(t, compileLive(t, ctx, sb.NB)), 2*time.Second)
}

// TestWatchBurstCoalesces: transactions that follow each other closely
// (within the coalescing window of the batch before) are gathered into
// few batches, and the flows still end exactly as compile --nb says.
func TestWatchBurstCoalesces(t *testing.T) {
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovn-nbctl")
	sb, ctx := startNB(t)
	if _, err := sb.NBCtl(ctx, "ls-add", "sw0", "--", "lsp-add", "sw0", "p0"); err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, sb.NB, watch.Config{Debounce: 300 * time.Millisecond})
	const n = 30
	for i := range n {
		if _, err := sb.NBCtl(ctx, "acl-add", "sw0", "from-lport", fmt.Sprint(1000+i), fmt.Sprintf("ip4 && udp.dst == %d", i),
			[]string{"allow-related", "drop", "allow-stateless"}[i%3]); err != nil {
			t.Fatal(err)
		}
	}
	w.waitSnapshot(t, "aclc compile --nb", mustParse(t, compileLive(t, ctx, sb.NB)), 10*time.Second)
	time.Sleep(500 * time.Millisecond)
	var batches int
	for len(w.batches) > 0 {
		if b := <-w.batches; !b.Initial {
			batches++
		}
	}
	// The first transaction finds the watcher idle and goes alone; the
	// others arrive a few ms apart, well within the 300 ms window.
	if batches < 2 || batches > n/5 {
		t.Fatalf("%d transactions in %d batches, want 2..%d", n, batches, n/5)
	}
	t.Logf("%d transactions in %d batches", n, batches)
}
