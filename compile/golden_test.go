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
// 23.03): there is then no golden for r either, and a fixture that r can
// express must have one (regen.sh's own ovsdb-server decided, so the two
// agree or the fixture reader is wrong). A fixture that its own release
// cannot read fails the test.
func loadFor(t *testing.T, path string, r *release.Release) (*nbschema.Snapshot, bool) {
	t.Helper()
	name := strings.TrimSuffix(filepath.Base(path), ".yaml")
	_, gerr := os.Stat(filepath.Join(goldenDir(r), name+".lflows"))
	snap, err := nbschema.LoadFixtureWith(path, nbschema.FixtureOptions{Release: r})
	if err == nil {
		if gerr != nil && r.Verified() {
			t.Fatalf("OVN %s can express %s, but its northd's golden is missing (regen.sh said it is not expressible?): %v", r, name, gerr)
		}
		return snap, true
	}
	if _, derr := nbschema.LoadFixture(path); derr != nil {
		t.Fatal(derr)
	}
	if gerr == nil {
		t.Fatalf("OVN %s cannot express %s (%v), but it has a golden for it", r, name, err)
	}
	return nil, false
}

// goldenDir is where testdata/regen.sh keeps the goldens of version r.
func goldenDir(r *release.Release) string { return filepath.Join("../testdata/golden", r.Name()) }

// TestGoldenOracles checks that each verified version's goldens were made
// by the oracle the registry records (testdata/golden/VERSION/ORACLE,
// which regen.sh writes from the root it ran: the northd's own --version,
// and the exact Debian package or the source tag, commit and OVS commit),
// and that no goldens lie around for a version the registry lacks.
func TestGoldenOracles(t *testing.T) {
	known := map[string]bool{}
	for _, r := range release.All() {
		known[r.Name()] = true
		b, err := os.ReadFile(filepath.Join(goldenDir(r), "ORACLE"))
		if err != nil {
			t.Errorf("OVN %s: %v (run testdata/regen.sh with its root)", r, err)
			continue
		}
		o := r.Oracle
		want := "ovn-northd " + r.Name() + "\n"
		if o.Debian() {
			want += "debian ovn-central " + o.Package + "\n"
		} else {
			want += "source " + o.Tag + " " + o.Commit + " ovs " + o.OVSCommit + "\n"
		}
		if string(b) != want {
			t.Errorf("OVN %s: goldens made by\n%s, the registry records\n%s", r, b, want)
		}
	}
	dirs, _ := os.ReadDir("../testdata/golden")
	for _, d := range dirs {
		if d.IsDir() && !known[d.Name()] {
			t.Errorf("testdata/golden/%s: no such verified version in the registry", d.Name())
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
		t.Run(r.Name(), func(t *testing.T) {
			lay, _ := lflow.LayoutFor(r.Series())
			for name, path := range fixtures(t) {
				t.Run(name, func(t *testing.T) {
					snap, ok := loadFor(t, path, r)
					if !ok {
						return
					}
					golden, err := os.ReadFile(filepath.Join(goldenDir(r), name+".lflows"))
					if err != nil {
						t.Fatalf("no golden for %s (run testdata/regen.sh with OVN %s's root and %s): %v", name, r, path, err)
					}
					res := compile.CompileWith(snap, compile.Options{Release: r})
					var got bytes.Buffer
					if err := lflow.WriteText(&got, res.Flows); err != nil {
						t.Fatal(err)
					}
					if bytes.Equal(got.Bytes(), golden) {
						return
					}
					// Every stage northd wrote must be where lflow's layout
					// of the series puts it.
					want, err := lflow.ParseTextLayout("golden", bytes.NewReader(golden), lay)
					if err != nil {
						t.Fatalf("golden does not parse in the %s layout: %v", lay, err)
					}
					// northd hands out persist-established ACL ids in its hash
					// order, aclc without an SB in UUID order: equal up to a
					// consistent renaming is equal.
					changes := lflow.Diff(lflow.RenumberACLIDs(want), lflow.RenumberACLIDs(res.Flows))
					if len(changes) == 0 && r.Has(release.PersistEstablished) {
						return
					}
					// Where the NB does not decide what northd writes
					// (KindNorthdUndecided), its golden is one of the
					// outcomes aclc names.
					if compile.Undecided(res.Problems) && oneOf(want, northdAlternatives(t, snap, r)) {
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
