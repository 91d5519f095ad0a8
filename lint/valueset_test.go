package lint

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/aclc/aclc/nbschema/nbdb"
)

// Cubes over three 4-bit fields, small enough to enumerate every packet.
const vsFields, vsBits = 3, 4

func randFC(r *rand.Rand, id fieldID, sets bool) fc {
	all := uint64(1)<<vsBits - 1
	m := r.Uint64() & all
	if r.IntN(3) == 0 {
		m = 0
	}
	f := fc{id: id, mask: u128{m, 0}, val: u128{r.Uint64() & m, 0}}
	if sets && r.IntN(2) == 0 {
		sm := r.Uint64() & all &^ m
		if sm == 0 {
			f.mask = u128{all, 0} // no field is constrained on no bits
			return f
		}
		var vals []u128
		for i := 0; i < 1+r.IntN(6); i++ {
			vals = append(vals, u128{r.Uint64() & sm, 0})
		}
		s, one, _ := newVset(u128{sm, 0}, vals)
		if s == nil {
			f.mask, f.val = f.mask.or(u128{sm, 0}), f.val.or(one)
		} else {
			f.set = s
		}
	}
	if f.mask.zero() && f.set == nil {
		f.mask = u128{all, 0}
	}
	return f
}

func randCube(r *rand.Rand, sets bool) cube {
	var c cube
	for id := fieldID(1); id <= vsFields; id++ {
		if r.IntN(3) != 0 {
			c = append(c, randFC(r, id, sets))
		}
	}
	return c
}

// points returns the packets of c, each field's value packed in 4 bits.
func points(c cube) map[int]bool {
	out := map[int]bool{}
	for p := 0; p < 1<<(vsFields*vsBits); p++ {
		in := true
		for _, f := range c {
			x := u128{uint64(p>>(vsBits*(int(f.id)-1))) & (1<<vsBits - 1), 0}
			if x.and(f.mask) != f.val || f.set != nil && !f.set.has(x.and(f.set.mask)) {
				in = false
				break
			}
		}
		if in {
			out[p] = true
		}
	}
	return out
}

// expand returns the cubes c stands for, one per value of its sets.
func expand(c cube) []cube {
	out := []cube{{}}
	for _, f := range c {
		var next []cube
		for _, x := range out {
			if f.set == nil {
				next = append(next, append(slices.Clone(x), f))
				continue
			}
			for _, v := range f.set.vals {
				next = append(next, append(slices.Clone(x), f.elem(v)))
			}
		}
		out = next
	}
	return out
}

// TestValueSetAlgebra checks and, meets, within and sharp on cubes with
// set-valued fields against the packets they match.
func TestValueSetAlgebra(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 3000; n++ {
		c, d := randCube(r, true), randCube(r, true)
		pc, pd := points(c), points(d)
		meet := false
		for p := range pc {
			if pd[p] {
				meet = true
			}
		}
		if got := c.meets(d); got != meet {
			t.Fatalf("%v meets %v: got %v, want %v", c, d, got, meet)
		}
		and, ok := c.and(d)
		if ok != meet {
			t.Fatalf("%v and %v: ok %v, want %v", c, d, ok, meet)
		}
		if ok {
			pa := points(and)
			for p := range pc {
				if pa[p] != pd[p] {
					t.Fatalf("%v and %v = %v: wrong at %x", c, d, and, p)
				}
			}
			if len(pa) > len(pc) {
				t.Fatalf("%v and %v = %v: too large", c, d, and)
			}
		}
		sub := true
		for p := range pc {
			if !pd[p] {
				sub = false
			}
		}
		if c.within(d) && !sub {
			t.Fatalf("%v within %v: not so", c, d)
		}
		// within is exact unless d's set bits are not fixed by c's values.
		exact := true
		for _, f := range d {
			if f.set != nil {
				g, ok := c.field(f.id)
				if !ok || !g.mask.or(setMask(g)).and(f.set.mask).eq(f.set.mask) {
					exact = false
				}
			}
		}
		if exact && c.within(d) != sub {
			t.Fatalf("%v within %v: got %v, want %v", c, d, c.within(d), sub)
		}
		if !meet {
			continue
		}
		pieces, ok := sharp(c, d)
		if !ok {
			continue
		}
		seen := map[int]bool{}
		for _, pc := range pieces {
			for p := range points(pc) {
				if seen[p] {
					t.Fatalf("%v minus %v: pieces overlap at %x", c, d, p)
				}
				seen[p] = true
			}
		}
		for p := range pc {
			if seen[p] == pd[p] {
				t.Fatalf("%v minus %v = %v: wrong at %x", c, d, pieces, p)
			}
		}
		if len(seen) > len(pc) {
			t.Fatalf("%v minus %v = %v: outside c", c, d, pieces)
		}
	}
}

func setMask(f *fc) u128 {
	if f.set == nil {
		return u128{}
	}
	return f.set.mask
}

func (a u128) eq(b u128) bool { return a == b }

// TestCoverValues checks that a cube with a set-valued field is proven
// covered exactly when the cubes it stands for are, one by one, with
// each ACL's cubes one per value too, and by the same ACLs.
func TestCoverValues(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for n := 0; n < 3000; n++ {
		c := randCube(r, true)
		if !c.hasSet() {
			continue
		}
		var refs, flat []cubeRef
		for i := 0; i < 1+r.IntN(6); i++ {
			in := &inst{a: &aclInfo{acl: &nbdb.ACL{Priority: 100 - i}}, prio: 100 - i}
			for j := 0; j < 1+r.IntN(2); j++ {
				d := randCube(r, true)
				if !c.meets(d) {
					continue
				}
				refs = append(refs, cubeRef{d, in})
				for _, e := range expand(d) {
					flat = append(flat, cubeRef{e, in})
				}
			}
		}
		got, gotOK, _ := coverValues(c, refs)
		var want []*inst
		wantOK := true
		for _, e := range expand(c) {
			meeting := meetingRefs(e, flat)
			i := slices.IndexFunc(meeting, func(r cubeRef) bool { return e.within(r.c) })
			if i >= 0 {
				want = addUsers(want, []*inst{meeting[i].in})
				continue
			}
			u, ok, _ := coverByUnion(e, meeting)
			if !ok {
				wantOK = false
				break
			}
			want = addUsers(want, u)
		}
		if gotOK != wantOK {
			t.Fatalf("cover %v by %v: got %v, want %v", c, refs, gotOK, wantOK)
		}
		if !wantOK {
			continue
		}
		slices.SortFunc(got, func(x, y *inst) int { return y.a.acl.Priority - x.a.acl.Priority })
		slices.SortFunc(want, func(x, y *inst) int { return y.a.acl.Priority - x.a.acl.Priority })
		if !slices.Equal(got, want) {
			t.Fatalf("cover %v by %v: users differ", c, refs)
		}
	}
}

// TestNewVsetIndexes checks newVset's three regimes (linear, sorted,
// map): the values distinct in the order first seen, and has true for
// exactly them, on random lists of 2 to 200 values with duplicates.
func TestNewVsetIndexes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	mask := u128{0xffff, 0}
	for n := 2; n <= 200; n++ {
		vals := make([]u128, n)
		for i := range vals {
			vals[i] = u128{uint64(r.IntN(n + n/2)), 0}
		}
		var want []u128
		for _, v := range vals {
			if !slices.Contains(want, v) {
				want = append(want, v)
			}
		}
		s, one, ok := newVset(mask, slices.Clone(vals))
		if !ok {
			t.Fatalf("%d values: not ok", n)
		}
		if len(want) == 1 {
			if s != nil || one != want[0] {
				t.Fatalf("%d values: want the single value %v", n, want[0])
			}
			continue
		}
		if !slices.Equal(s.vals, want) {
			t.Fatalf("%d values: vals %v, want %v", n, s.vals, want)
		}
		if (s.idx != nil) != (len(want) > smallSet) {
			t.Fatalf("%d values (%d distinct): indexed %v", n, len(want), s.idx != nil)
		}
		for v := range uint64(n + n/2 + 2) {
			if got := s.has(u128{v, 0}); got != slices.Contains(want, u128{v, 0}) {
				t.Fatalf("%d values: has(%d) = %v", n, v, got)
			}
		}
	}
}

// TestBitMeetsScanAndMap checks bitMeets on two set-valued constraints
// against the packets they match, comparing the sets' values pair by pair
// and through a map (as for more than maxPairScan pairs).
func TestBitMeetsScanAndMap(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	defer func(n int) { maxPairScan = n }(maxPairScan)
	both := 0
	for range 2000 {
		x, y := randFC(r, 1, true), randFC(r, 1, true)
		if x.set != nil && y.set != nil && x.set.mask != y.set.mask {
			both++
		}
		meet := false
		py := points(cube{y})
		for p := range points(cube{x}) {
			meet = meet || py[p]
		}
		for _, n := range []int{1 << 30, 0} {
			maxPairScan = n
			if got := bitMeets(x, y); got != meet {
				t.Fatalf("maxPairScan %d: bitMeets(%v, %v) = %v, want %v", n, x, y, got, meet)
			}
		}
	}
	if both < 100 {
		t.Fatalf("only %d pairs of sets on different bits", both)
	}
}
