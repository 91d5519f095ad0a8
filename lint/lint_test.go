package lint

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/nbschema"
)

// got is the part of a finding the fixture tests pin: the rule, its
// severity, the ACLs involved (by name), the switches and the offset of
// the caret (-1: none).
type got struct {
	Rule     string
	Severity string
	ACLs     []string
	Switches []string
	Offset   int
	// NotExact marks info findings that say aclc could not decide.
	NotExact bool
}

func summarize(r *Report) []got {
	var out []got
	for _, f := range r.Findings {
		g := got{Rule: f.Rule, Severity: f.Severity.String(), Switches: f.Switches, Offset: -1,
			NotExact: strings.HasPrefix(f.Message, "not exact")}
		for _, a := range f.ACLs {
			n := a.Name
			if n == "" {
				n = a.UUID
			}
			g.ACLs = append(g.ACLs, n)
		}
		if f.Offset != nil {
			g.Offset = *f.Offset
		}
		out = append(out, g)
	}
	return out
}

func lintFixture(t *testing.T, name string) *Report {
	t.Helper()
	s, err := nbschema.LoadFixture(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("loading %s: %v", name, err)
	}
	r, err := Lint(s)
	if err != nil {
		t.Fatalf("linting %s: %v", name, err)
	}
	return r
}

// TestRules runs every rule's fixture and compares the findings.
func TestRules(t *testing.T) {
	for _, tc := range ruleCases {
		t.Run(tc.fixture, func(t *testing.T) {
			r := lintFixture(t, tc.fixture)
			if diff := cmp.Diff(tc.want, summarize(r)); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
			for _, f := range r.Findings {
				if f.Message == "" || f.Fix == "" || len(f.ACLs) == 0 || f.ACLs[0].Origin == "" {
					t.Errorf("incomplete finding %+v", f)
				}
			}
		})
	}
}
