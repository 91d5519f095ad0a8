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
	"strings"
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
// goldens were made with, or its source-built root. In CI a missing root
// is a failure — unless scripts/test.sh found the version's Debian suite
// no longer carries it (GoldensOnlyEnv), which skips naming the reason.
func NeedRelease(t testing.TB, r *release.Release) {
	t.Helper()
	if why, gone := goldensOnly()[r.Name()]; gone {
		// scripts/test.sh found the version's Debian suite moved on: no
		// oracle exists here, and TestGolden checks it against its
		// goldens. Named, never silent.
		t.Skipf("OVN %s: its real northd cannot run here (%s); checked against its committed goldens only", r, why)
	}
	if err := ovnroot.Check(r); err != nil {
		Unavailable(t, "%v", err)
	}
	if !ovnroot.OnHost(r) {
		NeedRoot(t)
	}
}

// GoldensOnlyEnv lists the Debian-packaged versions that scripts/test.sh
// found its Debian archive no longer carries ("26.03.1: sid has
// 26.09.0-1", one per line): on such a machine they are checked against
// their goldens only, as source-built versions are.
const GoldensOnlyEnv = "ACLC_GOLDENS_ONLY"

// goldensOnly returns the versions GoldensOnlyEnv names, with the reason.
func goldensOnly() map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(os.Getenv(GoldensOnlyEnv), "\n") {
		if v, why, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[strings.TrimSpace(v)] = strings.TrimSpace(why)
		}
	}
	return out
}

// LiveReleases returns the verified versions whose real OVN runs here, for
// the live differential tests: every Debian-packaged version (in CI a
// missing root fails t, unless scripts/test.sh found its archive no longer
// carries it: GoldensOnlyEnv), and each source-built version whose root
// is present (developer machines; CI has no source host, so these are
// checked against their goldens by TestGolden instead).
func LiveReleases(t testing.TB) []*release.Release {
	t.Helper()
	gone := goldensOnly()
	var out []*release.Release
	for _, r := range release.All() {
		if _, ok := gone[r.Name()]; ok {
			continue
		}
		if !r.Oracle.Debian() {
			if ovnroot.Check(r) == nil && os.Geteuid() == 0 {
				out = append(out, r)
			}
			continue
		}
		out = append(out, r)
	}
	return out
}
