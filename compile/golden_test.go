package compile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
)

// fixtures returns the bundled NB fixtures and the names of their goldens.
func fixtures(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../testdata/fixtures/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures under testdata/fixtures: %v", err)
	}
	out := map[string]string{}
	for _, f := range files {
		out[strings.TrimSuffix(filepath.Base(f), ".yaml")] = f
	}
	return out
}

// TestGolden compiles every fixture offline and compares the result, byte
// for byte, with the golden that testdata/regen.sh wrote from the real
// ovn-northd 23.03 for the same fixture.
func TestGolden(t *testing.T) {
	for name, path := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			golden, err := os.ReadFile(filepath.Join("../testdata/golden", name+".lflows"))
			if err != nil {
				t.Fatalf("no golden for %s (run testdata/regen.sh %s): %v", name, path, err)
			}
			snap, err := nbschema.LoadFixture(path)
			if err != nil {
				t.Fatal(err)
			}
			res := compile.Compile(snap)
			var got bytes.Buffer
			if err := lflow.WriteText(&got, res.Flows); err != nil {
				t.Fatal(err)
			}
			if bytes.Equal(got.Bytes(), golden) {
				return
			}
			want, err := lflow.ParseText("golden", bytes.NewReader(golden))
			if err != nil {
				t.Fatalf("golden does not parse: %v", err)
			}
			var d bytes.Buffer
			lflow.WriteDiff(&d, "northd (golden)", "aclc", lflow.Diff(want, res.Flows))
			t.Errorf("aclc compile differs from the northd golden:\n%s", d.String())
		})
	}
}
