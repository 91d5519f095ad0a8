package ctnetlink

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestProbeCache checks that a cached probe result is used only for the
// same kernel and boot, and only from a file nobody else could have
// written.
func TestProbeCache(t *testing.T) {
	want := Support{ZoneFlush: true, ZoneDump: true, KernelRelease: "6.8.0", BootID: "boot-a", Detail: "probed"}
	tests := []struct {
		name          string
		release, boot string
		mode          os.FileMode
		ok            bool
	}{
		{name: "same boot", release: "6.8.0", boot: "boot-a", mode: 0o644, ok: true},
		{name: "other boot", release: "6.8.0", boot: "boot-b", mode: 0o644},
		{name: "other kernel", release: "6.7.0", boot: "boot-a", mode: 0o644},
		{name: "group writable", release: "6.8.0", boot: "boot-a", mode: 0o664},
		{name: "world writable", release: "6.8.0", boot: "boot-a", mode: 0o646},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := writeCache(dir, want); err != nil {
				t.Fatalf("writeCache: %v", err)
			}
			if err := os.Chmod(filepath.Join(dir, cacheFile), tt.mode); err != nil {
				t.Fatal(err)
			}
			got, ok := readCache(dir, tt.release, tt.boot)
			if ok != tt.ok {
				t.Fatalf("readCache ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			w := want
			w.Source = "cache " + filepath.Join(dir, cacheFile)
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("cached support (-want +got):\n%s", diff)
			}
		})
	}
	if _, ok := readCache(t.TempDir(), "6.8.0", "boot-a"); ok {
		t.Error("readCache of an empty directory succeeded")
	}
}
