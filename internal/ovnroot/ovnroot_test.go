package ovnroot

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aclc/aclc/release"
)

func TestInstalledVersion(t *testing.T) {
	status := []byte(`Package: ovn-common
Status: install ok installed
Version: 26.03.1-1

Package: ovn-central
Status: deinstall ok config-files
Version: 26.03.0-1

Package: ovn-host
Status: install ok installed
Architecture: amd64
Version: 26.03.1-1
`)
	if got := InstalledVersion(status, "ovn-host"); got != "26.03.1-1" {
		t.Errorf("ovn-host = %q", got)
	}
	if got := InstalledVersion(status, "ovn-central"); got != "" {
		t.Errorf("ovn-central (config-files only) = %q, want not installed", got)
	}
	if got := InstalledVersion(status, "ovn"); got != "" {
		t.Errorf("ovn = %q", got)
	}
}

func TestCheckVersionMismatch(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("ACLC_OVN_ROOTS", cache)
	r := release.MustLookup("26.03.1")
	root := Dir(r)
	if root != filepath.Join(cache, "ovn-root-sid") {
		t.Fatalf("Dir = %s", root)
	}
	if err := Check(r); err == nil || !strings.Contains(err.Error(), "ovn-release-root.sh sid 26.03.1-1") {
		t.Fatalf("missing root: %v", err)
	}
	for _, f := range []string{"usr/bin/ovn-northd", "usr/sbin/ovsdb-server"} {
		os.MkdirAll(filepath.Join(root, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(root, f), nil, 0o755)
	}
	os.MkdirAll(filepath.Join(root, "var/lib/dpkg"), 0o755)
	st := "Package: ovn-central\nStatus: install ok installed\nVersion: 26.03.2-1\n\nPackage: ovn-host\nStatus: install ok installed\nVersion: 26.03.2-1\n"
	os.WriteFile(filepath.Join(root, "var/lib/dpkg/status"), []byte(st), 0o644)
	err := Check(r)
	if err == nil || !strings.Contains(err.Error(), "26.03.2-1") || !strings.Contains(err.Error(), "26.03.1-1") {
		t.Fatalf("version mismatch: %v", err)
	}
	os.WriteFile(filepath.Join(root, "var/lib/dpkg/status"), []byte(strings.ReplaceAll(st, "26.03.2-1", "26.03.1-1")), 0o644)
	if err := Check(r); err != nil {
		t.Fatal(err)
	}
}
