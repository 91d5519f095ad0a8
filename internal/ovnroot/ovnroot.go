// Package ovnroot finds the real OVN of a version on this machine — its
// oracle: the host's own packages for 23.03.1 (Debian 12), the Debian root
// that scripts/ovn-release-root.sh made for a Debian-packaged version, or
// a root holding a build from the upstream tag — and checks that it is
// exactly the version whose goldens it must reproduce.
package ovnroot

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/aclc/aclc/release"
)

// DefaultCache is where scripts/ovn-release-root.sh keeps the roots;
// $ACLC_OVN_ROOTS overrides it (for both).
const DefaultCache = "/var/cache/aclc"

// Cache is $ACLC_OVN_ROOTS, else DefaultCache.
func Cache() string {
	if c := os.Getenv("ACLC_OVN_ROOTS"); c != "" {
		return c
	}
	return DefaultCache
}

// OnHost reports whether r's oracle is this machine's own packages (no
// chroot).
func OnHost(r *release.Release) bool { return r.Oracle != nil && r.Oracle.Host }

// Dir is the root holding r's OVN: "/" for the host's packages,
// CACHE/ovn-root-SUITE for a Debian package, CACHE/ovn-root-src-VERSION
// for a source build.
func Dir(r *release.Release) string {
	switch o := r.Oracle; {
	case o == nil:
		return ""
	case o.Host:
		return "/"
	case o.Debian():
		return filepath.Join(Cache(), "ovn-root-"+o.Suite)
	default:
		return filepath.Join(Cache(), "ovn-root-src-"+r.Name())
	}
}

// How says how to make r's oracle on this machine.
func How(r *release.Release) string {
	switch o := r.Oracle; {
	case o == nil:
		return "none: OVN " + r.Name() + " is computed from the facts of its neighbours"
	case o.Host:
		return "apt-get install -y ovn-central ovn-host openvswitch-switch"
	case o.Debian():
		return fmt.Sprintf("scripts/ovn-release-root.sh %s %s", o.Suite, o.Package)
	default:
		return fmt.Sprintf("a root at %s with OVN built from %s (ovn %s) and openvswitch/ovs %s, installed as Debian's packages install it (docs/releases.md)",
			Dir(r), o.Tag, o.Commit, o.OVSCommit)
	}
}

// Packages are the Debian packages whose version Check compares.
var Packages = []string{"ovn-central", "ovn-host"}

// Check reports why r's OVN cannot be used here, or nil: its root (or the
// host) must have ovn-northd and ovsdb-server, and be exactly r — each of
// Packages at exactly the oracle's package version, or, for a source build,
// an ovn-northd that says it is r.
func Check(r *release.Release) error {
	if r.Oracle == nil {
		return fmt.Errorf("OVN %s has no oracle: it is computed, not verified", r.Name())
	}
	dir, how := Dir(r), How(r)
	for _, bin := range []string{"usr/bin/ovn-northd", "usr/sbin/ovsdb-server"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return fmt.Errorf("OVN %s: %s missing (%s): %w", r.Name(), filepath.Join(dir, bin), how, err)
		}
	}
	if !r.Oracle.Debian() {
		out, err := exec.Command("/usr/sbin/chroot", dir, "ovn-northd", "--version").Output()
		if err != nil {
			return fmt.Errorf("OVN %s: chroot %s ovn-northd --version: %w", r.Name(), dir, err)
		}
		first, _, _ := strings.Cut(string(out), "\n")
		if want := "ovn-northd " + r.Name(); strings.TrimSpace(first) != want {
			return fmt.Errorf("OVN %s: %s holds %q, not %q (%s)", r.Name(), dir, strings.TrimSpace(first), want, how)
		}
		return nil
	}
	status, err := os.ReadFile(filepath.Join(dir, "var/lib/dpkg/status"))
	if err != nil {
		return fmt.Errorf("OVN %s: %w", r.Name(), err)
	}
	for _, pkg := range Packages {
		have := InstalledVersion(status, pkg)
		switch {
		case have == "":
			return fmt.Errorf("OVN %s: %s is not installed in %s (%s)", r.Name(), pkg, dir, how)
		case have != r.Oracle.Package:
			return fmt.Errorf("OVN %s: %s has %s %s, but the goldens of this version were made with %s: "+
				"rebuild the root with that version (%s), or add the version it has to release/registry.go and make its goldens with testdata/regen.sh",
				r.Name(), dir, pkg, have, r.Oracle.Package, how)
		}
	}
	return nil
}

// InstalledVersion returns the version of pkg in a dpkg status file when it
// is installed, else "".
func InstalledVersion(status []byte, pkg string) string {
	var name, version, state string
	flush := func() string {
		defer func() { name, version, state = "", "", "" }()
		if name == pkg && strings.HasSuffix(state, " installed") {
			return version
		}
		return ""
	}
	sc := bufio.NewScanner(bytes.NewReader(status))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if v := flush(); v != "" {
				return v
			}
			continue
		}
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch k {
		case "Package":
			name = v
		case "Version":
			version = v
		case "Status":
			state = v
		}
	}
	return flush()
}

// HostRelease is the version whose oracle is this machine's own packages
// (23.03.1, Debian 12's), which tests run when they need a northd and do
// not care which.
func HostRelease() *release.Release {
	for _, r := range release.All() {
		if OnHost(r) {
			return r
		}
	}
	panic("ovnroot: no version is the host's")
}
