package pset

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/aclc/aclc/acl/expr"
)

// checkDescription checks d, the description of s within within, on its
// own: its text parses and converts (through a fresh Converter with the
// brute resolver) to s within within when whole, to a non-empty subset
// of it when cut; and, on every packet of the brute domain, Eval of the
// text agrees with the set (exactly when whole, as a subset when cut).
func checkDescription(t *testing.T, fx *bruteFixture, what string, s, within Set, d Description, max int64) {
	t.Helper()
	m := fx.m
	want := m.And(s, within)
	e, err := m.Space().Dialect().ParseNegatedNominals(d.Text, bruteResolver)
	if err != nil {
		t.Fatalf("%s: description %q does not parse: %v", what, d.Text, err)
	}
	if err := m.Space().Dialect().Valid(d.Text, bruteResolver); (err == nil) != d.OVN {
		t.Fatalf("%s: description %q: OVN %v, but OVN's parser says %v", what, d.Text, d.OVN, err)
	}
	got, err := m.Converter(bruteResolver).Convert(e.Root)
	if err != nil {
		t.Fatalf("%s: description %q does not convert: %v", what, d.Text, err)
	}
	got = m.And(got, within)
	switch {
	case d.Omitted < 0 || d.Omitted > d.Terms:
		t.Fatalf("%s: %q: %d terms, %d omitted", what, d.Text, d.Terms, d.Omitted)
	case d.Truncated() && d.Terms <= max:
		t.Fatalf("%s: %q: %d terms (bound %d), truncated %v", what, d.Text, d.Terms, max, d.Truncated())
	case !d.Truncated() && got != want:
		t.Fatalf("%s: description %q is not the set", what, d.Text)
	case d.Truncated() && (got == Empty || !m.Subset(got, want)):
		t.Fatalf("%s: cut description %q is not a non-empty subset of the set", what, d.Text)
	case d.Truncated() && !strings.Contains(d.String(), " more terms"):
		t.Fatalf("%s: cut description %q has no marker", what, d.String())
	}
	for k, mf := range fx.packets {
		in := m.contains(want, fx.assigns[k])
		if !m.contains(within, fx.assigns[k]) {
			continue
		}
		ok, err := expr.Eval(e, mf, bruteResolver)
		if err != nil {
			t.Fatal(err)
		}
		if ok != in && (!d.Truncated() || ok) {
			t.Fatalf("%s: description %q: Eval %v on %s, the set %v", what, d.Text, ok, mf, in)
		}
	}
}

// TestDescribeRandom is the property test of Describe: random matches,
// their pairwise unions, intersections and differences, described alone
// (matches) and within a pair of ports (every set, as reach describes its
// parts), whole and within a small bound, round trip exactly.
func TestDescribeRandom(t *testing.T) {
	n := 80
	if testing.Short() {
		n = 30
	}
	fx := newBruteFixture(t, n, 7)
	m := fx.m
	c := m.Converter(bruteResolver)
	var pairs []Set
	for _, p := range [][2]string{{"p1", "p2"}, {"p2", "p1"}} {
		s, err := c.Match(`inport == "` + p[0] + `" && outport == "` + p[1] + `"`)
		if err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, s)
	}
	described, cut := 0, 0
	check := func(what string, s, within Set) {
		for _, max := range []int64{DefaultMaxTerms, 3} {
			d, err := m.Describe(s, within, DescribeOptions{MaxTerms: int(max)})
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			checkDescription(t, fx, what, s, within, d, max)
			described++
			if d.Truncated() {
				cut++
			}
		}
	}
	for i, a := range fx.cases {
		check(a.text, a.set, m.All())
		b := fx.cases[(i+1)%len(fx.cases)]
		for j, x := range []Set{a.set, m.And(a.set, b.set), m.Or(a.set, b.set), m.Diff(a.set, b.set), m.Not(a.set)} {
			check(a.text+" op"+string(rune('0'+j))+" "+b.text, x, pairs[i%2])
		}
	}
	t.Logf("%d descriptions checked, %d cut", described, cut)
	if cut == 0 {
		t.Error("no description was cut: the bound is not exercised")
	}
}

// TestDescribeCompact checks that common sets print in their compact
// form (and, through Describe's own check and checkDescription, exactly).
func TestDescribeCompact(t *testing.T) {
	fx := newBruteFixture(t, 0, 1)
	m := fx.m
	c := m.Converter(bruteResolver)
	for _, tc := range []struct{ match, want string }{
		// Ranges, CIDRs and the protocol implied by its port.
		{"ip4 && tcp && 80 <= tcp.dst <= 443 && ip4.src == 10.0.0.0/24", "tcp.dst >= 80 && tcp.dst <= 443 && ip4.src == 10.0.0.0/24"},
		{"tcp.dst == 80 || tcp.dst == 443", "tcp.dst == {80, 443}"},
		{"tcp && tcp.dst >= 1024", "tcp.dst >= 1024"},
		// The complement when shorter: everything TCP but port 22.
		{"tcp && !(tcp.dst == 22)", "tcp.dst != 22"},
		{"ip4 && tcp && !(tcp.dst >= 1000 && tcp.dst <= 2000)", "ip4 && !(tcp.dst >= 1000 && tcp.dst <= 2000)"},
		{"ip4.src == {10.0.0.0/25, 10.0.0.128/25, 10.0.1.0/24}", "ip4.src == 10.0.0.0/23"},
		{"ip4.src >= 10.0.0.1 && ip4.src <= 10.0.0.9", "ip4.src >= 10.0.0.1 && ip4.src <= 10.0.0.9"},
		{"ip4.dst == {10.0.0.1, 10.0.0.2, 10.0.0.3, 192.168.0.0/16}", "ip4.dst == {10.0.0.1, 10.0.0.2/31, 192.168.0.0/16}"},
		// Common constraints factored out in front.
		{"!vlan.present && ((tcp && tcp.dst == 80) || (udp && udp.dst == 53))", "!vlan.present && (tcp.dst == 80 || udp.dst == 53)"},
		{"ip4 && (tcp || udp)", "ip4 && (tcp || udp)"},
		{"icmp4 && icmp4.type == 8", "icmp4.type == 8"},
		{"eth.type == 0x88cc", "eth.type == 0x88cc"},
		{"1", "1"},
		{"0", "0"},
	} {
		s, err := c.Match(tc.match)
		if err != nil {
			t.Fatal(err)
		}
		d, err := m.Describe(s, m.All(), DescribeOptions{})
		if err != nil {
			t.Fatalf("%s: %v", tc.match, err)
		}
		if d.Text != tc.want {
			t.Errorf("%s: described as %q, want %q", tc.match, d.Text, tc.want)
		}
		checkDescription(t, fx, tc.match, s, m.All(), d, DefaultMaxTerms)
	}
}

// TestDescribeBound checks the bound: a set of 100 random addresses
// described within 10 terms is its first 10 and "and N more terms".
func TestDescribeBound(t *testing.T) {
	fx := newBruteFixture(t, 0, 1)
	m := fx.m
	var addrs []string
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100 {
		addrs = append(addrs, fmt.Sprintf("10.%d.%d.%d", rng.IntN(256), rng.IntN(256), rng.IntN(256)))
	}
	s, err := m.Converter(bruteResolver).Match("ip4.src == {" + strings.Join(addrs, ", ") + "}")
	if err != nil {
		t.Fatal(err)
	}
	d, err := m.Describe(s, m.All(), DescribeOptions{MaxTerms: 10})
	if err != nil {
		t.Fatal(err)
	}
	if d.Terms < 90 || d.Omitted != d.Terms-10 || !strings.HasSuffix(d.String(), fmt.Sprintf(" ... and %d more terms", d.Omitted)) {
		t.Errorf("%s: %d terms, %d omitted", d, d.Terms, d.Omitted)
	}
	checkDescription(t, fx, "100 addresses", s, m.All(), d, 10)
}

// TestDescribeInconsistent checks that a set no match can state (tcp.flags
// tested on SCTP packets, as ovn-trace reads the raw field) is a
// DescribeError naming the field, not a wrong match.
func TestDescribeInconsistent(t *testing.T) {
	fx := newBruteFixture(t, 0, 1)
	m := fx.m
	b, err := m.Space().FieldBits("tcp.flags")
	if err != nil {
		t.Fatal(err)
	}
	sctp, err := m.Converter(bruteResolver).Match("sctp")
	if err != nil {
		t.Fatal(err)
	}
	s := m.And(sctp, m.Value(b, big.NewInt(4)))
	_, err = m.Describe(s, m.All(), DescribeOptions{})
	var de *DescribeError
	if !errors.As(err, &de) || !strings.Contains(de.Reason, "tells packets apart by tcp.flags where its prerequisites") {
		t.Fatalf("raw tcp.flags on SCTP: error %v, want a DescribeError naming tcp.flags", err)
	}
	// The same bits on TCP packets are a match.
	tcp, _ := m.Converter(bruteResolver).Match("tcp")
	if d, err := m.Describe(m.And(tcp, m.Value(b, big.NewInt(4))), m.All(), DescribeOptions{}); err != nil || d.Text != "tcp.flags == 4" {
		t.Fatalf("tcp.flags on TCP: %q, %v", d.Text, err)
	}
}
