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
	"github.com/aclc/aclc/release"
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

// loadFor reads fixture path for release r. It returns false when r
// cannot express the fixture (it uses something r lacks, as a tier on
// 23.03): there is then no golden for r either. A fixture that its own
// release cannot read fails the test.
func loadFor(t *testing.T, path string, r *release.Release) (*nbschema.Snapshot, bool) {
	t.Helper()
	snap, err := nbschema.LoadFixtureWith(path, nbschema.FixtureOptions{Release: r})
	if err == nil {
		return snap, true
	}
	if _, derr := nbschema.LoadFixture(path); derr != nil {
		t.Fatal(derr)
	}
	name := strings.TrimSuffix(filepath.Base(path), ".yaml")
	if _, gerr := os.Stat(filepath.Join(goldenDir(r), name+".lflows")); gerr == nil {
		t.Fatalf("OVN %s cannot express %s (%v), but it has a golden for it", r, name, err)
	}
	return nil, false
}

// goldenDir is where testdata/regen.sh keeps the goldens of release r.
func goldenDir(r *release.Release) string { return filepath.Join("../testdata/golden", r.Series()) }

// TestGoldenPackages checks that each release's goldens were made by the
// exact package the release records (testdata/golden/SERIES/PACKAGE, which
// regen.sh writes), so goldens and registry cannot drift apart.
func TestGoldenPackages(t *testing.T) {
	for _, r := range release.All() {
		b, err := os.ReadFile(filepath.Join(goldenDir(r), "PACKAGE"))
		if err != nil {
			t.Errorf("OVN %s: %v (run testdata/regen.sh %s)", r, err, r.Series())
			continue
		}
		if got, want := strings.TrimSpace(string(b)), "ovn-central "+r.Package; got != want {
			t.Errorf("OVN %s: goldens made with %q, release records %q", r, got, want)
		}
	}
}

// TestGolden compiles every fixture offline for every release and compares
// the result, byte for byte, with the golden that testdata/regen.sh wrote
// from that release's real ovn-northd for the same fixture — up to a
// consistent renaming of the ACL ids of persist-established ACLs, which
// northd allocates in its hash order.
func TestGolden(t *testing.T) {
	for _, r := range release.All() {
		t.Run(r.Series(), func(t *testing.T) {
			for name, path := range fixtures(t) {
				t.Run(name, func(t *testing.T) {
					snap, ok := loadFor(t, path, r)
					if !ok {
						return
					}
					golden, err := os.ReadFile(filepath.Join(goldenDir(r), name+".lflows"))
					if err != nil {
						t.Fatalf("no golden for %s (run testdata/regen.sh %s %s): %v", name, r.Series(), path, err)
					}
					res := compile.CompileWith(snap, compile.Options{Release: r})
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
					// northd hands out persist-established ACL ids in its hash
					// order, aclc without an SB in UUID order: equal up to a
					// consistent renaming is equal.
					changes := lflow.Diff(lflow.RenumberACLIDs(want), lflow.RenumberACLIDs(res.Flows))
					if len(changes) == 0 && r.Has(release.PersistEstablished) {
						return
					}
					var d bytes.Buffer
					lflow.WriteDiff(&d, "northd (golden)", "aclc", lflow.Diff(want, res.Flows))
					t.Errorf("aclc compile differs from the northd %s golden:\n%s", r, d.String())
				})
			}
		})
	}
}
