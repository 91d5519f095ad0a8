package pset

import (
	"math/big"
	"net/netip"
	"strings"
	"testing"

	"github.com/aclc/aclc/acl/expr"
)

// TestPreferValueNearest checks WitnessPreferring with one PreferValue on
// the random matches' sets: the witness is in the set; where the set's
// packets all have the field its value is the lexicographically nearest
// to the preferred one (at the first bit, from the top, where it differs,
// no packet of the set agrees with it above that bit and with the
// preferred value at it), and the preferred value itself where the set
// allows it; where some packets lack the field the witness is Witness's.
func TestPreferValueNearest(t *testing.T) {
	fx := newBruteFixture(t, 100, 5)
	m := fx.m
	sp := m.Space()
	prefs := []struct {
		field string
		value *big.Int
	}{
		{"ip4.src", ip4(t, "10.0.0.3")}, {"ip4.src", ip4(t, "192.168.7.9")}, {"tcp.dst", big.NewInt(80)},
		{"tcp.dst", big.NewInt(1025)}, {"eth.type", big.NewInt(0x86dd)}, {"ct_state", big.NewInt(0x22)},
	}
	exact, nearest, skipped := 0, 0, 0
	for _, bc := range fx.cases {
		for _, x := range []Set{bc.set, m.Not(bc.set)} {
			if x == Empty {
				continue
			}
			for _, pv := range prefs {
				p, err := sp.PreferValue(pv.field, pv.value)
				if err != nil {
					t.Fatal(err)
				}
				w, _ := m.WitnessPreferring(x, p)
				if !m.contains(x, w.assign) {
					t.Fatalf("%s: witness %s preferring %s=%v is not in the set", bc.text, w, pv.field, pv.value)
				}
				f := sp.byName[pv.field]
				if !m.Subset(x, m.prereqs(f.sym)) {
					if d, _ := m.Witness(x); d.String() != w.String() {
						t.Fatalf("%s: %s is not a field of every packet, yet the witness %s is not Witness's %s", bc.text, pv.field, w, d)
					}
					skipped++
					continue
				}
				got := w.Value(pv.field)
				if got.Cmp(pv.value) == 0 {
					exact++
				} else {
					nearest++
					if m.And(x, m.cmpBits(bitsOf{f, 0, f.width}, expr.Eq, pv.value, nil)) != Empty {
						t.Fatalf("%s: the set has %s=%v, the witness %s has %v", bc.text, pv.field, pv.value, w, got)
					}
				}
				for i := f.width - 1; i >= 0; i-- {
					if got.Bit(i) == pv.value.Bit(i) {
						continue
					}
					// bits above i as the witness's, bit i as preferred
					mask := new(big.Int).Lsh(big.NewInt(1), uint(f.width))
					mask.Sub(mask, new(big.Int).Lsh(big.NewInt(1), uint(i)))
					val := new(big.Int).And(got, mask)
					val.SetBit(val, i, pv.value.Bit(i))
					if m.And(x, m.cmpBits(bitsOf{f, 0, f.width}, expr.Eq, val, mask)) != Empty {
						t.Fatalf("%s: witness %s: %s=%v is not the nearest to %v (bit %d)", bc.text, w, pv.field, got, pv.value, i)
					}
				}
			}
		}
	}
	t.Logf("%d exact, %d nearest, %d skipped (field not in every packet)", exact, nearest, skipped)
	if exact == 0 || nearest == 0 || skipped == 0 {
		t.Errorf("the random sets do not cover every case: %d exact, %d nearest, %d skipped", exact, nearest, skipped)
	}
}

// TestPreferInOrder checks that preferences are kept in order of
// importance: a later one never overrides an earlier one, an impossible
// one is passed over, and a PreferIn whose set the witness's set misses
// changes nothing.
func TestPreferInOrder(t *testing.T) {
	fx := newBruteFixture(t, 1, 1)
	m, sp := fx.m, fx.m.Space()
	c := m.Converter(bruteResolver)
	set := func(text string) Set {
		s, err := c.Match(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		return s
	}
	val := func(field string, v *big.Int) Preference {
		p, err := sp.PreferValue(field, v)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	s := set(`inport == "p1" && ((ip4.src == 10.0.0.1 && tcp.dst == 80) || (ip4.src == 10.0.0.2 && tcp.dst == 443) || (ip6 && udp))`)
	a1, a2 := val("ip4.src", ip4(t, "10.0.0.1")), val("ip4.src", ip4(t, "10.0.0.2"))
	p80, p443 := val("tcp.dst", big.NewInt(80)), val("tcp.dst", big.NewInt(443))
	for _, tc := range []struct {
		name  string
		prefs []Preference
		want  []string // in the witness's microflow
		not   []string
	}{
		{"address first", []Preference{PreferIn(set("ip4")), a2, p80}, []string{"ip4.src == 10.0.0.2", "tcp.dst == 0x1bb"}, nil},
		{"port first", []Preference{PreferIn(set("ip4")), p80, a2}, []string{"ip4.src == 10.0.0.1", "tcp.dst == 0x50"}, nil},
		{"address, then a port it rules out", []Preference{PreferIn(set("ip4")), a1, p443}, []string{"ip4.src == 10.0.0.1", "tcp.dst == 0x50"}, nil},
		{"IPv6 first: the IPv4 preferences lack their field", []Preference{PreferIn(set("ip6")), a2, p443}, []string{"eth.type == 0x86dd", "ip.proto == 0x11"}, []string{"ip4.src"}},
		{"an impossible set is passed over", []Preference{PreferIn(set("icmp4")), PreferIn(set("tcp")), p443}, []string{"tcp.dst == 0x1bb"}, nil},
		{"mixed IP versions: the address is not preferred", []Preference{a2}, []string{"ip4.src == 10.0.0.1"}, nil},
	} {
		w, ok := m.WitnessPreferring(s, tc.prefs...)
		if !ok || !m.contains(s, w.assign) {
			t.Fatalf("%s: witness %s (%v) not in the set", tc.name, w, ok)
		}
		text := w.String()
		for _, want := range tc.want {
			if !strings.Contains(text, want) {
				t.Errorf("%s: witness %s lacks %s", tc.name, text, want)
			}
		}
		for _, not := range tc.not {
			if strings.Contains(text, not) {
				t.Errorf("%s: witness %s has %s", tc.name, text, not)
			}
		}
	}
	if _, ok := m.WitnessPreferring(Empty, a1); ok {
		t.Error("a witness of the empty set")
	}
	for _, bad := range []struct {
		field string
		v     *big.Int
	}{{"nope", big.NewInt(1)}, {"inport", big.NewInt(1)}, {"tcp.dst", big.NewInt(1 << 16)}, {"tcp.dst", big.NewInt(-1)}} {
		if _, err := sp.PreferValue(bad.field, bad.v); err == nil {
			t.Errorf("PreferValue(%s, %v): no error", bad.field, bad.v)
		}
	}
}

func ip4(t *testing.T, s string) *big.Int {
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return new(big.Int).SetBytes(a.AsSlice())
}
