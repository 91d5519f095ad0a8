package pset

import (
	"math/big"
	"testing"

	"github.com/aclc/aclc/acl/expr"
)

// TestAssignAgainstBrute checks Exists, Assign and Copy packet by packet
// on the brute-force domain: after `reg0[0] = v;' a packet is in the set
// exactly when its reg0[0] is v and it, with either value of reg0[0],
// was in the set before; after `reg0[0] = ct_state[0];' exactly when its
// reg0[0] equals its ct_state[0] and it, with either value of reg0[0],
// was in the set.
func TestAssignAgainstBrute(t *testing.T) {
	fx := newBruteFixture(t, 120, 3)
	m := fx.m
	reg, err := m.Space().FieldBits("reg0[0]")
	if err != nil {
		t.Fatal(err)
	}
	ct, err := m.Space().FieldBits("ct_state[0]")
	if err != nil {
		t.Fatal(err)
	}
	lv, ctLv := reg.f.level(reg.Ofs), ct.f.level(ct.Ofs)
	flipped := func(a []bool, v bool) []bool {
		c := append([]bool(nil), a...)
		c[lv] = v
		return c
	}
	nonTrivial := 0
	for _, bc := range fx.cases {
		ex := m.Exists(bc.set, reg)
		a0 := m.Assign(bc.set, reg, big.NewInt(0))
		a1 := m.Assign(bc.set, reg, big.NewInt(3)) // truncated to 1
		cp, err := m.Copy(bc.set, reg, ct)
		if err != nil {
			t.Fatal(err)
		}
		if ex != bc.set {
			nonTrivial++
		}
		for i, a := range fx.assigns {
			before := m.contains(bc.set, flipped(a, false)) || m.contains(bc.set, flipped(a, true))
			if got := m.contains(ex, a); got != before {
				t.Fatalf("%s: Exists on %s: %v, want %v", bc.text, fx.packets[i], got, before)
			}
			if got, want := m.contains(a0, a), before && !a[lv]; got != want {
				t.Fatalf("%s: Assign 0 on %s: %v, want %v", bc.text, fx.packets[i], got, want)
			}
			if got, want := m.contains(a1, a), before && a[lv]; got != want {
				t.Fatalf("%s: Assign 1 on %s: %v, want %v", bc.text, fx.packets[i], got, want)
			}
			if got, want := m.contains(cp, a), before && a[lv] == a[ctLv]; got != want {
				t.Fatalf("%s: Copy on %s: %v, want %v", bc.text, fx.packets[i], got, want)
			}
		}
	}
	if nonTrivial == 0 {
		t.Fatal("no random match depends on reg0[0]: the test proves nothing")
	}
	if _, err := m.Copy(fx.cases[0].set, reg, Bits{f: reg.f, Ofs: reg.Ofs, N: 1}); err == nil {
		t.Error("an overlapping move is not an error")
	}
	for _, bad := range []string{"inport", "tcp", "nosuch", "reg0[40]", "reg0[3..1]"} {
		if _, err := m.Space().FieldBits(bad); err == nil {
			t.Errorf("FieldBits(%q): no error", bad)
		}
	}
}

// TestFieldBitsAgainstMatches checks that the bits FieldBits names are
// those the match language means: the set where they equal a value is
// the set of the match `ref == value' (fields without prerequisites).
func TestFieldBitsAgainstMatches(t *testing.T) {
	d := expr.OVN2303()
	sp, err := NewSpace(d, []string{"p1", "p2"}, "")
	if err != nil {
		t.Fatal(err)
	}
	m := NewManager(sp)
	c := m.Converter(expr.MapResolver{})
	for _, tc := range []struct {
		ref string
		val int64
	}{
		{"reg0", 7}, {"reg0[7]", 1}, {"reg8[16..31]", 0x1234}, {"xxreg1", 3}, {"xreg4[1]", 1},
		{"ct_mark.blocked", 1}, {"ct_label[64..95]", 99}, {"flags.loopback", 1}, {"ct_state", 0x21}, {"reg9[2..3]", 2},
	} {
		b, err := sp.FieldBits(tc.ref)
		if err != nil {
			t.Errorf("%s: %v", tc.ref, err)
			continue
		}
		want, err := c.Match(tc.ref + " == " + big.NewInt(tc.val).String())
		if err != nil {
			t.Fatalf("%s: %v", tc.ref, err)
		}
		if got := m.Value(b, big.NewInt(tc.val)); got != want {
			t.Errorf("%s == %d: FieldBits' set differs from the match's", tc.ref, tc.val)
		}
		if got := m.Assign(m.All(), b, big.NewInt(tc.val)); got != want {
			t.Errorf("%s = %d on every packet: not the match's set", tc.ref, tc.val)
		}
	}
}
