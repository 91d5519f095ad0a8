package pset

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/release"
)

// corpusResolver is the Southbound the corpus's oracle loads (acl/expr's
// corpus_test.go): address sets and port group pg1 on datapath sw0.
var corpusResolver = expr.MapResolver{
	AddressSets: map[string][]string{
		"as1": {"10.0.0.1", "10.0.0.0/8", "192.168.1.0/24"}, "as_empty": {}, "as_mac": {"00:00:00:00:00:01"},
		"as_one": {"1"}, "as_v6": {"fe80::1", "2001:db8::/32"}, "pg1_ip4": {"10.0.0.5"}, "pg1_ip6": {},
		"pg_other_ip4": {}, "pg_other_ip6": {},
	},
	PortGroups: map[string][]string{"pg1": {"lsp1", "lsp2"}},
}

// TestCorpusWitnesses converts every corpus match each release's OVN
// accepts (23.03.1 and 26.03.1, with their dialects) and checks the
// witnesses of its set and of the complement with Eval, printed and read
// back; the only matches without a set are the ones the space cannot
// state exactly, and they say so with a NotExactError.
func TestCorpusWitnesses(t *testing.T) {
	for _, name := range []string{"23.03.1", "26.03.1"} {
		rel := release.MustLookup(name)
		d := expr.NewDialect(rel.Name(), func(c expr.Change) bool { // as compile.Dialect maps it
			f := release.DialectFact(string(c))
			return f != nil && rel.Has(f)
		})
		var exprs []*expr.Expr
		ports := map[string]bool{"lsp1": true, "lsp2": true}
		for _, text := range validCorpus(t, "../acl/expr/testdata/corpus/"+d.String()+".txt") {
			e, err := d.Parse(text, corpusResolver)
			if err != nil {
				t.Fatalf("%s: corpus says valid: %v", text, err)
			}
			expr.Inspect(e.Root, func(n expr.Node) bool {
				if c, ok := n.(*expr.Cmp); ok && c.Field.Symbol.IsString() {
					for _, k := range c.Values.Values {
						if k.Kind == expr.StringConst {
							ports[k.Str] = true
						}
					}
				}
				return true
			})
			exprs = append(exprs, e)
		}
		var domain []string
		for p := range ports {
			domain = append(domain, p)
		}
		sp, err := NewSpace(d, domain, "zz-other")
		if err != nil {
			t.Fatal(err)
		}
		m := NewManager(sp)
		c := m.Converter(corpusResolver)
		witnesses, inexact := 0, 0
		for _, e := range exprs {
			s, err := c.Convert(e.Root)
			if ne := (*NotExactError)(nil); errors.As(err, &ne) {
				inexact++
				t.Logf("%s %s: %v", d, e.Text, err)
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", e.Text, err)
			}
			witnesses += checkWitnesses(t, m, e, s, corpusResolver)
		}
		t.Logf("%s: %d valid matches, %d not exact, %d witnesses replayed, %d nodes", d, len(exprs), inexact, witnesses, m.NodeCount())
		if witnesses < len(exprs) {
			t.Errorf("%s: only %d witnesses for %d matches", d, witnesses, len(exprs))
		}
	}
}

// validCorpus returns the matches a corpus file labels valid.
func validCorpus(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), "\t", 3)
		if len(parts) < 2 || parts[0] != "valid" {
			continue
		}
		text := parts[1]
		if q, ok := strings.CutPrefix(text, "go:"); ok {
			if text, err = strconv.Unquote(q); err != nil {
				t.Fatal(err)
			}
		}
		out = append(out, text)
	}
	return out
}
