package pset

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aclc/aclc/acl/expr"
)

// The small domain of the brute-force tests: a few values of each field
// the random matches test, every combination a packet.

var brutePorts = []string{"p1", "p2"}

// bruteResolver resolves the random matches' references; Ports lists the
// domain and the other port, so Eval compares ports as ovn-trace does.
var bruteResolver = expr.MapResolver{
	AddressSets: map[string][]string{"as": {"10.0.0.1", "10.0.0.2"}, "as_net": {"10.0.0.0/31"}, "empty": {}},
	PortGroups:  map[string][]string{"pg": {"p1"}},
	Ports:       map[string]bool{"p1": true, "p2": true, "other": true},
}

// bruteAtoms are the comparisons random matches are made of.
var bruteAtoms = []string{
	`inport == "p1"`, `inport == {"p1", "p2"}`, `outport == "p1"`, `inport == @pg`, `outport == @pg`, `inport == {"gone", "p2"}`, `inport == "gone"`,
	`ip4`, `ip6`, `tcp`, `udp`, `icmp4`, `arp`, `ip`,
	`ip4.src == 10.0.0.1`, `ip4.src == 10.0.0.0/31`, `ip4.src == $as`, `ip4.src != {10.0.0.0, 10.0.0.3}`,
	`ip4.src[0] == 1`, `ip4.src < 10.0.0.2`, `ip4.src >= 10.0.0.1`, `ip4.src == $empty`, `ip4.src != $empty`,
	`ip4.src == {$as, $as_net}`, `ip4.src != $as`, `ip4.src > $as`,
	`tcp.dst == 80`, `tcp.dst == {79, 80}`, `tcp.dst != 80`, `1024 <= tcp.dst <= 65535`, `tcp.dst < 80`,
	`tcp.dst > 79`, `udp.dst == 80`, `udp.dst >= 1000`, `tcp.dst == 0x50/0xfff0`, `79 < tcp.dst < 1025`,
	`ct.est`, `ct.new`, `ct.trk`, `!ct.trk`, `ct_state == 0x20/0x20`, `ct.est && ct.trk`,
	`reg0[0] == 1`, `reg0[0]`, `!reg0`, `xxreg0[96] == 0`,
	`ip6.src == fe80::/10`, `ip6.src == ::`, `eth.type == 0x806`, `ip.proto == {6, 17}`, `1`, `0`,
}

// randomMatch returns a random match of bruteAtoms joined by &&, || and
// !(...), up to depth levels deep.
func randomMatch(rng *rand.Rand, depth int) string {
	if depth == 0 || rng.IntN(3) == 0 {
		return bruteAtoms[rng.IntN(len(bruteAtoms))]
	}
	switch rng.IntN(3) {
	case 0:
		return "(" + randomMatch(rng, depth-1) + " && " + randomMatch(rng, depth-1) + ")"
	case 1:
		return "(" + randomMatch(rng, depth-1) + " || " + randomMatch(rng, depth-1) + ")"
	}
	return "!(" + randomMatch(rng, depth-1) + ")"
}

// brutePackets returns every packet of the small domain.
func brutePackets(t testing.TB, d *expr.Dialect) []*expr.Microflow {
	var out []*expr.Microflow
	for _, in := range []string{"p1", "p2", "other"} {
		for _, outp := range []string{"p1", "other"} {
			for _, et := range []int{0x800, 0x86dd, 0x806} {
				for _, proto := range []int{6, 17, 1} {
					for src := range 4 {
						for _, port := range []int{79, 80, 1024} {
							for _, ct := range []int{0, 0x20, 0x21, 0x22} {
								for reg := range 2 {
									mf := d.NewMicroflow()
									for name, v := range map[string]any{
										"eth.type": et, "ip.proto": proto, "ip4.src": fmt.Sprintf("10.0.0.%d", src),
										"tcp.dst": port, "udp.dst": port, "ct_state": ct, "reg0[0]": reg,
										"ip6.src": map[bool]string{true: "fe80::1", false: "::"}[src%2 == 1],
									} {
										if err := mf.Set(name, v); err != nil {
											t.Fatal(err)
										}
									}
									if err := mf.Set("inport", in); err != nil {
										t.Fatal(err)
									}
									if err := mf.Set("outport", outp); err != nil {
										t.Fatal(err)
									}
									out = append(out, mf)
								}
							}
						}
					}
				}
			}
		}
	}
	return out
}

// bruteCase is a random match with its set and its truth on every packet.
type bruteCase struct {
	text  string
	e     *expr.Expr
	set   Set
	truth []bool
}

// bruteFixture converts n random valid matches and evaluates each on
// every packet of the domain.
type bruteFixture struct {
	m       *Manager
	packets []*expr.Microflow
	assigns [][]bool // the packets' variables (Contains without the conversion)
	cases   []bruteCase
}

func newBruteFixture(t *testing.T, n int, seed uint64) *bruteFixture {
	d := expr.OVN2303()
	sp, err := NewSpace(d, brutePorts, "other")
	if err != nil {
		t.Fatal(err)
	}
	fx := &bruteFixture{m: NewManager(sp), packets: brutePackets(t, d)}
	for _, mf := range fx.packets {
		fx.assigns = append(fx.assigns, fx.m.assignmentOf(mf))
	}
	c := fx.m.Converter(bruteResolver)
	rng := rand.New(rand.NewPCG(seed, 1))
	for len(fx.cases) < n {
		text := randomMatch(rng, 4)
		e, err := d.Parse(text, bruteResolver)
		if err != nil {
			continue // e.g. a nominal predicate under `!'
		}
		s, err := c.Convert(e.Root)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		bc := bruteCase{text: text, e: e, set: s, truth: make([]bool, len(fx.packets))}
		for i, mf := range fx.packets {
			if bc.truth[i], err = expr.Eval(e, mf, bruteResolver); err != nil {
				t.Fatalf("%s: %v", text, err)
			}
		}
		fx.cases = append(fx.cases, bc)
	}
	return fx
}

// TestConvertAgainstEval checks that every packet of the small domain is
// in a random match's set exactly when Eval says the match matches it.
func TestConvertAgainstEval(t *testing.T) {
	fx := newBruteFixture(t, 200, 1)
	matched := 0
	for n, bc := range fx.cases {
		for i, mf := range fx.packets {
			got := fx.m.contains(bc.set, fx.assigns[i])
			if n%50 == 0 && fx.m.Contains(bc.set, mf) != got { // the public way, now and then
				t.Fatalf("%s: packet %s: Contains differs from its assignment", bc.text, mf)
			}
			if got != bc.truth[i] {
				t.Fatalf("%s: packet %s: in the set %v, Eval %v", bc.text, mf, got, bc.truth[i])
			}
			if bc.truth[i] {
				matched++
			}
		}
	}
	t.Logf("%d matches × %d packets, %d (match, packet) pairs true, %d nodes", len(fx.cases), len(fx.packets), matched, fx.m.NodeCount())
}

// TestOperations checks union, intersection, difference and negation
// packet by packet against Eval's truths, emptiness and equality against
// the witnesses: an empty set has no packet of the domain, a non-empty
// one a witness Eval matches; equal sets agree on every packet, and sets
// that differ have a witness of their symmetric difference on which Eval
// tells them apart.
func TestOperations(t *testing.T) {
	fx := newBruteFixture(t, 60, 2)
	m := fx.m
	pairs, equal := 0, 0
	for i := range fx.cases {
		a := &fx.cases[i]
		na := m.Not(a.set)
		for k, mf := range fx.packets {
			if m.contains(na, fx.assigns[k]) == a.truth[k] {
				t.Fatalf("!(%s): packet %s", a.text, mf)
			}
		}
		for j := i; j < len(fx.cases); j++ {
			b := &fx.cases[j]
			and, or, diff := m.And(a.set, b.set), m.Or(a.set, b.set), m.Diff(a.set, b.set)
			for k, as := range fx.assigns {
				x, y := a.truth[k], b.truth[k]
				if m.contains(and, as) != (x && y) || m.contains(or, as) != (x || y) || m.contains(diff, as) != (x && !y) {
					mf := fx.packets[k]
					t.Fatalf("%s, %s: packet %s: and/or/diff disagree with Eval (%v, %v)", a.text, b.text, mf, x, y)
				}
			}
			checkEmptiness(t, m, and, fx.packets, func(k int) bool { return a.truth[k] && b.truth[k] }, func(mf *expr.Microflow) bool {
				return eval(t, a.e, mf) && eval(t, b.e, mf)
			})
			pairs++
			xor := m.Or(m.Diff(a.set, b.set), m.Diff(b.set, a.set))
			if m.Equal(a.set, b.set) {
				equal++
				if xor != Empty {
					t.Fatalf("%s, %s: equal sets, non-empty symmetric difference", a.text, b.text)
				}
				for k := range fx.packets {
					if a.truth[k] != b.truth[k] {
						t.Fatalf("%s, %s: equal sets, Eval differs on %s", a.text, b.text, fx.packets[k])
					}
				}
				continue
			}
			w, ok := m.Witness(xor)
			if !ok {
				t.Fatalf("%s, %s: unequal sets, empty symmetric difference", a.text, b.text)
			}
			if mf := w.Microflow(); eval(t, a.e, mf) == eval(t, b.e, mf) {
				t.Fatalf("%s, %s: unequal sets, but Eval agrees on their witness %s", a.text, b.text, mf)
			}
		}
	}
	t.Logf("%d pairs, %d equal", pairs, equal)
}

// checkEmptiness checks that s is empty exactly when no packet of the
// domain is in it by truth, or else that its witness satisfies match.
func checkEmptiness(t *testing.T, m *Manager, s Set, packets []*expr.Microflow, truth func(int) bool, match func(*expr.Microflow) bool) {
	t.Helper()
	w, ok := m.Witness(s)
	if ok != !m.IsEmpty(s) {
		t.Fatal("Witness and IsEmpty disagree")
	}
	if !ok {
		for k := range packets {
			if truth(k) {
				t.Fatalf("empty set, but Eval matches %s", packets[k])
			}
		}
		return
	}
	if !match(w.Microflow()) {
		t.Fatalf("witness %s: Eval does not match it", w)
	}
}

func eval(t *testing.T, e *expr.Expr, mf *expr.Microflow) bool {
	t.Helper()
	ok, err := expr.Eval(e, mf, bruteResolver)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestRandomWitnesses checks parse → set → witness → Eval round trips on
// the random matches: the witness of a non-empty set matches, printed and
// read back by ParseMicroflow too, and the witness of its complement
// does not.
func TestRandomWitnesses(t *testing.T) {
	fx := newBruteFixture(t, 200, 3)
	checked := 0
	for _, bc := range fx.cases {
		checked += checkWitnesses(t, fx.m, bc.e, bc.set, bruteResolver)
	}
	t.Logf("%d witnesses replayed", checked)
}

// checkWitnesses checks the witnesses of s, the set of e, and of its
// complement, directly and through their printed microflows; it returns
// how many it checked.
func checkWitnesses(t *testing.T, m *Manager, e *expr.Expr, s Set, r expr.Resolver) int {
	t.Helper()
	n := 0
	d := m.Space().Dialect()
	for _, want := range []bool{true, false} {
		x := s
		if !want {
			x = m.Not(s)
		}
		w, ok := m.Witness(x)
		if !ok {
			continue
		}
		n++
		mf := w.Microflow()
		if got, err := expr.Eval(e, mf, r); err != nil || got != want {
			t.Fatalf("%s: witness %s: Eval %v (%v), want %v", e.Text, mf, got, err, want)
		}
		text := mf.String()
		back, err := d.ParseMicroflow(text, r)
		if err != nil {
			t.Fatalf("%s: witness %s does not parse back: %v", e.Text, text, err)
		}
		if got, err := expr.Eval(e, back, r); err != nil || got != want {
			t.Fatalf("%s: witness %s read back: Eval %v (%v), want %v", e.Text, text, got, err, want)
		}
		if !strings.Contains(text, "inport ==") {
			t.Fatalf("%s: witness %s names no inport", e.Text, text)
		}
	}
	return n
}
