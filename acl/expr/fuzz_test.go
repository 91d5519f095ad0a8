package expr

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// FuzzParse checks that Parse never panics, that error offsets lie inside
// the input, and that printing an accepted expression gives text that parses
// to the same printed form (parse→print→parse is stable).
func FuzzParse(f *testing.F) {
	if file, err := os.Open(filepath.Join(corpusDir, "23.03.1.txt")); err == nil {
		sc := bufio.NewScanner(file)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			parts := strings.SplitN(sc.Text(), "\t", 3)
			if len(parts) < 2 || strings.HasPrefix(parts[0], "#") {
				continue
			}
			x := parts[1]
			if rest, ok := strings.CutPrefix(x, "go:"); ok {
				if u, err := strconv.Unquote(rest); err == nil {
					x = u
				}
			}
			f.Add(x)
		}
		file.Close()
	}
	for _, s := range []string{"", "ip4 && tcp.dst == 80", "!(!reg0)", `inport == "\u00e9"`, "^x == 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, r := range []Resolver{nil, corpusResolver{}} {
			x, err := Parse(s, r)
			if err != nil {
				e, ok := err.(*Error)
				if !ok {
					t.Fatalf("Parse(%q) returned %T, want *Error", s, err)
				}
				if e.Offset < 0 || e.Offset > len(s) {
					t.Fatalf("Parse(%q): offset %d outside input", s, e.Offset)
				}
				continue
			}
			p1 := x.String()
			y, err := Parse(p1, r)
			if err != nil {
				t.Fatalf("Parse(%q) printed as %q, which fails: %v", s, p1, err)
			}
			if p2 := y.String(); p2 != p1 {
				t.Fatalf("Parse(%q): print not stable: %q then %q", s, p1, p2)
			}
			m := NewMicroflow()
			if _, err := Eval(x, m, r); err != nil && r != nil {
				t.Fatalf("Eval(%q): %v", s, err)
			}
		}
	})
}
