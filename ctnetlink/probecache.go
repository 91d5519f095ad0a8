package ctnetlink

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// cacheFile is the name of the probe cache inside the cache directory.
const cacheFile = "ctnetlink-probe.json"

// rootCacheDir is where root's probe result lives; Detect also reads it
// for other users (the file is trusted when root owns it).
const rootCacheDir = "/run/aclc"

// DefaultCacheDir is /run/aclc for root, $XDG_RUNTIME_DIR/aclc for other
// users, or "" (no cache) when neither applies. Both are cleared at boot,
// and the boot ID in the file guards against stale copies anyway.
func DefaultCacheDir() string {
	if os.Geteuid() == 0 {
		return rootCacheDir
	}
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		return filepath.Join(d, "aclc")
	}
	return ""
}

// CachePath returns the cache file used for dir ("" = DefaultCacheDir).
func CachePath(dir string) string {
	if dir == "" {
		dir = DefaultCacheDir()
	}
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, cacheFile)
}

// readCache returns the cached Support if the file is trustworthy (owned
// by us or root, not writable by group or others: a forged "supported"
// would turn zone flushes into full flushes) and was written in this boot
// of this kernel.
func readCache(dir, release, bootID string) (Support, bool) {
	path := filepath.Join(dir, cacheFile)
	f, err := os.Open(path)
	if err != nil {
		return Support{}, false
	}
	defer f.Close()
	if trusted(f) != nil {
		return Support{}, false
	}
	var s Support
	if err := json.NewDecoder(f).Decode(&s); err != nil {
		return Support{}, false
	}
	if s.KernelRelease != release || s.BootID != bootID {
		return Support{}, false
	}
	s.Source = "cache " + path
	return s, true
}

// trusted checks owner and mode of an open cache file.
func trusted(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return errors.New("no ownership information")
	}
	if st.Uid != 0 && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s owned by uid %d", f.Name(), st.Uid)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is group or world writable", f.Name())
	}
	return nil
}

// writeCache stores s atomically (write to a temporary file, rename).
func writeCache(dir string, s Support) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	s.Source = "probe"
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, cacheFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, cacheFile))
}
