package lint

import (
	"math/rand/v2"
	"slices"
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
		slices.SortFunc(g.vals, cmpU128)
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

// TestBitSlices checks that a posting's bit slices answer compatible (a
// plain constraint) and admitting as its mask groups do.
func TestBitSlices(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		n := 1 + r.IntN(300)
		x := &aclIndex{words: (n + 63) / 64}
		p := x.posting(0)
		var ps []posted
		masks := make([]u128, 2+r.IntN(20))
		for k := range masks {
			masks[k] = u128{r.Uint64() & 0xffffffff}
		}
		for i := range n {
			if r.IntN(4) == 0 {
				continue // unconstrained
			}
			m := masks[r.IntN(len(masks))]
			ps = append(ps, posted{mask: m, val: u128{r.Uint64() & m[0] & 0xff0f}, i: int32(i)})
			p.free.set(i)
		}
		pl := &postedList{list: ps, groups: map[groupKey]int32{}, byVal: map[u128]int32{}}
		x.post(pl)
		constrained := p.free
		p.free = x.newSet()
		p.free.fill(n)
		for w := range p.free {
			p.free[w] &^= constrained[w]
		}
		p.slice(x, pl, 0)
		if len(p.bits) == 0 {
			t.Fatal("no bit slices")
		}
		for range 20 {
			f := fc{mask: u128{r.Uint64() & 0xffffffff}, val: u128{r.Uint64() & 0xff0f}}
			f.val = f.val.and(f.mask)
			w0 := r.IntN(x.words)
			got, want := newBitset(x.words-w0), newBitset(x.words-w0)
			p.compatible(got, f, w0)
			bits := p.bits
			p.bits = nil
			p.compatible(want, f, w0)
			p.bits = bits
			fill := newBitset(len(want))
			fill.fill(n - w0*64)
			got.and(fill) // the slices' answer sets the bits past n too
			if !slices.Equal(got, want) {
				t.Fatalf("compatible %x/%x from word %d: slices give %x, groups %x", f.val, f.mask, w0, got, want)
			}
			p.admitting(got, f.val, noName, w0)
			p.bits = nil
			p.admitting(want, f.val, noName, w0)
			p.bits = bits
			got.and(fill)
			if !slices.Equal(got, want) {
				t.Fatalf("admitting %x from word %d: slices give %x, groups %x", f.val, w0, got, want)
			}
		}
	}
}

// TestWithout checks an index without some entries (layer.reps) against
// an index built from the entries left: the same candidates, in the same
// order, above every priority.
func TestWithout(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 200 {
		list := make([]*inst, 1+r.IntN(150))
		sets := map[*inst][]cube{}
		for i := range list {
			list[i] = &inst{prio: 100 - r.IntN(20)}
			sets[list[i]] = randPortSet(r)
		}
		slices.SortStableFunc(list, func(a, b *inst) int { return b.prio - a.prio })
		cubes := func(in *inst) ([]cube, cube) { return sets[in], hull(sets[in]) }
		var drop []int
		var kept []*inst
		for i, in := range list {
			if r.IntN(3) == 0 {
				drop = append(drop, i)
			} else {
				kept = append(kept, in)
			}
		}
		without, fresh := newACLIndex(list, cubes).without(drop), newACLIndex(kept, cubes)
		for range 20 {
			cs := randPortSet(r)
			var buf qbuf
			q := queryOf(&buf, cs, hull(cs))
			p := 100 - r.IntN(22)
			var got, want []*inst
			without.candidates(q, 0, without.above(p), func(_ int, in *inst) bool { got = append(got, in); return true })
			fresh.candidates(q, 0, fresh.above(p), func(_ int, in *inst) bool { want = append(want, in); return true })
			if !slices.Equal(got, want) {
				t.Fatalf("above %d: without gives %d candidates, a fresh index %d", p, len(got), len(want))
			}
		}
	}
}
