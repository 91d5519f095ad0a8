package compile_test

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
)

// FuzzFixtureCompile feeds fixture text to the fixture loader and, for
// every release that can read it, every fixture that loads to the full
// compile, the incremental engine and the text writer: none may panic, a
// fixture that loads always compiles, the engine built from it gives the
// same flows as Compile, and so does an engine brought to it by deltas —
// from an empty NB, then to the NB without part of its rows, and back.
// Seeded with every bundled fixture.
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
		for _, rel := range release.Distinct() {
			fuzzRelease(t, data, rel)
		}
	})
}

// fuzzRelease is FuzzFixtureCompile for one release.
func fuzzRelease(t *testing.T, data []byte, rel *release.Release) {
	fo := nbschema.FixtureOptions{Release: rel}
	snap, err := nbschema.ParseFixtureWith("fuzz.yaml", data, fo)
	if err != nil {
		return
	}
	opts := compile.Options{Release: rel}
	res := compile.CompileWith(snap, opts)
	var full bytes.Buffer
	if err := lflow.WriteText(&full, res.Flows); err != nil {
		t.Fatalf("%s: write compiled flows: %v", rel.Series(), err)
	}
	again, err := nbschema.ParseFixtureWith("fuzz.yaml", data, fo)
	if err != nil {
		t.Fatalf("%s: fixture loaded once and not twice: %v", rel.Series(), err)
	}
	var inc bytes.Buffer
	if err := lflow.WriteText(&inc, compile.NewEngineWith(cloneSnapshot(again), opts).Listing()); err != nil {
		t.Fatalf("%s: write engine flows: %v", rel.Series(), err)
	}
	if !bytes.Equal(full.Bytes(), inc.Bytes()) {
		t.Fatalf("%s: engine flows differ from Compile's:\n--- compile\n%s\n--- engine\n%s", rel.Series(), full.Bytes(), inc.Bytes())
	}

	// Deltas: empty NB -> the fixture -> part of it -> the fixture.
	empty := nbschema.NewSnapshot()
	empty.Release = rel
	e := compile.NewEngineWith(empty, opts)
	part := cloneSnapshot(again)
	i := 0
	for _, tab := range nbschema.Tables() {
		for _, id := range slices.Sorted(maps.Keys(maps.Collect(tab.Rows(again)))) {
			if i++; (i+len(data))%3 == 0 {
				tab.Set(part, id, nil)
			}
		}
	}
	prev := e.Listing()
	for step, target := range []*nbschema.Snapshot{again, part, again} {
		d := e.Resync(cloneSnapshot(target))
		next := d.Apply(prev)
		o := opts
		o.ACLIDs = e.ACLIDs()
		want := text(t, compile.CompileWith(cloneSnapshot(target), o).Flows)
		if got := text(t, next); got != want {
			t.Fatalf("%s: step %d: previous flows + delta differ from a full compile:\n--- compile\n%s\n--- engine\n%s", rel.Series(), step, want, got)
		}
		if got := text(t, e.Listing()); got != want {
			t.Fatalf("%s: step %d: engine listing differs from a full compile", rel.Series(), step)
		}
		prev = next
	}
}
