package lint

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aclc/aclc/acl/expr"
)

// TestShortcutsSameCubes checks that the converter's shortcuts (andTerm's
// prerequisites already implied, setUnion's address sets from their cached
// cubes, the members from the lexed constants, toSetTerms's conjunction
// not built, hull's of one cube, andOne's insertion) give exactly the cubes of
// the long way, in the same order, value sets' values included: lint's
// findings (witness packets among them) come from them. On 3,000 random
// conjunctions of the terms CMSs write and of the ones that defeat the
// shortcuts (value sets on prerequisite fields, negations, disjunctions).
func TestShortcutsSameCubes(t *testing.T) {
	as := map[string][]string{
		"a": {"10.0.0.1", "10.0.0.2", "10.0.0.3"},
		"b": {"10.0.0.3", "10.0.0.9", "10.0.1.0/24", "10.0.0.1"},
		"c": {"10.1.0.0/16", "10.2.0.0/16"},
		"d": {"192.168.0.7"},
		"e": nil,
		"f": {"fd00::1", "fd00::2"},
		"g": {"10.0.0.1", "10.0.0.2", "10.0.0.4", "10.0.0.5", "10.0.0.6", "10.0.0.7", "10.0.0.8", "10.0.0.9", "10.0.0.10", "10.0.0.11"},
		"h": {"10.0.0.12", "10.0.0.1", "junk", "10.0.0.13"},
	}
	r := expr.MapResolver{AddressSets: as, PortGroups: map[string][]string{"pg": {"p1", "p2"}, "pg2": {"p2", "p3"}},
		Members: expr.NewMemberCache()}
	names := []string{"a", "b", "c", "d", "e", "g", "h"}
	rnd := rand.New(rand.NewPCG(7, 11))
	as1 := func() string { return "$" + names[rnd.IntN(len(names))] }
	terms := []func() string{
		func() string { return "inport == @pg" },
		func() string { return `outport == {"p1", "p3"}` },
		func() string { return "ip4" },
		func() string { return "ip6" },
		func() string { return "ip" },
		func() string { return "ip4.src == " + as1() },
		func() string { return "ip4.dst == {" + as1() + ", " + as1() + "}" },
		func() string { return "ip4.dst == {" + as1() + ", " + as1() + ", " + as1() + "}" },
		func() string { return "ip4.src == {" + as1() + ", 10.0.0.77}" },
		func() string { return fmt.Sprintf("ip4.src == 10.%d.0.0/16", rnd.IntN(3)) },
		func() string { return "ip6.dst == $f" },
		func() string { return "tcp" },
		func() string { return "udp" },
		func() string { return "icmp4" },
		func() string { return "(tcp || udp)" },
		func() string { return fmt.Sprintf("tcp.dst == %d", rnd.IntN(4)+79) },
		func() string { return "tcp.dst == {80, 443, 5673}" },
		func() string { lo := rnd.IntN(60000); return fmt.Sprintf("%d <= udp.dst <= %d", lo, lo+rnd.IntN(3000)) },
		func() string {
			lo := rnd.IntN(60000)
			return fmt.Sprintf("tcp.dst >= %d && tcp.dst <= %d", lo, lo+rnd.IntN(3000))
		},
		func() string { return fmt.Sprintf("udp.dst < %d", rnd.IntN(2000)) },
		func() string { return "!(tcp.dst == 22)" },
		func() string { return "tcp.src != 5" },
		func() string { return "ct.est" },
		func() string { return "!ct.new" },
		func() string { return "ct.est && ct.rpl" },
		func() string { return "eth.type == {0x800, 0x86dd}" },
		func() string { return "ip.proto == {6, 17}" },
		func() string { return "icmp4.type == 8" },
		func() string { return "!(ip4 && tcp)" },
		func() string { return "reg0[0..3] == 5" },
		func() string { return "(ip4.src == $a || ip4.dst == $b)" },
	}
	ports := []cube{
		{{id: idOf("outport"), str: &strc{in: map[string]bool{"p1": true, "p2": true}}}},
		{{id: idOf("inport"), str: &strc{in: map[string]bool{"p2": true}}}},
		{{id: idOf("eth.type"), val: u128{0x800, 0}, mask: u128{0xffff, 0}}},
	}
	short, long := newASCache(), newASCache()
	short.global = &r
	for i := range 3000 {
		n := 1 + rnd.IntN(6)
		ts := make([]string, n)
		for k := range ts {
			ts[k] = terms[rnd.IntN(len(terms))]()
		}
		m := strings.Join(ts, " && ")
		if i%7 == 0 {
			m = "!(" + m + ")"
		}
		e, err := testDialect.Parse(m, r)
		if err != nil {
			continue
		}
		a := (&converter{d: testDialect, r: r, as: short}).toSet(e.Root)
		b := (&converter{d: testDialect, r: r, as: long, long: true}).toSet(e.Root)
		sameSets(t, m, a, b)
		for _, d := range ports { // andOne's insertion of one constraint, against the product
			var ar arena
			got, ok, done := ar.andOne(d, a.over)
			want, wok := andSets([]cube{d}, a.over)
			if done && (ok != wok || showCubes(got) != showCubes(want)) {
				t.Fatalf("%s: andOne %s\n  %s, want %s", m, showCubes([]cube{d}), showCubes(got), showCubes(want))
			}
			ar.recycle()
		}
		if len(a.over) == 1 { // hull's shortcut for one cube, against its loop (the cube twice)
			if h, w := hull(a.over), hull([]cube{a.over[0], a.over[0]}); showCubes([]cube{h}) != showCubes([]cube{w}) {
				t.Fatalf("%s: hull %s, want %s", m, showCubes([]cube{h}), showCubes([]cube{w}))
			}
		}
		// split's conversion of the terms but the first, as a built
		// conjunction of them would convert.
		if c, ok := e.Root.(*expr.Binary); ok && !c.Or && len(c.Terms) > 2 {
			a := (&converter{d: testDialect, r: r, as: short}).toSetTerms(c.Terms, []int{0})
			b := (&converter{d: testDialect, r: r, as: long, long: true}).toSet(&expr.Binary{Terms: c.Terms[1:]})
			sameSets(t, m+" (but the first term)", a, b)
		}
	}
}

func sameSets(t *testing.T, m string, a, b *set) {
	t.Helper()
	if a.exact != b.exact || showCubes(a.over) != showCubes(b.over) || showCubes(a.under) != showCubes(b.under) {
		t.Fatalf("%s:\nshort %v\n  %s\n  %s\nlong  %v\n  %s\n  %s", m, a.exact, showCubes(a.over), showCubes(a.under),
			b.exact, showCubes(b.over), showCubes(b.under))
	}
}

// showCubes renders cubes with every constraint's bits, set values (in
// order) and names.
func showCubes(cs []cube) string {
	if cs == nil {
		return "nil"
	}
	var b strings.Builder
	for _, c := range cs {
		b.WriteString("[")
		for _, f := range c {
			fmt.Fprintf(&b, " %d:%x/%x", f.id, f.val, f.mask)
			if f.set != nil {
				fmt.Fprintf(&b, "{%x %x", f.set.mask, f.set.vals)
				if f.set.idx != nil {
					b.WriteString(" idx")
				}
				b.WriteString("}")
			}
			if f.str != nil {
				fmt.Fprintf(&b, "%v-%v", f.str.in, f.str.out)
			}
		}
		b.WriteString(" ]")
	}
	return b.String()
}
