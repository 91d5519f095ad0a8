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
