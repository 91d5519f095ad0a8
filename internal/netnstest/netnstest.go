// Package netnstest gives tests and benchmarks throwaway network
// namespaces, so that nothing they do reaches the root namespace's
// conntrack table.
//
// It goes through internal/testenv: without root or iproute2 a test skips
// on a developer machine and fails in CI (CI=true or
// ACLC_REQUIRE_INTEGRATION=1).
package netnstest

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aclc/aclc/internal/testenv"
)

var seq atomic.Int64

// New creates a named network namespace (ip netns add) and deletes it when
// t ends, even if t fails. It returns the name; the namespace file is
// /run/netns/NAME.
func New(t testing.TB) string {
	t.Helper()
	testenv.NeedRoot(t)
	testenv.NeedBinaries(t, "ip")
	name := fmt.Sprintf("aclc-test-%d-%d", os.Getpid(), seq.Add(1))
	if out, err := exec.Command("ip", "netns", "add", name).CombinedOutput(); err != nil {
		testenv.Unavailable(t, "ip netns add %s: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() {
		if out, err := exec.Command("ip", "netns", "del", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns del %s: %v: %s", name, err, out)
		}
	})
	return name
}

// Exec runs a command inside the namespace and returns its output.
func Exec(t testing.TB, name string, args ...string) ([]byte, error) {
	t.Helper()
	return exec.Command("ip", append([]string{"netns", "exec", name}, args...)...).CombinedOutput()
}

const maxPath = "/proc/sys/net/netfilter/nf_conntrack_max"

var maxMu sync.Mutex

// RaiseConntrackMax makes sure nf_conntrack_max, the per-namespace entry
// limit, is at least n. It is only writable from the initial namespace,
// so this is the one host-wide setting tests change: the limit only, never
// the table. The old value comes back when t ends unless someone changed
// it meanwhile.
func RaiseConntrackMax(t testing.TB, n int) {
	t.Helper()
	maxMu.Lock()
	defer maxMu.Unlock()
	b, err := os.ReadFile(maxPath)
	if err != nil {
		testenv.Unavailable(t, "nf_conntrack not available: %v", err)
		return
	}
	old, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || old >= n {
		return
	}
	if err := os.WriteFile(maxPath, []byte(strconv.Itoa(n)), 0o644); err != nil {
		testenv.Unavailable(t, "raise %s to %d: %v", maxPath, n, err)
		return
	}
	t.Logf("raised nf_conntrack_max from %d to %d for this test", old, n)
	t.Cleanup(func() {
		maxMu.Lock()
		defer maxMu.Unlock()
		b, err := os.ReadFile(maxPath)
		if err == nil && strings.TrimSpace(string(b)) == strconv.Itoa(n) {
			_ = os.WriteFile(maxPath, []byte(strconv.Itoa(old)), 0o644)
		}
	})
}
