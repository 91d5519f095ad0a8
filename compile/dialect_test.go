package compile_test

import (
	"testing"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/release"
)

// TestDialectFacts: every change of acl/expr's match language has its
// dated fact in package release, and every dialect fact names a change,
// so that compile.Dialect leaves none out and dates none twice.
func TestDialectFacts(t *testing.T) {
	names := map[string]bool{}
	for _, c := range expr.Changes() {
		names[string(c)] = true
		if release.DialectFact(string(c)) == nil {
			t.Errorf("acl/expr change %q has no fact in package release", c)
		}
	}
	for _, f := range release.Facts() {
		if f.Kind() == release.MatchFact && !names[f.DialectChange()] {
			t.Errorf("fact %s names no acl/expr change (%q)", f, f.DialectChange())
		}
	}
	// Spot checks of the mapping.
	for v, want := range map[string]bool{"24.03.4": false, "24.03.5": true, "25.03.0": true} {
		if got := compileDialectHas(v, expr.ChangeStrictTemplates); got != want {
			t.Errorf("%s strict templates = %v, want %v", v, got, want)
		}
	}
}

func compileDialectHas(v string, c expr.Change) bool {
	return compileDialect(release.MustLookup(v)).Has(c)
}

var compileDialect = compile.Dialect
