package reach

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/pset"
)

// TestMatchRoundTrip is the exactness proof of the parts' Match: for
// every part of every ordered pair of every bundled fixture's switches,
// the match, parsed and converted back through the switch's own
// Converter and restricted to the pair's entering packets, is the part's
// set node for node (a non-empty subset when cut to its first terms, with
// the count of the rest). Parts reach cannot execute are described too.
func TestMatchRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../testdata/fixtures/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var parts, cut, ovn, unstated int
	var terms int64
	for _, file := range files {
		snap, err := nbschema.LoadFixture(file)
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(snap, nil)
		if err != nil {
			t.Fatal(err)
		}
		ports := e.Ports()
		for _, sw := range mapsKeys(ports) {
			for _, from := range ports[sw] {
				for _, to := range ports[sw] {
					if from == to {
						continue
					}
					res, err := e.Reach(from, to, Options{})
					var ne *NotExactError
					if errors.As(err, &ne) {
						continue
					}
					if err != nil {
						t.Fatalf("%s %s->%s: %v", file, from, to, err)
					}
					conv := e.converterOf(res)
					for _, p := range res.Parts {
						name := filepath.Base(file) + " " + from + "->" + to + " " + p.String()
						if p.MatchError != "" {
							// Only a set no match can state: the reject
							// guard reads tcp.flags raw, on SCTP too.
							if !strings.Contains(p.MatchError, "where its prerequisites") || p.Stage == "" {
								t.Errorf("%s: no match: %s", name, p.MatchError)
							}
							unstated++
							continue
						}
						got := matchSet(t, name, res, conv, p.Match)
						switch {
						case !p.Match.Truncated() && got != p.Set:
							t.Errorf("%s: match %q is not the part's set", name, p.Match.Text)
						case p.Match.Truncated() && (got == pset.Empty || !res.Manager.Subset(got, p.Set)):
							t.Errorf("%s: cut match %q is not a non-empty subset of the part's set", name, p.Match.Text)
						}
						parts++
						terms += p.Match.Terms
						if p.Match.Truncated() {
							cut++
						}
						if p.Match.OVN {
							ovn++
						}
					}
				}
			}
		}
	}
	t.Logf("%d parts described, %d cut to %d terms, %d in OVN's own syntax, %.1f terms on average; %d no match can state", parts, cut, pset.DefaultMaxTerms, ovn, float64(terms)/float64(max(parts, 1)), unstated)
	if parts < 100 {
		t.Errorf("only %d parts", parts)
	}
}

// matchSet converts a part's match back within the pair's entering packets.
func matchSet(t *testing.T, name string, res *Result, conv *pset.Converter, d pset.Description) pset.Set {
	t.Helper()
	e, err := res.Manager.Space().Dialect().ParseNegatedNominals(d.Text, nil)
	if err != nil {
		t.Fatalf("%s: match %q does not parse: %v", name, d.Text, err)
	}
	if strings.Contains(d.Text, "inport") || strings.Contains(d.Text, "outport") {
		t.Errorf("%s: match %q names the pair's ports", name, d.Text)
	}
	s, err := conv.Convert(e.Root)
	if err != nil {
		t.Fatalf("%s: match %q does not convert: %v", name, d.Text, err)
	}
	return res.Manager.And(s, res.Entering)
}

// converterOf returns the Converter of the switch of res.
func (e *Engine) converterOf(res *Result) *pset.Converter {
	for _, sm := range e.models {
		if sm.m == res.Manager {
			return sm.conv
		}
	}
	return nil
}
