// Package generated holds the test that the committed generated code is
// what `go generate ./...` writes: a schema changed without regenerating,
// or a generated file edited by hand, fails the test command.
package generated

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGeneratedUpToDate runs every `//go:generate go run ...` line of the
// module's gen.go files into a temporary directory and compares what it
// writes, file by file, with the committed files.
func TestGeneratedUpToDate(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	var gens []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && d.Name() == "gen.go" {
			gens = append(gens, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, gen := range gens {
		src, err := os.ReadFile(gen)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Dir(gen)
		for _, line := range strings.Split(string(src), "\n") {
			cmdline, ok := strings.CutPrefix(line, "//go:generate ")
			if !ok {
				continue
			}
			n++
			args := strings.Fields(cmdline)
			i := slices.Index(args, "-o")
			if len(args) < 3 || args[0] != "go" || args[1] != "run" || i < 0 || i+1 >= len(args) || args[i+1] != "." {
				t.Errorf("%s: cannot check %q (want go run ... -o . ...)", gen, cmdline)
				continue
			}
			tmp := t.TempDir()
			args[i+1] = tmp
			cmd := exec.Command(args[0], args[1:]...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %s: %v\n%s", gen, cmdline, err, out)
			}
			wrote, err := os.ReadDir(tmp)
			if err != nil {
				t.Fatal(err)
			}
			if len(wrote) == 0 {
				t.Errorf("%s: %s wrote nothing", gen, cmdline)
			}
			for _, f := range wrote {
				want, err := os.ReadFile(filepath.Join(tmp, f.Name()))
				if err != nil {
					t.Fatal(err)
				}
				rel, _ := filepath.Rel(root, filepath.Join(dir, f.Name()))
				got, err := os.ReadFile(filepath.Join(dir, f.Name()))
				switch {
				case err != nil:
					t.Errorf("%s is not committed; run go generate ./...", rel)
				case !bytes.Equal(got, want):
					t.Errorf("%s differs from what go generate writes; run go generate ./...", rel)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no go:generate lines found")
	}
}
