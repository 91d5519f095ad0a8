// Package testenv decides whether an integration test may skip.
//
// Integration tests need real binaries (ovsdb-server, ovn-northd, ovn-trace,
// conntrack) and root for network namespaces. On a developer machine that
// lacks them a test skips; in CI (CI=true) or with ACLC_REQUIRE_INTEGRATION=1
// a missing prerequisite is a failure, never a skip.
package testenv

import (
	"os"
	"os/exec"
	"testing"

	"github.com/aclc/aclc/internal/ovnroot"
	"github.com/aclc/aclc/release"
)

// Required reports whether integration prerequisites must be present.
func Required() bool {
	return os.Getenv("CI") == "true" || os.Getenv("ACLC_REQUIRE_INTEGRATION") == "1"
}

// Unavailable skips t, or fails it when integration tests are required.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if Required() {
		t.Fatalf("integration prerequisite missing (CI must not skip): "+format, args...)
	}
	t.Skipf(format, args...)
}

// NeedBinaries skips or fails t unless every named binary is on PATH.
func NeedBinaries(t testing.TB, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			Unavailable(t, "%s not found on PATH (apt-get install -y ovn-central ovn-host openvswitch-switch conntrack)", n)
		}
	}
}

// NeedRoot skips or fails t unless the process runs as root.
func NeedRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Unavailable(t, "needs root (network namespaces, conntrack)")
	}
}

// NeedRelease skips or fails t unless OVN release r can run here: the
// host's packages for the host release, else its Debian root made by
// scripts/ovn-release-root.sh, each at the exact package version its
// goldens were made with. In CI a missing root is a failure.
func NeedRelease(t testing.TB, r *release.Release) {
	t.Helper()
	if err := ovnroot.Check(r); err != nil {
		Unavailable(t, "%v", err)
	}
	if !r.Host {
		NeedRoot(t)
	}
}
