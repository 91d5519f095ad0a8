package watch_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/raftnb"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/watch"
)

// TestWatchRaftClusterLeaderKills runs the watcher against a 3-member Raft
// NB while a writer streams changes in and the leader is killed (and
// brought back) repeatedly. After each round the watch snapshot must
// converge to exactly what `aclc compile --nb` prints for the cluster, and
// every change the writer committed must be in it. It runs on the
// ovsdb-server (and with the ovn-nbctl) of 23.03.1 and of 26.03.1, whose
// NB the watcher then compiles for 26.03.
func TestWatchRaftClusterLeaderKills(t *testing.T) {
	for _, rel := range []*release.Release{release.MustLookup("23.03.1"), release.MustLookup("26.03.1")} {
		t.Run(rel.Name(), func(t *testing.T) { raftLeaderKills(t, rel) })
	}
}

func raftLeaderKills(t *testing.T, rel *release.Release) {
	r := raftnb.StartRelease(t, rel)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	if _, err := r.Nbctl(ctx, "ls-add", "base", "--", "lsp-add", "base", "bp"); err != nil {
		t.Fatal(err)
	}
	// The cluster serves the release's own NB schema: what the watcher
	// compiles for is detected from it.
	if snap, err := nbschema.LoadLive(ctx, nbschema.Options{Remotes: r.Remotes(), Timeout: 10 * time.Second}); err != nil {
		t.Fatal(err)
	} else if want := release.MustLookup(rel.Series()); snap.Release != want {
		// no northd runs: the series' newest verified version
		t.Fatalf("the cluster's NB is detected as OVN %v, want %s", snap.Release, want)
	}
	w := startWatch(t, r.Remotes(), watch.Config{})

	var committed []string // switches whose change committed
	n := 0
	const rounds = 4
	for round := range rounds {
		var stop atomic.Bool
		var wg sync.WaitGroup
		var mu sync.Mutex
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() && ctx.Err() == nil {
				mu.Lock()
				i := n
				n++
				mu.Unlock()
				sw := fmt.Sprintf("c%d", i)
				args := []string{"--may-exist", "ls-add", sw, "--", "--may-exist", "lsp-add", sw, sw + "-p",
					"--", "acl-add", sw, "from-lport", fmt.Sprint(1000 + i%100), "ip4", []string{"allow-related", "allow-stateless", "drop"}[i%3]}
				if i%4 == 3 {
					args = append(args, "--", "--may-exist", "pg-add", "pg"+sw, sw+"-p", "--", "acl-add", "pg"+sw, "to-lport", "1", "tcp", "allow-related")
				}
				var err error
				for try := 0; try < 5; try++ {
					if _, err = r.Nbctl(ctx, args...); err == nil {
						break
					}
					time.Sleep(200 * time.Millisecond)
				}
				if err == nil {
					mu.Lock()
					committed = append(committed, sw)
					mu.Unlock()
				}
			}
		}()
		time.Sleep(700 * time.Millisecond)
		victim := r.WaitLeader(30 * time.Second)
		t.Logf("round %d: killing leader %s", round, victim.Name)
		r.Kill(victim)
		time.Sleep(1500 * time.Millisecond)
		r.Start(victim)
		r.WaitSocket(victim)
		time.Sleep(700 * time.Millisecond)
		stop.Store(true)
		wg.Wait()
		r.WaitLeader(30 * time.Second)

		// Converge: the snapshot must become what compile --nb prints.
		deadline := time.Now().Add(30 * time.Second)
		for {
			want := compileLive(t, ctx, r.Remotes())
			_, got := w.readSnapshot(t)
			if string(got) == string(want) {
				break
			}
			if time.Now().After(deadline) {
				w.waitSnapshot(t, "aclc compile --nb (cluster)", mustParse(t, want), time.Second)
				t.Fatalf("round %d: snapshot differs from compile --nb", round)
			}
			time.Sleep(100 * time.Millisecond)
		}
		final, _ := w.readSnapshot(t)
		names := map[string]bool{}
		for _, dp := range final.Datapaths {
			names[dp.Name] = true
		}
		mu.Lock()
		for _, sw := range committed {
			if !names[sw] {
				t.Fatalf("round %d: committed change for %s is not in the watch snapshot", round, sw)
			}
		}
		t.Logf("round %d: converged, %d changes committed so far, %d flows", round, len(committed), final.NumFlows())
		mu.Unlock()
	}
	if len(committed) < 10 {
		t.Fatalf("only %d changes committed", len(committed))
	}
	// The watcher starts on the first remote, nb1, the member that
	// created the cluster and its first leader: it must have lived
	// through at least one reconnect to another member.
	reconnects := strings.Count(w.logs.String(), "NB reconnected")
	t.Logf("watcher reconnects: %d, resync batches: %d", reconnects, strings.Count(w.logs.String(), "resync=true"))
	if reconnects == 0 {
		t.Fatalf("the watcher never reconnected; log:\n%s", w.logs.String())
	}
}
