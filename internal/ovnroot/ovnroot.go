// Package ovnroot finds the OVN packages of a release on this machine: the
// host's own for the host release (23.03.1, Debian 12), else the Debian root
// that scripts/ovn-release-root.sh made for the release's suite, and checks
// that the installed package is the exact one the release's goldens were
// made with.
package ovnroot

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aclc/aclc/release"
)

// DefaultCache is where scripts/ovn-release-root.sh keeps the roots;
// $ACLC_OVN_ROOTS overrides it (for both).
const DefaultCache = "/var/cache/aclc"

// Dir is the root holding r's OVN: "/" for the host release, else
// $ACLC_OVN_ROOTS/ovn-root-SUITE.
func Dir(r *release.Release) string {
	if r.Host {
		return "/"
	}
	cache := os.Getenv("ACLC_OVN_ROOTS")
	if cache == "" {
		cache = DefaultCache
	}
	return filepath.Join(cache, "ovn-root-"+r.Suite)
}

// Packages are the Debian packages whose version Check compares.
var Packages = []string{"ovn-central", "ovn-host"}

// Check reports why r's OVN cannot be used here, or nil: its root (or the
// host) must have ovn-northd and ovsdb-server, and each of Packages
// installed at exactly r.Package.
func Check(r *release.Release) error {
	dir := Dir(r)
	how := "apt-get install -y ovn-central ovn-host openvswitch-switch"
	if !r.Host {
		how = fmt.Sprintf("scripts/ovn-release-root.sh %s %s", r.Suite, r.Package)
	}
	for _, bin := range []string{"usr/bin/ovn-northd", "usr/sbin/ovsdb-server"} {
		if _, err := os.Stat(filepath.Join(dir, bin)); err != nil {
			return fmt.Errorf("OVN %s: %s missing (%s): %w", r.Name(), filepath.Join(dir, bin), how, err)
		}
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
		case have != r.Package:
			return fmt.Errorf("OVN %s: %s has %s %s, but the goldens of this release were made with %s: "+
				"rebuild the root with that version or regenerate the goldens (testdata/regen.sh %s) and record the new version in release/release.go",
				r.Name(), dir, pkg, have, r.Package, r.Series())
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
