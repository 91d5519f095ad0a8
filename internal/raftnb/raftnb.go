// Package raftnb runs a 3-member clustered (Raft) OVN NB on loopback for
// tests: ovsdb-tool create-cluster and join-cluster, one ovsdb-server per
// member on a unix socket, and the calls a test needs to find, kill and
// restart the leader. The host release uses the host's binaries; another
// release runs its own ovsdb-server, ovsdb-tool, ovs-appctl, ovsdb-client
// and ovn-nbctl inside its Debian root (internal/ovnroot), with the run
// directory under the root so that the host reaches the sockets.
package raftnb

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnroot"
	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/release"
)

// Cluster is a running 3-member NB cluster.
type Cluster struct {
	t   *testing.T
	dir string
	// root is "" for the host release, else the release's root; inner
	// is dir as the processes in the root see it.
	root, inner string
	Members     []*Member
}

// Member is one ovsdb-server of the cluster.
type Member struct {
	Name string
	db   string
	// Sock is the member's unix socket; Remote is "unix:" + Sock.
	Sock, Remote string
	ctl          string
	cmd          *exec.Cmd
	done         chan struct{}
}

// Running reports whether the member's server is running.
func (m *Member) Running() bool { return m.cmd != nil }

// Start creates and starts a cluster of the host release (23.03.1) and
// waits for a leader; the servers are killed when the test ends. It needs
// ovsdb-tool, ovsdb-server, ovs-appctl and ovn-nbctl (missing: skip, or
// fail in CI).
func Start(t *testing.T) *Cluster { return StartRelease(t, ovnroot.HostRelease()) }

// StartRelease is Start with the ovsdb-server (and tools) of release r.
func StartRelease(t *testing.T, r *release.Release) *Cluster {
	t.Helper()
	c := &Cluster{t: t}
	if ovnroot.OnHost(r) {
		testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovsdb-client", "ovs-appctl", "ovn-nbctl")
		c.dir = t.TempDir()
		c.inner = c.dir
	} else {
		testenv.NeedRelease(t, r)
		c.root = ovnroot.Dir(r)
		d, err := os.MkdirTemp(filepath.Join(c.root, "tmp"), "aclc-raft-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		c.dir, c.inner = d, "/"+strings.TrimPrefix(d, c.root+"/")
	}
	var first string
	for i := range 3 {
		m := &Member{Name: fmt.Sprintf("nb%d", i+1)}
		m.db = filepath.Join(c.dir, m.Name+".db")
		m.Sock = filepath.Join(c.dir, m.Name+".sock")
		m.Remote = "unix:" + m.Sock
		m.ctl = filepath.Join(c.dir, m.Name+".ctl")
		local := fmt.Sprintf("tcp:127.0.0.1:%d", testenv.FreePort(t))
		var args []string
		if i == 0 {
			args = []string{"create-cluster", m.db, ovnsandbox.NBSchema, local}
			first = local
		} else {
			args = []string{"join-cluster", m.db, "OVN_Northbound", local, first}
		}
		if out, err := c.command("ovsdb-tool", args...).CombinedOutput(); err != nil {
			t.Fatalf("ovsdb-tool %v: %v: %s", args, err, out)
		}
		c.Members = append(c.Members, m)
	}
	for _, m := range c.Members {
		c.Start(m)
	}
	t.Cleanup(func() {
		for _, m := range c.Members {
			c.Kill(m)
		}
	})
	for _, m := range c.Members {
		c.WaitSocket(m)
	}
	c.WaitLeader(30 * time.Second)
	// A member that just joined reports itself not connected until it
	// has caught up with the leader.
	for _, m := range c.Members {
		deadline := time.Now().Add(30 * time.Second)
		for !c.Connected(m) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not connected to the cluster after 30s", m.Name)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return c
}

// Connected reports whether m's server says (in its _Server database) that
// it is connected to the cluster.
func (c *Cluster) Connected(m *Member) bool {
	out, err := c.command("ovsdb-client", "--timeout=2", "transact", m.Remote,
		`["_Server",{"op":"select","table":"Database","where":[["name","==","OVN_Northbound"]],"columns":["connected"]}]`).CombinedOutput()
	return err == nil && strings.Contains(string(out), `"connected":true`)
}

// Start starts (or restarts) m's server.
func (c *Cluster) Start(m *Member) {
	c.t.Helper()
	m.cmd = c.command("ovsdb-server", "--no-chdir", "--remote=punix:"+m.Sock, "--unixctl="+m.ctl,
		"--log-file="+filepath.Join(c.dir, m.Name+".log"), m.db)
	m.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := m.cmd.Start(); err != nil {
		c.t.Fatal(err)
	}
	m.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(m.cmd, m.done)
}

// Kill kills m's server (SIGKILL) and removes its sockets.
func (c *Cluster) Kill(m *Member) {
	if m.cmd == nil {
		return
	}
	m.cmd.Process.Signal(syscall.SIGKILL)
	<-m.done
	m.cmd = nil
	os.Remove(m.Sock)
	os.Remove(m.ctl)
}

// WaitSocket waits for m's socket to appear.
func (c *Cluster) WaitSocket(m *Member) {
	c.t.Helper()
	for i := 0; ; i++ {
		if _, err := os.Stat(m.Sock); err == nil {
			return
		}
		if i > 1000 {
			c.t.Fatalf("%s: socket did not appear", m.Name)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Remotes returns the members' remotes, comma-separated, in order.
func (c *Cluster) Remotes() string {
	var out []string
	for _, m := range c.Members {
		out = append(out, m.Remote)
	}
	return strings.Join(out, ",")
}

// Leader returns the running member that says it is the leader, or nil.
func (c *Cluster) Leader() *Member {
	for _, m := range c.Members {
		if m.cmd == nil {
			continue
		}
		out, err := c.command("ovs-appctl", "-t", m.ctl, "--timeout=2", "cluster/status", "OVN_Northbound").CombinedOutput()
		if err == nil && strings.Contains(string(out), "Role: leader") {
			return m
		}
	}
	return nil
}

// WaitLeader waits up to d for a leader and returns it.
func (c *Cluster) WaitLeader(d time.Duration) *Member {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for {
		if m := c.Leader(); m != nil {
			return m
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no leader after %v", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Nbctl runs ovn-nbctl against the cluster (it finds the leader itself).
func (c *Cluster) Nbctl(ctx context.Context, args ...string) (string, error) {
	cmd := c.commandContext(ctx, "ovn-nbctl", append([]string{"--db=" + c.Remotes(), "--timeout=10"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("ovn-nbctl %v: %w: %s", args, err, out)
	}
	return string(out), nil
}

// command prepares bin of the cluster's release: the host's, or the
// root's run chrooted into it, with paths under the run directory
// rewritten to the paths the root sees.
func (c *Cluster) command(bin string, args ...string) *exec.Cmd {
	return c.commandContext(context.Background(), bin, args...)
}

func (c *Cluster) commandContext(ctx context.Context, bin string, args ...string) *exec.Cmd {
	if c.root == "" {
		return exec.CommandContext(ctx, bin, args...)
	}
	in := []string{c.root, bin}
	for _, a := range args {
		in = append(in, strings.ReplaceAll(a, c.dir, c.inner))
	}
	return exec.CommandContext(ctx, "/usr/sbin/chroot", in...)
}
