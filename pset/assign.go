package pset

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/aclc/aclc/acl/expr"
)

// This file holds the operations that model what a flow's actions do to a
// packet rather than what its match tests: forgetting some bits
// (existential quantification) and giving them a constant or another
// field's value. Symbolic execution of register loads and moves
// (package reach) is made of them.

// Bits names bits Ofs..Ofs+N-1 of an integer root field of a space: what
// an action's left-hand side (reg0[3], ct_mark.blocked, xxreg1) denotes.
type Bits struct {
	f      *field
	Ofs, N int
}

// Root returns the name of the root field the bits belong to.
func (b Bits) Root() string { return b.f.name }

// overlaps reports whether b and c share a bit.
func (b Bits) overlaps(c Bits) bool {
	return b.f == c.f && b.Ofs < c.Ofs+c.N && c.Ofs < b.Ofs+b.N
}

// BitsError says why a field reference names no bits of the space.
type BitsError struct {
	Ref    string
	Reason string
}

func (e *BitsError) Error() string { return fmt.Sprintf("pset: %s: %s", e.Ref, e.Reason) }

// FieldBits returns the bits a field reference names: a field or
// subfield of the space's dialect ("reg0", "ct_label.acl_id",
// "flags.loopback"), optionally sliced ("reg0[7]", "reg8[16..31]").
// String fields (inport, outport), predicates and fields outside the
// space are errors: their values are not bits of the space.
func (sp *Space) FieldBits(ref string) (Bits, error) {
	ref = strings.TrimSpace(ref)
	name, slice, sliced := strings.Cut(ref, "[")
	sym := sp.dialect.Symtab()[strings.TrimSpace(name)]
	if sym == nil {
		return Bits{}, &BitsError{ref, "no such field"}
	}
	if sym.IsPredicate() || sym.IsString() {
		return Bits{}, &BitsError{ref, "not an integer field"}
	}
	root, ofs := sym.Root()
	if root.PortRegister != "" {
		return Bits{}, &BitsError{ref, "the register of " + root.PortRegister + "'s tunnel key"}
	}
	f := sp.byName[root.Name]
	if f == nil || f.ports != nil {
		return Bits{}, &BitsError{ref, "field " + root.Name + " is not in the space"}
	}
	lo, n := 0, sym.Width
	if sliced {
		body, ok := strings.CutSuffix(strings.TrimSpace(slice), "]")
		if !ok {
			return Bits{}, &BitsError{ref, "bad slice"}
		}
		a, b, isRange := strings.Cut(body, "..")
		if !isRange {
			b = a
		}
		x, err1 := strconv.Atoi(strings.TrimSpace(a))
		y, err2 := strconv.Atoi(strings.TrimSpace(b))
		if err1 != nil || err2 != nil || x < 0 || y < x || y >= sym.Width {
			return Bits{}, &BitsError{ref, "bad slice"}
		}
		lo, n = x, y-x+1
	}
	return Bits{f: f, Ofs: ofs + lo, N: n}, nil
}

// Exists returns the packets that agree with a packet of s everywhere but
// on bits b: s with b forgotten (existential quantification).
func (m *Manager) Exists(s Set, b Bits) Set { return m.ExistsAll(s, []Bits{b}) }

// quantify forgets the levels lo..hi of s (inside), or every other level
// (!inside: the projection of s on lo..hi). The result is over all
// assignments (port codes outside the domain included).
func (m *Manager) quantify(s Set, lo, hi int32, inside bool) Set {
	if inside {
		return m.forget(s, func(l int32) bool { return l >= lo }, hi, false)
	}
	return m.forget(s, func(l int32) bool { return l < lo }, hi, true)
}

// forget quantifies s existentially over the levels gone reports, in one
// walk of s (the part of the diagram above the lowest forgotten level is
// copied once). gone is asked only of levels up to last; the levels after
// last are kept, or, with restGone, forgotten too (what is left of a
// non-empty rest of the diagram is then every packet).
func (m *Manager) forget(s Set, gone func(int32) bool, last int32, restGone bool) Set {
	memo := map[Set]Set{}
	var ex func(Set) Set
	ex = func(x Set) Set {
		if x <= all {
			return x
		}
		if r, ok := memo[x]; ok {
			return r
		}
		n := m.nodes[x]
		var r Set
		switch {
		case n.level > last && restGone:
			r = all
		case n.level > last:
			r = x
		case gone(n.level):
			r = m.Or(ex(n.lo), ex(n.hi))
		default:
			r = m.mk(n.level, ex(n.lo), ex(n.hi))
		}
		memo[x] = r
		return r
	}
	return ex(s)
}

// Assign returns the packets of s after the action `b = val;': bits b
// forgotten, then equal to val (truncated to b's width).
func (m *Manager) Assign(s Set, b Bits, val *big.Int) Set {
	v := new(big.Int).And(val, new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(b.N)), big.NewInt(1)))
	return m.And(m.Exists(s, b), m.cmpBits(bitsOf{b.f, b.Ofs, b.N}, expr.Eq, v, nil))
}

// Copy returns the packets of s after the move `dst = src;': dst's bits
// forgotten, then equal to src's bits as they were. dst and src must have
// the same width and must not overlap (the result of an overlapping
// move is not a function of the bits alone: an error).
func (m *Manager) Copy(s Set, dst, src Bits) (Set, error) {
	if dst.N != src.N {
		return Empty, &BitsError{fmt.Sprintf("%s[%d..%d]", dst.f.name, dst.Ofs, dst.Ofs+dst.N-1), fmt.Sprintf("a move of %d bits into %d", src.N, dst.N)}
	}
	if dst.overlaps(src) {
		return Empty, &BitsError{dst.f.name, "a move between overlapping bits"}
	}
	eq := all
	for i := 0; i < dst.N; i++ {
		d := m.mk(dst.f.level(dst.Ofs+i), Empty, all)
		c := m.mk(src.f.level(src.Ofs+i), Empty, all)
		same := m.Or(m.And(d, c), m.And(m.apply(opDiff, all, d), m.apply(opDiff, all, c)))
		eq = m.And(eq, same)
	}
	return m.And(m.Exists(s, dst), eq), nil
}

// Value returns the set where bits b equal val: the set of a test
// `b == val' without its prerequisites.
func (m *Manager) Value(b Bits, val *big.Int) Set {
	return m.And(m.cmpBits(bitsOf{b.f, b.Ofs, b.N}, expr.Eq, val, nil), m.univ)
}
