package reach

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/trace"
)

// nbSide is one NB of a comparison with what traces it.
type nbSide struct {
	snap  *nbschema.Snapshot
	flows *lflow.Listing
	e     *Engine
	tr    *trace.Tracer
}

func loadSide(t *testing.T, fixture string, edit func(*nbschema.Snapshot)) *nbSide {
	t.Helper()
	snap, err := nbschema.LoadFixture("../testdata/fixtures/" + fixture)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(snap)
	}
	return newSide(t, snap)
}

func newSide(t *testing.T, snap *nbschema.Snapshot) *nbSide {
	t.Helper()
	flows := compile.CompileWith(snap, compile.Options{Release: snap.Release}).Flows
	e, err := New(snap, flows)
	if err != nil {
		t.Fatal(err)
	}
	return &nbSide{snap: snap, flows: flows, e: e, tr: trace.New(snap, flows)}
}

// aclWhere returns the first ACL (in UUID order) for which ok holds.
func aclWhere(t *testing.T, s *nbschema.Snapshot, ok func(*nbdb.ACL) bool) *nbdb.ACL {
	t.Helper()
	for _, id := range nbschema.SortedKeys(s.ACLs) {
		if ok(s.ACLs[id]) {
			return s.ACLs[id]
		}
	}
	t.Fatal("no such ACL in the fixture")
	return nil
}

func isAllow(a *nbdb.ACL) bool { return strings.HasPrefix(string(a.Action), "allow") }

// removeACL deletes ACL id and its references.
func removeACL(s *nbschema.Snapshot, id string) {
	delete(s.ACLs, id)
	for _, sw := range s.Switches {
		sw.ACLs = slices.DeleteFunc(sw.ACLs, func(x string) bool { return x == id })
	}
	for _, pg := range s.PortGroups {
		pg.ACLs = slices.DeleteFunc(pg.ACLs, func(x string) bool { return x == id })
	}
}

// addNextTo adds acl to the rows that list ACL of.
func addNextTo(s *nbschema.Snapshot, of string, acl *nbdb.ACL) {
	s.ACLs[acl.UUID] = acl
	for _, sw := range s.Switches {
		if slices.Contains(sw.ACLs, of) {
			sw.ACLs = append(sw.ACLs, acl.UUID)
		}
	}
	for _, pg := range s.PortGroups {
		if slices.Contains(pg.ACLs, of) {
			pg.ACLs = append(pg.ACLs, acl.UUID)
		}
	}
}

// diffEdits are ACL edits that make B from a fixture A.
var diffEdits = []struct {
	fixture, name string
	edit          func(*testing.T, *nbschema.Snapshot)
}{
	{"seed-stateless.yaml", "drop an allow", func(t *testing.T, s *nbschema.Snapshot) {
		removeACL(s, aclWhere(t, s, func(a *nbdb.ACL) bool { return a.Action == "allow-related" }).UUID)
	}},
	{"seed-stateless.yaml", "allow-related to allow-stateless", func(t *testing.T, s *nbschema.Snapshot) {
		for _, a := range s.ACLs { // both directions: either would commit
			if a.Action == "allow-related" && a.Match == "udp" {
				a.Action = "allow-stateless"
			}
		}
	}},
	{"stateful-drop-reject.yaml", "higher-priority drop", func(t *testing.T, s *nbschema.Snapshot) {
		a := aclWhere(t, s, isAllow)
		d := *a
		d.UUID, d.Priority, d.Action = "00000000-0000-4000-8000-0000000000d1", a.Priority+1, "drop"
		addNextTo(s, a.UUID, &d)
	}},
	{"stateful-drop-reject.yaml", "drop to reject", func(t *testing.T, s *nbschema.Snapshot) {
		aclWhere(t, s, func(a *nbdb.ACL) bool { return a.Action == "drop" }).Action = "reject"
	}},
	{"tiers-anp-np-banp.yaml", "change a tier", func(t *testing.T, s *nbschema.Snapshot) {
		// NP:default:allow-c to the BANP tier: NP's drop ip comes first.
		aclWhere(t, s, func(a *nbdb.ACL) bool { return a.Tier == 2 && a.Action == "allow-related" && a.Direction == "to-lport" }).Tier = 3
	}},
	{"tiers-anp-np-banp.yaml", "pass to allow", func(t *testing.T, s *nbschema.Snapshot) {
		aclWhere(t, s, func(a *nbdb.ACL) bool { return a.Action == "pass" }).Action = "allow-related"
	}},
	{"pg-multi-switch.yaml", "higher-priority allow over a drop", func(t *testing.T, s *nbschema.Snapshot) {
		a := aclWhere(t, s, func(a *nbdb.ACL) bool { return a.Action == "drop" || a.Action == "reject" })
		d := *a
		d.UUID, d.Priority, d.Action = "00000000-0000-4000-8000-0000000000d2", a.Priority+1, "allow-related"
		addNextTo(s, a.UUID, &d)
	}},
	{"address-sets.yaml", "address set grows", func(t *testing.T, s *nbschema.Snapshot) {
		for _, id := range nbschema.SortedKeys(s.AddressSets) {
			as := s.AddressSets[id]
			as.Addresses = append(as.Addresses, "10.99.0.0/16")
			return
		}
	}},
}

// TestDiffWitnesses is the proof of Diff on edited fixtures: every
// reported change's witness, traced with package trace on A and on B,
// gets the reported before and after verdicts (and the commit a
// conntrack change reports); and random packets of every common pair
// (executed or skipped) traced on A and B either get the same verdict in
// both or lie in a reported change ("nothing else"), a change giving the
// verdicts it reports.
func TestDiffWitnesses(t *testing.T) {
	perPair := 300
	if testing.Short() {
		perPair = 60
	}
	kinds := map[Kind]int{}
	for _, tc := range diffEdits {
		t.Run(strings.TrimSuffix(tc.fixture, ".yaml")+"/"+tc.name, func(t *testing.T) {
			a := loadSide(t, tc.fixture, nil)
			b := loadSide(t, tc.fixture, func(s *nbschema.Snapshot) { tc.edit(t, s) })
			changes, st := runDiff(t, a, b, false)
			if len(changes) == 0 {
				t.Fatalf("the edit changes nothing: %+v", st)
			}
			for _, c := range changes {
				kinds[c.Kind]++
				checkWitness(t, a, b, c)
			}
			n := checkNothingElse(t, a, b, changes, perPair)
			t.Logf("%d changes, %+v, %d packets traced", len(changes), st, n)
		})
	}
	t.Logf("kinds: %v", kinds)
	for _, k := range []Kind{NewlyAllowed, NewlyDenied, DenialChanged, ConntrackChanged} {
		if kinds[k] == 0 && !testing.Short() {
			t.Errorf("no change of kind %s: the test does not cover it", k)
		}
	}
}

// runDiff compares a and b (noSkip: executing every pair).
func runDiff(t *testing.T, a, b *nbSide, noSkip bool) ([]*Change, DiffStats) {
	t.Helper()
	d, err := NewDiff(a.e, b.e)
	if err != nil {
		t.Fatal(err)
	}
	d.noSkip = noSkip
	var out []*Change
	st, err := d.Run(func(c *Change) { out = append(out, c) })
	if err != nil {
		t.Fatal(err)
	}
	return out, st
}

// ctNew is the --ct list of every trace here: new|trk at every
// recirculation, as reach assumes.
var ctNew = func() []trace.CTState {
	ct := make([]trace.CTState, 40)
	for i := range ct {
		ct[i] = trace.CTNew | trace.CTTrk
	}
	return ct
}()

// outcome is what trace says of a packet: the verdict and, for an
// allowed packet, whether it was committed.
func (s *nbSide) outcome(t *testing.T, mf, to string) (trace.Verdict, bool) {
	t.Helper()
	got, err := s.tr.Trace(mf, trace.Options{CT: ctNew, Outport: to})
	if err != nil {
		t.Fatalf("trace %s: %v", mf, err)
	}
	commit := false
	for _, op := range got.CTOps {
		commit = commit || op == "ct_commit" || op == "ct_commit_nat"
	}
	return got.Verdict, commit && got.Verdict == trace.VerdictOutput
}

func checkWitness(t *testing.T, a, b *nbSide, c *Change) {
	t.Helper()
	if c.Kind == Undecided {
		if c.Reason == "" {
			t.Errorf("%s: not exact without a reason", c.Witness)
		}
		return
	}
	for _, side := range []struct {
		name string
		s    *nbSide
		p    *Part
	}{{"before", a, c.Before}, {"after", b, c.After}} {
		v, commit := side.s.outcome(t, c.Witness, c.To)
		if want := traceVerdict(side.p.Verdict); v != want || side.p.Verdict == Allow && commit != side.p.Committed {
			t.Errorf("%s %s->%s %s: witness %s: trace %s says %s committed=%v, the change says %s", c.Switch, c.From, c.To, c.Kind, c.Witness, side.name, v, commit, side.p)
		}
	}
}

// checkNothingElse traces random packets of every common pair on both
// sides and returns how many it traced.
func checkNothingElse(t *testing.T, a, b *nbSide, changes []*Change, perPair int) int {
	t.Helper()
	pa, pb := a.e.Ports(), b.e.Ports()
	n := 0
	for _, sw := range slices.Sorted(slices.Values(mapsKeys(pa))) {
		for _, from := range pa[sw] {
			for _, to := range pa[sw] {
				if from == to || !slices.Contains(pb[sw], from) || !slices.Contains(pb[sw], to) {
					continue
				}
				rng := rand.New(rand.NewPCG(uint64(n), 42))
				ga := newPacketGen(rng, a.flows, a.snap, from)
				gb := newPacketGen(rng, b.flows, b.snap, from)
				var mine []*Change
				for _, c := range changes {
					if c.Switch == sw && c.From == from && c.To == to {
						mine = append(mine, c)
					}
				}
				for i := range perPair {
					mf := ga.next()
					if i%2 == 1 {
						mf = gb.next()
					}
					n++
					va, ca := a.outcome(t, mf, to)
					vb, cb := b.outcome(t, mf, to)
					if va == trace.VerdictNotTraced || vb == trace.VerdictNotTraced {
						continue
					}
					in := changeOf(t, a, mine, mf)
					switch {
					case in == nil && (va != vb || ca != cb):
						t.Errorf("%s %s->%s: %s: trace says %s (committed %v) before and %s (committed %v) after, but no change holds it", sw, from, to, mf, va, ca, vb, cb)
					case in != nil && in.Kind != Undecided && (va != traceVerdict(in.Before.Verdict) || vb != traceVerdict(in.After.Verdict)):
						t.Errorf("%s %s->%s: %s: trace says %s before and %s after, but its change says %s -> %s", sw, from, to, mf, va, vb, in.Before, in.After)
					}
				}
			}
		}
	}
	return n
}

// changeOf returns the change that holds the packet mf, nil when none.
func changeOf(t *testing.T, s *nbSide, changes []*Change, mf string) *Change {
	t.Helper()
	for _, c := range changes {
		r, err := s.e.view.Resolver(c.Switch)
		if err != nil {
			t.Fatal(err)
		}
		p, err := s.e.dialect.ParseMicroflow(mf, r)
		if err != nil {
			t.Fatalf("parse %s: %v", mf, err)
		}
		if c.Manager.Contains(c.Set, p) {
			return c
		}
	}
	return nil
}

// TestDiffIdentical: two loads of one fixture differ in nothing, every
// switch is skipped, and executing every pair anyway finds nothing too.
func TestDiffIdentical(t *testing.T) {
	for _, fx := range []string{"tiers-anp-np-banp.yaml", "pg-multi-switch.yaml", "stateful-drop-reject.yaml"} {
		a, b := loadSide(t, fx, nil), loadSide(t, fx, nil)
		changes, st := runDiff(t, a, b, false)
		if len(changes) != 0 || st.SwitchesSkipped != st.Switches || st.Switches == 0 {
			t.Errorf("%s: %d changes, %+v; want none and every switch skipped", fx, len(changes), st)
		}
		a, b = loadSide(t, fx, nil), loadSide(t, fx, nil)
		changes, st = runDiff(t, a, b, true)
		for _, c := range changes {
			if c.Kind != Undecided {
				t.Errorf("%s executed: %s %s->%s %s", fx, c.Switch, c.From, c.To, c.Kind)
			}
		}
		if st.PairsExecuted != st.Pairs {
			t.Errorf("%s: noSkip executed %d of %d pairs", fx, st.PairsExecuted, st.Pairs)
		}
	}
}

// TestDiffSkipSound: with the skips and without, the same changes (the
// same sets: a change's witness is a function of its set). -short checks
// every other edit.
func TestDiffSkipSound(t *testing.T) {
	for i, tc := range diffEdits {
		if testing.Short() && i%2 == 1 {
			continue
		}
		var got [2][]string
		for i, noSkip := range []bool{false, true} {
			a := loadSide(t, tc.fixture, nil)
			b := loadSide(t, tc.fixture, func(s *nbschema.Snapshot) { tc.edit(t, s) })
			changes, _ := runDiff(t, a, b, noSkip)
			for _, c := range changes {
				got[i] = append(got[i], fmt.Sprintf("%s %s->%s %s %s", c.Switch, c.From, c.To, c.Kind, c.Witness))
			}
		}
		if !slices.Equal(got[0], got[1]) {
			t.Errorf("%s/%s: with skips %q, without %q", tc.fixture, tc.name, got[0], got[1])
		}
	}
}

// TestDiffReleases: NBs of two releases are an input error.
func TestDiffReleases(t *testing.T) {
	a := loadSide(t, "seed-stateless.yaml", nil)
	snap, err := nbschema.LoadFixture("../testdata/fixtures/seed-stateless.yaml")
	if err != nil {
		t.Fatal(err)
	}
	other, err := release.Lookup("24.03")
	if err != nil {
		t.Fatal(err)
	}
	snap.Release = other
	b := newSide(t, snap)
	_, err = NewDiff(a.e, b.e)
	var ie *InputError
	if err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), "different OVN releases") {
		t.Errorf("error %v, want an InputError on the releases", err)
	}
}
