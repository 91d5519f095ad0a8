package lint

import "slices"

// This file is the set-valued field constraint: `ip4.src == $as' with a
// thousand addresses is one constraint "ip4.src is one of these values",
// not a thousand cubes. Every operation on it means what the same
// operation means on the cubes it stands for (one per value, the value's
// bits fixed), so the rules see the same sets of packets; only the work is
// no longer the product of the sets' sizes.

// vset constrains the bits of mask of a root field to one of vals.
// A vset is never modified once built, and shared between cubes (every ACL
// naming an address set on one field shares one).
type vset struct {
	mask u128
	vals []u128 // distinct, each within mask, at least two, in the order first seen
	idx  *vidx  // vals indexed, when there are more than smallSet
	cm   u128   // the bits of mask on which all vals agree
	cv   u128   // their value
}

// smallSet is the largest vset searched without an index.
const smallSet = 8

// sortedSet is the largest vset indexed by its sorted values (searched
// by bisection) rather than a map: most sets are an address set or two,
// where sorting a copy costs less than building a map and takes half its
// bytes.
const sortedSet = 64

// vidx indexes a vset's values: a map, or the values sorted.
type vidx struct {
	m      map[u128]struct{}
	sorted []u128
}

func (x *vidx) has(v u128) bool {
	if x.m != nil {
		_, ok := x.m[v]
		return ok
	}
	_, ok := slices.BinarySearchFunc(x.sorted, v, cmpU128)
	return ok
}

// newVset returns the constraint "the field's bits of mask are one of
// vals" (each already within mask): nil, false when vals is empty; a
// plain constraint for one value. Duplicates are dropped.
func newVset(mask u128, vals []u128) (*vset, u128, bool) {
	switch len(vals) {
	case 0:
		return nil, u128{}, false
	case 1:
		return nil, vals[0], true
	}
	s := &vset{mask: mask}
	switch {
	case len(vals) > sortedSet:
		m := make(map[u128]struct{}, len(vals))
		s.idx = &vidx{m: m}
		s.vals = make([]u128, 0, len(vals))
		for _, v := range vals {
			if _, dup := m[v]; !dup {
				m[v] = struct{}{}
				s.vals = append(s.vals, v)
			}
		}
	case len(vals) > smallSet:
		sorted := slices.Clone(vals)
		slices.SortFunc(sorted, cmpU128)
		sorted = slices.Compact(sorted)
		s.idx = &vidx{sorted: sorted}
		if len(sorted) == len(vals) {
			s.vals = slices.Clone(vals)
			break
		}
		// The first of each value, in order.
		seen := make([]bool, len(sorted))
		s.vals = make([]u128, 0, len(sorted))
		for _, v := range vals {
			if j, _ := slices.BinarySearchFunc(sorted, v, cmpU128); !seen[j] {
				seen[j] = true
				s.vals = append(s.vals, v)
			}
		}
	default:
		s.vals = make([]u128, 0, len(vals))
		for _, v := range vals {
			if !s.hasLinear(v) {
				s.vals = append(s.vals, v)
			}
		}
	}
	if len(s.vals) == 1 {
		return nil, s.vals[0], true
	}
	if len(s.vals) <= smallSet {
		s.idx = nil
	}
	s.cm = mask
	for _, v := range s.vals[1:] {
		s.cm = s.cm.andNot(v.xor(s.vals[0]))
	}
	s.cv = s.vals[0].and(s.cm)
	return s, u128{}, true
}

func (a u128) xor(b u128) u128    { return u128{a[0] ^ b[0], a[1] ^ b[1]} }
func (a u128) andNot(b u128) u128 { return u128{a[0] &^ b[0], a[1] &^ b[1]} }

func (s *vset) hasLinear(v u128) bool {
	for _, x := range s.vals {
		if x == v {
			return true
		}
	}
	return false
}

// has reports whether v (within s.mask) is one of the values.
func (s *vset) has(v u128) bool {
	if s.idx != nil {
		return s.idx.has(v)
	}
	return s.hasLinear(v)
}

// setFC returns the constraint of field id: bits mask fixed to val, and
// the bits of s.mask one of s's values (s may be nil). The values that
// contradict val are dropped; false when none is left.
func setFC(id fieldID, mask, val u128, s *vset) (fc, bool) {
	if s == nil {
		return fc{id: id, val: val, mask: mask}, true
	}
	common := mask.and(s.mask)
	if common.zero() {
		return fc{id: id, val: val, mask: mask, set: s}, true
	}
	r, one, ok := s.restrict(common, val.and(common))
	if !ok {
		return fc{}, false
	}
	mask, val = mask.andNot(s.mask), val.andNot(s.mask)
	if r == nil {
		return fc{id: id, val: val.or(one), mask: mask.or(s.mask)}, true
	}
	return fc{id: id, val: val, mask: mask, set: r}, true
}

// restrict returns the values v with v&m == want (m within s.mask): s
// itself when all are, a new set, or the single value; false when none
// is.
func (s *vset) restrict(m, want u128) (*vset, u128, bool) {
	if m == s.mask && s.idx != nil {
		if s.has(want) {
			return nil, want, true
		}
		return nil, u128{}, false
	}
	var keep []u128
	for _, v := range s.vals {
		if v.and(m) == want {
			keep = append(keep, v)
		}
	}
	if len(keep) == len(s.vals) {
		return s, u128{}, true
	}
	r, one, ok := newVset(s.mask, keep)
	return r, one, ok
}

// withValues is setFC with the set of vals under setMask.
func withValues(id fieldID, mask, val, setMask u128, vals []u128) (fc, bool) {
	s, one, ok := newVset(setMask, vals)
	if !ok {
		return fc{}, false
	}
	if s == nil {
		if !agree(val, mask.and(setMask), one) {
			return fc{}, false
		}
		return fc{id: id, val: val.or(one), mask: mask.or(setMask)}, true
	}
	return setFC(id, mask, val, s)
}

// fixed returns the bits f fixes for every value it admits.
func (f fc) fixed() (mask, val u128) {
	if f.set == nil {
		return f.mask, f.val
	}
	return f.mask.or(f.set.cm), f.val.or(f.set.cv)
}

// elem returns f with its set replaced by the one value v.
func (f fc) elem(v u128) fc {
	return fc{id: f.id, val: f.val.or(v), mask: f.mask.or(f.set.mask)}
}

// withSet returns f with its set replaced by the values vals (of f.set),
// or false when vals is empty.
func (f fc) withSet(vals []u128) (fc, bool) {
	if len(vals) == len(f.set.vals) {
		return f, true
	}
	s, one, ok := newVset(f.set.mask, vals)
	if !ok {
		return fc{}, false
	}
	if s == nil {
		return f.elem(one), true
	}
	return fc{id: f.id, val: f.val, mask: f.mask, set: s}, true
}

// bitAnd is the conjunction of two constraints on one bit field.
func bitAnd(x, y fc) (fc, bool) {
	both := x.mask.and(y.mask)
	if x.val.and(both) != y.val.and(both) {
		return fc{}, false
	}
	mask, val := x.mask.or(y.mask), x.val.or(y.val)
	switch {
	case x.set == nil && y.set == nil:
		return fc{id: x.id, val: val, mask: mask}, true
	case x.set == nil:
		x, y = y, x
	}
	if y.set == nil || y.set == x.set {
		return setFC(x.id, mask, val, x.set)
	}
	a, b := x.set, y.set
	if a.mask == b.mask {
		if len(b.vals) < len(a.vals) {
			a, b = b, a
		}
		var keep []u128
		for _, v := range a.vals {
			if b.has(v) {
				keep = append(keep, v)
			}
		}
		return withValues(x.id, mask, val, a.mask, keep)
	}
	// Different masks: every pair of values that agree where both masks
	// are set.
	common := a.mask.and(b.mask)
	byCommon := map[u128][]u128{}
	for _, w := range b.vals {
		k := w.and(common)
		byCommon[k] = append(byCommon[k], w)
	}
	var keep []u128
	for _, v := range a.vals {
		for _, w := range byCommon[v.and(common)] {
			keep = append(keep, v.or(w))
		}
	}
	return withValues(x.id, mask, val, a.mask.or(b.mask), keep)
}

// bitMeets reports whether two constraints on one bit field admit a
// common value.
func bitMeets(x, y fc) bool {
	both := x.mask.and(y.mask)
	if x.val.and(both) != y.val.and(both) {
		return false
	}
	switch {
	case x.set == nil && y.set == nil:
		return true
	case x.set == nil:
		x, y = y, x
	}
	if y.set == nil {
		return x.set.anyAgree(y.mask, y.val)
	}
	if x.set == y.set {
		return true
	}
	a, b := x.set, y.set
	if m := a.cm.and(b.cm); a.cv.and(m) != b.cv.and(m) {
		return false // on the bits each set's values all agree on, the sets differ
	}
	if a.mask == b.mask { // the fixed bits of each side lie outside the other's set
		if len(b.vals) < len(a.vals) {
			a, b = b, a
		}
		for _, v := range a.vals {
			if b.has(v) {
				return true
			}
		}
		return false
	}
	// A value of each set that agrees with the other side's fixed bits,
	// the two agreeing where both masks are set.
	common := a.mask.and(b.mask)
	if len(a.vals)*len(b.vals) <= maxPairScan {
		for _, w := range b.vals {
			if !agree(w, x.mask.and(b.mask), x.val) {
				continue
			}
			wc := w.and(common)
			for _, v := range a.vals {
				if v.and(common) == wc && agree(v, y.mask.and(a.mask), y.val) {
					return true
				}
			}
		}
		return false
	}
	ws := map[u128]bool{}
	for _, w := range b.vals {
		if agree(w, x.mask.and(b.mask), x.val) {
			ws[w.and(common)] = true
		}
	}
	for _, v := range a.vals {
		if agree(v, y.mask.and(a.mask), y.val) && ws[v.and(common)] {
			return true
		}
	}
	return false
}

// maxPairScan is the most pairs of values bitMeets compares one by one
// rather than through a map of one side's (two address sets of ten: a
// scan of 100 pairs costs less than building the map). A variable for
// the tests.
var maxPairScan = 256

// agree reports whether v and w are equal on the bits of m.
func agree(v, m, w u128) bool { return v.and(m) == w.and(m) }

// anyAgree reports whether a value of s agrees with val on the bits of
// mask.
func (s *vset) anyAgree(mask, val u128) bool {
	m := mask.and(s.mask)
	if m.zero() {
		return true
	}
	want := val.and(m)
	if m == s.mask && s.idx != nil {
		return s.has(want)
	}
	for _, v := range s.vals {
		if v.and(m) == want {
			return true
		}
	}
	return false
}

// bitWithin reports whether every value c admits, d admits. Where d is a
// set, a value of c must fix all of d's set bits (a cube inside the union
// of d's values but in none of them is left to the subtraction, as it
// would be with one cube per value).
func bitWithin(c, d fc) bool {
	if c.set != nil {
		if d.set == c.set {
			return c.mask.and(d.mask) == d.mask && c.val.and(d.mask) == d.val
		}
		if cm, cv := c.fixed(); d.set == nil && cm.and(d.mask) == d.mask {
			return cv.and(d.mask) == d.val
		}
		for _, v := range c.set.vals {
			if !bitWithin(c.elem(v), d) {
				return false
			}
		}
		return true
	}
	if c.mask.and(d.mask) != d.mask || c.val.and(d.mask) != d.val {
		return false
	}
	if d.set == nil {
		return true
	}
	if c.mask.and(d.set.mask) != d.set.mask {
		return false
	}
	return d.set.has(c.val.and(d.set.mask))
}

// fixes reports whether every value f admits has bit i fixed.
func (f *fc) fixes(i int) bool {
	return f.mask.bit(i) || f.set != nil && f.set.mask.bit(i)
}

// hasSet reports whether a field of c is set-valued.
func (c cube) hasSet() bool {
	return slices.ContainsFunc(c, func(f fc) bool { return f.set != nil })
}

// replace returns c with the constraint on f's field replaced by f.
func (c cube) replace(f fc) cube {
	out := slices.Clone(c)
	for i := range out {
		if out[i].id == f.id {
			out[i] = f
		}
	}
	return out
}

// withinExcept is within on every field but id.
func (c cube) withinExcept(d cube, id fieldID) bool {
	i := 0
	for _, dv := range d {
		if dv.id == id {
			continue
		}
		for i < len(c) && c[i].id < dv.id {
			i++
		}
		if i == len(c) || c[i].id != dv.id || !(cube{c[i]}).within(cube{dv}) {
			return false
		}
	}
	return true
}
