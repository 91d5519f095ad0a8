package compile

import (
	"slices"
	"testing"

	"github.com/aclc/aclc/nbgen"
)

// TestEachRefFastPath checks eachRef's sigil-to-sigil path (matches
// without quotes) against its quote-aware scan, which a trailing quoted
// string forces, on every generated match and a few edge cases.
func TestEachRefFastPath(t *testing.T) {
	p := nbgen.Default()
	p.ACLs = 3000
	matches := []string{"", "@", "$", "@@a", "$a$b", "a == @pg1 && b == $as_1.x || @", "@pg_1 && ip4.src == {$a, $b}", "x$", "inport == @a&&outport==@b"}
	for _, acl := range nbgen.Generate(p).ACLs {
		matches = append(matches, acl.Match)
	}
	for _, m := range matches {
		for _, sigil := range []byte{'@', '$'} {
			fast := slices.Collect(eachRef(m, sigil))
			slow := slices.Collect(eachRef(m+` && "q"`, sigil))
			if !slices.Equal(fast, slow) {
				t.Fatalf("eachRef(%q, %q) = %q, the quote-aware scan gives %q", m, sigil, fast, slow)
			}
		}
	}
}
