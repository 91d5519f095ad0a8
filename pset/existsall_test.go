package pset

import "testing"

// TestExistsAll checks ExistsAll packet by packet on the brute-force
// domain: with bits reg0[0], reg0[1] and ct_state[0] forgotten, a packet
// is in the set exactly when it, with some values of those bits, was in
// it before.
func TestExistsAll(t *testing.T) {
	fx := newBruteFixture(t, 30, 4)
	m := fx.m
	var bs []Bits
	var lvs []int32
	for _, ref := range []string{"reg0[0]", "ct_state[0]", "reg0[1]"} {
		b, err := m.Space().FieldBits(ref)
		if err != nil {
			t.Fatal(err)
		}
		bs, lvs = append(bs, b), append(lvs, b.f.level(b.Ofs))
	}
	changed := 0
	for _, bc := range fx.cases {
		got := m.ExistsAll(bc.set, bs)
		if got != bc.set {
			changed++
		}
		for i, a := range fx.assigns {
			want := false
			for v := 0; v < 1<<len(lvs) && !want; v++ {
				c := append([]bool(nil), a...)
				for j, lv := range lvs {
					c[lv] = v>>j&1 == 1
				}
				want = m.contains(bc.set, c)
			}
			if m.contains(got, a) != want {
				t.Fatalf("%s: ExistsAll on %s: %v, want %v", bc.text, fx.packets[i], !want, want)
			}
		}
	}
	if changed == 0 {
		t.Fatal("no set depends on the forgotten bits: the test proves nothing")
	}
}
