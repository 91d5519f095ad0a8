package lint

import (
	"math/rand/v2"
	"testing"
)

// TestAgreeing checks maskGroup.agreeing against a scan: every value that
// agrees with want on common lies in the range it returns.
func TestAgreeing(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	randBits := func(width int) u128 {
		var a u128
		for i := range width {
			if r.IntN(2) == 1 {
				a[i/64] |= 1 << (i % 64)
			}
		}
		return a
	}
	for range 2000 {
		width := []int{8, 16, 32, 70, 128}[r.IntN(5)]
		mask := randBits(width)
		if r.IntN(2) == 0 {
			mask = below(randBits(width)) // a contiguous mask
		}
		g := &maskGroup{mask: mask}
		seen := map[u128]bool{}
		for range r.IntN(40) {
			v := randBits(width).and(mask)
			if !seen[v] {
				seen[v] = true
				g.vals = append(g.vals, v)
				g.sets = append(g.sets, nil)
			}
		}
		g.seal()
		common := mask.and(randBits(width))
		if r.IntN(2) == 0 {
			common = mask.andNot(below(randBits(width)))
		}
		want := randBits(width).and(common)
		if len(g.vals) > 0 && r.IntN(2) == 0 {
			want = g.vals[r.IntN(len(g.vals))].and(common)
		}
		lo, hi := g.agreeing(common, want)
		for j, v := range g.vals {
			if v.and(common) == want && (j < lo || j >= hi) {
				t.Fatalf("mask %x common %x want %x: value %x (index %d) outside [%d, %d)", mask, common, want, v, j, lo, hi)
			}
		}
	}
}
