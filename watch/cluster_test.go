package watch_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/watch"
)

// raftNB is a 3-member clustered NB on loopback.
type raftNB struct {
	t       *testing.T
	dir     string
	members []*member
}

type member struct {
	name string
	db   string
	sock string
	ctl  string
	cmd  *exec.Cmd
	done chan struct{}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func startRaftNB(t *testing.T) *raftNB {
	t.Helper()
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovs-appctl", "ovn-nbctl")
	r := &raftNB{t: t, dir: t.TempDir()}
	var first string
	for i := range 3 {
		m := &member{name: fmt.Sprintf("nb%d", i+1)}
		m.db = filepath.Join(r.dir, m.name+".db")
		m.sock = filepath.Join(r.dir, m.name+".sock")
		m.ctl = filepath.Join(r.dir, m.name+".ctl")
		local := fmt.Sprintf("tcp:127.0.0.1:%d", freePort(t))
		var args []string
		if i == 0 {
			args = []string{"create-cluster", m.db, ovnsandbox.NBSchema, local}
			first = local
		} else {
			args = []string{"join-cluster", m.db, "OVN_Northbound", local, first}
		}
		if out, err := exec.Command("ovsdb-tool", args...).CombinedOutput(); err != nil {
			t.Fatalf("ovsdb-tool %v: %v: %s", args, err, out)
		}
		r.members = append(r.members, m)
	}
	for _, m := range r.members {
		r.start(m)
	}
	t.Cleanup(func() {
		for _, m := range r.members {
			r.kill(m)
		}
	})
	for _, m := range r.members {
		r.waitSocket(m)
	}
	r.waitLeader(30 * time.Second)
	return r
}

func (r *raftNB) start(m *member) {
	r.t.Helper()
	m.cmd = exec.Command("ovsdb-server", "--no-chdir", "--remote=punix:"+m.sock, "--unixctl="+m.ctl,
		"--log-file="+filepath.Join(r.dir, m.name+".log"), m.db)
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	m.done = make(chan struct{})
	go func(c *exec.Cmd, done chan struct{}) { c.Wait(); close(done) }(m.cmd, m.done)
}

func (r *raftNB) kill(m *member) {
	if m.cmd == nil {
		return
	}
	m.cmd.Process.Signal(syscall.SIGKILL)
	<-m.done
	m.cmd = nil
	os.Remove(m.sock)
	os.Remove(m.ctl)
}

func (r *raftNB) waitSocket(m *member) {
	r.t.Helper()
	for i := 0; ; i++ {
		if _, err := os.Stat(m.sock); err == nil {
			return
		}
		if i > 1000 {
			r.t.Fatalf("%s: socket did not appear", m.name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *raftNB) remotes() string {
	var out []string
	for _, m := range r.members {
		out = append(out, "unix:"+m.sock)
	}
	return strings.Join(out, ",")
}

// leader returns the member that says it is the leader, or nil.
func (r *raftNB) leader() *member {
	for _, m := range r.members {
		if m.cmd == nil {
			continue
		}
		out, err := exec.Command("ovs-appctl", "-t", m.ctl, "--timeout=2", "cluster/status", "OVN_Northbound").CombinedOutput()
		if err == nil && strings.Contains(string(out), "Role: leader") {
			return m
		}
	}
	return nil
}

func (r *raftNB) waitLeader(d time.Duration) *member {
	r.t.Helper()
	deadline := time.Now().Add(d)
	for {
		if m := r.leader(); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no leader after %v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// nbctl runs ovn-nbctl against the cluster (it finds the leader itself).
func (r *raftNB) nbctl(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "ovn-nbctl", append([]string{"--db=" + r.remotes(), "--timeout=10"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ovn-nbctl %v: %w: %s", args, err, out)
	}
	return string(out), nil
}

// TestWatchRaftClusterLeaderKills runs the watcher against a 3-member Raft
// NB while a writer streams changes in and the leader is killed (and
// brought back) repeatedly. After each round the watch snapshot must
// converge to exactly what `aclc compile --nb` prints for the cluster, and
// every change the writer committed must be in it.
func TestWatchRaftClusterLeaderKills(t *testing.T) {
	r := startRaftNB(t)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	if _, err := r.nbctl(ctx, "ls-add", "base", "--", "lsp-add", "base", "bp"); err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, r.remotes(), watch.Config{})

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
					if _, err = r.nbctl(ctx, args...); err == nil {
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
		victim := r.waitLeader(30 * time.Second)
		t.Logf("round %d: killing leader %s", round, victim.name)
		r.kill(victim)
		time.Sleep(1500 * time.Millisecond)
		r.start(victim)
		r.waitSocket(victim)
		time.Sleep(700 * time.Millisecond)
		stop.Store(true)
		wg.Wait()
		r.waitLeader(30 * time.Second)

		// Converge: the snapshot must become what compile --nb prints.
		deadline := time.Now().Add(30 * time.Second)
		for {
			want := compileLive(t, ctx, r.remotes())
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
