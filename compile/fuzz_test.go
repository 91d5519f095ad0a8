package compile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
)

// FuzzFixtureCompile feeds fixture text to the fixture loader and every
// fixture that loads to the full compile, the incremental engine and the
// text writer: none may panic, a fixture that loads always compiles, and
// the engine built from it gives the same flows as Compile. Seeded with
// every bundled fixture.
func FuzzFixtureCompile(f *testing.F) {
	files, err := filepath.Glob("../testdata/fixtures/*.yaml")
	if err != nil || len(files) == 0 {
		f.Fatalf("no fixtures under testdata/fixtures: %v", err)
	}
	for _, p := range append(files, "../nbschema/testdata/full.yaml") {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		snap, err := nbschema.ParseFixture("fuzz.yaml", data)
		if err != nil {
			return
		}
		res := compile.Compile(snap)
		var full bytes.Buffer
		if err := lflow.WriteText(&full, res.Flows); err != nil {
			t.Fatalf("write compiled flows: %v", err)
		}
		again, err := nbschema.ParseFixture("fuzz.yaml", data)
		if err != nil {
			t.Fatalf("fixture loaded once and not twice: %v", err)
		}
		var inc bytes.Buffer
		if err := lflow.WriteText(&inc, compile.NewEngine(again).Listing()); err != nil {
			t.Fatalf("write engine flows: %v", err)
		}
		if !bytes.Equal(full.Bytes(), inc.Bytes()) {
			t.Fatalf("engine flows differ from Compile's:\n--- compile\n%s\n--- engine\n%s", full.Bytes(), inc.Bytes())
		}
	})
}
