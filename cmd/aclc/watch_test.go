package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
)

// TestWatchCLI runs the aclc binary's watch command on a live NB with a
// zones file and the dry-run flush backend: the snapshot follows the NB
// (byte for byte what compile --nb prints), a delta line comes per batch,
// the flush policy logs what it would flush, and SIGTERM stops it cleanly.
func TestWatchCLI(t *testing.T) {
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovn-nbctl")
	sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{NoNorthd: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := sb.NBCtl(ctx, "ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--",
		"acl-add", "sw0", "to-lport", "1000", "ip4", "allow-related"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	snapshot := filepath.Join(dir, "flows.txt")
	ready := filepath.Join(dir, "ready")
	zones := writeFile(t, "zones.yaml", "p1: 7\n")
	cmd := exec.CommandContext(ctx, aclcBin, "watch", "--nb", sb.NB, "--snapshot", snapshot, "--deltas", "-",
		"--zones", zones, "--flush-backend", "dry-run", "--ready-file", ready)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: timed out; stderr:\n%s", what, errb.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	sameAsCompile := func() bool {
		got, err := os.ReadFile(snapshot)
		if err != nil {
			return false
		}
		r := aclc(t, "", "compile", "--nb", sb.NB)
		return r.code == 0 && string(got) == r.stdout
	}
	waitFor("initial snapshot", sameAsCompile)
	waitFor("ready file", func() bool {
		b, err := os.ReadFile(ready)
		return err == nil && strings.Contains(string(b), "endpoint "+sb.NB+"\n")
	})
	uuid, err := sb.NBCtl(ctx, "--bare", "--columns=_uuid", "find", "ACL", "priority=1000")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sb.NBCtl(ctx, "set", "ACL", strings.TrimSpace(uuid), "action=allow-stateless"); err != nil {
		t.Fatal(err)
	}
	waitFor("snapshot after the change", func() bool { return sameAsCompile() && strings.Contains(errb.String(), "would flush") })
	if !strings.Contains(errb.String(), "zone=7") || !strings.Contains(errb.String(), "switch sw0 no longer sends traffic to conntrack") {
		t.Fatalf("dry-run flush not logged with zone and reason:\n%s", errb.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("aclc watch after SIGTERM: %v\n%s", err, errb.String())
	}
	if _, err := os.Stat(ready); !os.IsNotExist(err) {
		t.Fatalf("ready file still there after SIGTERM: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"initial":true`) || !strings.Contains(lines[1], `"op":"update"`) {
		t.Fatalf("delta lines:\n%s", out.String())
	}
}

// watchFirstSnapshot runs `aclc watch --snapshot FILE args...` until it
// has written its first snapshot (the initial NB compiled), stops it and
// returns that snapshot.
func watchFirstSnapshot(t *testing.T, ctx context.Context, args ...string) string {
	t.Helper()
	snapshot := filepath.Join(t.TempDir(), "flows.txt")
	cmd := exec.CommandContext(ctx, aclcBin, append([]string{"watch", "--snapshot", snapshot, "--flush-backend", "none"}, args...)...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if got, err := os.ReadFile(snapshot); err == nil {
			cmd.Process.Signal(syscall.SIGTERM)
			if err := cmd.Wait(); err != nil {
				t.Errorf("aclc watch %v after SIGTERM: %v\n%s", args, err, errb.String())
			}
			return string(got)
		}
		if time.Now().After(deadline) {
			t.Fatalf("aclc watch %v: no snapshot; stderr:\n%s", args, errb.String())
		}
	}
}

// TestWatchWaitsForNB: watch started before its NB exists waits (it does
// not exit), logs each attempt, gives up with --timeout after about that
// long (exit 1, naming the remote), and SIGTERM while it waits exits 0.
func TestWatchWaitsForNB(t *testing.T) {
	remote := "unix:" + filepath.Join(t.TempDir(), "nb.sock")
	start := time.Now()
	r := aclc(t, "", "watch", "--nb", remote, "--timeout", "1500ms")
	took := time.Since(start)
	if r.code != 1 || !strings.Contains(r.stderr, "NB not reached within 1.5s (--timeout)") || !strings.Contains(r.stderr, remote) ||
		strings.Count(r.stderr, "NB not reachable; retrying") < 3 {
		t.Fatalf("watch --timeout 1500ms on a missing NB: exit %d after %v, stderr:\n%s", r.code, took, r.stderr)
	}
	if took < time.Second || took > 5*time.Second {
		t.Fatalf("watch --timeout 1500ms gave up after %v", took)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, aclcBin, "watch", "--nb", remote)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	if cmd.ProcessState != nil {
		t.Fatalf("watch without --timeout exited while waiting for its NB:\n%s", errb.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("SIGTERM while waiting for the NB: %v\n%s", err, errb.String())
	}
}

// TestWatchBadFlags checks watch's usage errors (exit 2).
func TestWatchBadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"watch", "--zones", "z.yaml", "--ovs", "unix:/x"}, "either --zones or --ovs"},
		{[]string{"watch", "--flush-backend", "bogus"}, "--flush-backend"},
		{[]string{"watch", "--zones", "/nonexistent/zones.yaml"}, "zones file"},
		{[]string{"watch", "extra"}, "no arguments"},
		{[]string{"watch", "--chassis-lacks", "sample"}, `unknown chassis feature "sample"`},
		{[]string{"watch", "--timeout", "-1s"}, "--timeout: want a duration ≥ 0"},
		{[]string{"watch", "--ready-file", "/nonexistent/dir/ready"}, "--ready-file: cannot create files in /nonexistent/dir"},
	} {
		r := aclc(t, "", tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("aclc %v: exit %d, stderr %q; want exit 2 mentioning %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}
