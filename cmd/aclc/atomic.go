package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// atomicWrite replaces path with data: it writes a temporary file in the
// same directory, syncs it and renames it over path.
func atomicWrite(path string, data []byte) error {
	return atomicWriteWith(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// atomicWriteWith is atomicWrite of what write writes, streamed to the
// temporary file.
func atomicWriteWith(path string, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// checkWritableDir checks, before a long-running command starts, that a
// file can be created next to path (in its directory), so that a typo in
// a path is a usage error at start rather than a log line hours later.
func checkWritableDir(path string) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".probe*")
	if err != nil {
		return fmt.Errorf("cannot create files in %s: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}
