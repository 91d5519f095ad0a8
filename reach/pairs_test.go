package reach

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aclc/aclc/nbschema"
)

func pairsEngine(t *testing.T) *Engine { return engineAt(t, "testdata/pairs.yaml") }

// TestEndpoints checks each selector: a port, a port group (its ports on
// any switch), an address set by static address, dynamic address,
// prefix, a port group's $<pg>_ip4; and the errors.
func TestEndpoints(t *testing.T) {
	e := pairsEngine(t)
	for sel, want := range map[string][]string{
		"b1":        {"b1"},
		"@pg_a":     {"a1", "a3"},
		"$as_web":   {"a1"},   // 10.0.1.0/31 holds a1's 10.0.1.1; the MAC entry matches nothing
		"$as_dyn":   {"a2"},   // a2's dynamic_addresses
		"$pg_a_ip4": {"a1"},   // a3 has no IP address
		"a-lr":      {"a-lr"}, // named explicitly, a router port is an endpoint
	} {
		got, err := e.Endpoints(sel)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: %v %v, want %v", sel, got, err, want)
		}
	}
	for _, sel := range []string{"nope", "@nope", "$nope", "@pg_empty", "$as_outside"} {
		_, err := e.Endpoints(sel)
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: error %v, want an InputError", sel, err)
		}
	}
	if got, want := e.DefaultPorts(), []string{"a1", "a2", "a3", "b1", "c1"}; !slices.Equal(got, want) {
		t.Errorf("DefaultPorts: %v, want %v", got, want)
	}
}

// TestPairsPaths checks the pairs' order and paths: same switch executed,
// switches joined by the router not exact (routed), the lone switch no
// path; from == to left out.
func TestPairsPaths(t *testing.T) {
	e := pairsEngine(t)
	ports := e.DefaultPorts()
	var got []string
	err := e.Pairs(ports, ports, Options{}, func(o *Outcome) error {
		s := o.From + ">" + o.To + ":" + string(o.Path)
		switch {
		case o.Path == SameSwitch && (o.Result == nil || o.Result.From != o.From || o.Result.To != o.To):
			t.Errorf("%s: result %v", s, o.Result)
		case o.Path == Routed && (o.NotExact == nil || o.NotExact.Reason != RoutedReason || o.Exact()):
			t.Errorf("%s: %v", s, o.NotExact)
		case o.Path == NoPath && (o.Result != nil || o.NotExact != nil || !o.Exact() || o.Summary() != SummaryNoPath):
			t.Errorf("%s: not a plain no path", s)
		}
		got = append(got, s)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"a1>a2:switch", "a1>a3:switch", "a1>b1:routed", "a1>c1:none",
		"a2>a1:switch", "a2>a3:switch", "a2>b1:routed", "a2>c1:none",
		"a3>a1:switch", "a3>a2:switch", "a3>b1:routed", "a3>c1:none",
		"b1>a1:routed", "b1>a2:routed", "b1>a3:routed", "b1>c1:none",
		"c1>a1:none", "c1>a2:none", "c1>a3:none", "c1>b1:none",
	}
	if !slices.Equal(got, want) || CountPairs(ports, ports) != len(want) {
		t.Errorf("pairs %v (count %d), want %v", got, CountPairs(ports, ports), want)
	}
	// By from's switch first: c1 (sw-c) after a1 (sw-a) though given first.
	got = nil
	if err := e.Pairs([]string{"c1", "a3", "a1"}, []string{"b1"}, Options{}, func(o *Outcome) error {
		got = append(got, o.From+">"+o.To)
		return nil
	}); err != nil || !slices.Equal(got, []string{"a3>b1", "a1>b1", "c1>b1"}) {
		t.Errorf("order: %v %v", got, err)
	}
}

// TestReachFromAgrees is the proof of the shared execution: for every
// bundled fixture and every port of each switch, ReachFrom to all the
// other ports of the switch gives, pair by pair, exactly what Reach gives
// alone (with -short, a third of the fixtures): the same pair errors, entering set and parts (verdict, ACLs,
// stage, reason, set and witness).
func TestReachFromAgrees(t *testing.T) {
	files, err := filepath.Glob("../testdata/fixtures/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	if testing.Short() { // every third fixture
		var some []string
		for i := 0; i < len(files); i += 3 {
			some = append(some, files[i])
		}
		files = some
	}
	files = append(files, "testdata/pairs.yaml", "../testdata/routers/three-switches-pg.yaml")
	pairs := 0
	for _, file := range files {
		snap, err := nbschema.LoadFixture(file)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		e, err := New(snap, nil)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, ports := range e.Ports() {
			for _, from := range ports {
				tos := slices.DeleteFunc(slices.Clone(ports), func(p string) bool { return p == from })
				rs, errs := e.ReachFrom(from, tos, Options{})
				for i, to := range tos {
					pairs++
					name := filepath.Base(file) + " " + from + "->" + to
					r, err := e.Reach(from, to, Options{})
					if errString(err) != errString(errs[i]) {
						t.Errorf("%s: ReachFrom error %v, Reach %v", name, errs[i], err)
						continue
					}
					if err != nil {
						continue
					}
					if msg := sameResult(rs[i], r); msg != "" {
						t.Errorf("%s: %s", name, msg)
					}
				}
			}
		}
	}
	t.Logf("%d pairs", pairs)
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// sameResult says how two results of one engine differ, or "".
func sameResult(a, b *Result) string {
	if a.Switch != b.Switch || a.From != b.From || a.To != b.To || a.Entering != b.Entering || a.Manager != b.Manager {
		return "different pair or entering set"
	}
	parts := map[key]*Part{}
	for _, p := range b.Parts {
		parts[p.key()] = p
	}
	if len(a.Parts) != len(b.Parts) {
		return "different number of parts"
	}
	for _, p := range a.Parts {
		q := parts[p.key()]
		if q == nil || q.Set != p.Set || q.Witness != p.Witness {
			var alone []string
			for _, q := range b.Parts {
				alone = append(alone, q.String())
			}
			return "part " + p.String() + " differs from Reach's alone: " + strings.Join(alone, "; ")
		}
	}
	return ""
}
