package compile_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/nbschema"
)

var updateProblems = flag.Bool("update-problems", false, "rewrite testdata/golden/*.problems from aclc's compile")

// problemsHeader starts every .problems golden. ovn-northd reports no
// problems, so unlike the .lflows goldens these are aclc's own output,
// pinned so that a change to what compile reports shows in review.
const problemsHeader = "# aclc compile's problems for testdata/fixtures/%s.yaml, written by aclc\n" +
	"# (go test ./compile -run TestGoldenProblems -update-problems), not by northd, which reports none.\n"

// TestGoldenProblems compares compile's problems for every fixture with
// testdata/golden/NAME.problems.
func TestGoldenProblems(t *testing.T) {
	for name, path := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// The fixture's name as the repository spells it, so that
			// positions read the same from every directory.
			snap, err := nbschema.ParseFixture("testdata/fixtures/"+name+".yaml", data)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			b.WriteString(strings.ReplaceAll(problemsHeader, "%s", name))
			for _, p := range compile.Compile(snap).Problems {
				b.WriteString(p.String() + "\n")
			}
			golden := filepath.Join("../testdata/golden", name+".problems")
			if *updateProblems {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("no problems golden for %s (go test ./compile -run TestGoldenProblems -update-problems): %v", name, err)
			}
			if d := cmp.Diff(string(want), b.String()); d != "" {
				t.Errorf("compile's problems differ from %s (-golden +aclc):\n%s", golden, d)
			}
		})
	}
}
