package pset

import (
	"math/big"

	"github.com/aclc/aclc/acl/expr"
)

// This file builds the sets of one test on the bits of one field, the
// atoms every conversion is made of. They are over all assignments (port
// codes outside the domain included); the conversion restricts its result
// to the space.

// bitsOf are bits ofs..ofs+n-1 of a root field.
type bitsOf struct {
	f      *field
	ofs, n int
}

// cmpBits returns the set where (b & mask) op val, b and val unsigned
// numbers of b.n bits (mask nil: every bit), as acl/expr's Eval compares
// a field with a constant: val is truncated to the width and to the mask.
func (m *Manager) cmpBits(b bitsOf, o expr.Relop, val, mask *big.Int) Set {
	bit := func(x *big.Int, i int) bool { return x != nil && x.Bit(i) == 1 }
	in := func(i int) bool { return mask == nil || bit(mask, i) }
	switch o {
	case expr.Eq, expr.Ne:
		r := all
		for i := 0; i < b.n; i++ { // least significant first: bottom up
			if !in(i) {
				continue
			}
			lv := b.f.level(b.ofs + i)
			if bit(val, i) {
				r = m.mk(lv, Empty, r)
			} else {
				r = m.mk(lv, r, Empty)
			}
		}
		if o == expr.Ne {
			return m.apply(opDiff, all, r)
		}
		return r
	}
	// The comparison of the bits below i, given those above are equal,
	// built from the least significant bit up; equal overall is true
	// for <= and >=.
	r := Empty
	if o == expr.Le || o == expr.Ge {
		r = all
	}
	less := o == expr.Lt || o == expr.Le
	for i := 0; i < b.n; i++ {
		if !in(i) {
			continue // the masked bit is 0 in both (val is masked too)
		}
		lv := b.f.level(b.ofs + i)
		v := bit(val, i)
		switch {
		case v && less: // 0 < 1: true; 1: equal so far
			r = m.mk(lv, all, r)
		case !v && less: // 0: equal so far; 1 > 0: false
			r = m.mk(lv, r, Empty)
		case v && !less: // 0 < 1: false
			r = m.mk(lv, Empty, r)
		default: // 1 > 0: true
			r = m.mk(lv, r, all)
		}
	}
	return r
}

// atMost returns the set where string field f's code is at most max.
func (m *Manager) atMost(f *field, max uint64) Set {
	return m.cmpBits(bitsOf{f, 0, f.width}, expr.Le, new(big.Int).SetUint64(max), nil)
}

// portIs returns the set where string field f is the port of code c.
func (m *Manager) portIs(f *field, c uint64) Set {
	return m.cmpBits(bitsOf{f, 0, f.width}, expr.Eq, new(big.Int).SetUint64(c), nil)
}

// DomainPorts returns the packets of the space whose inport and outport
// are ports of the domain, not the other port: on a datapath whose every
// port the domain lists (a logical switch's), the packets it can see.
// With an empty domain it is All (the other port is then every port).
func (m *Manager) DomainPorts() Set {
	r := m.univ
	for _, name := range []string{"inport", "outport"} {
		if f := m.space.byName[name]; f != nil && len(f.ports) > 0 {
			r = m.And(r, m.atMost(f, uint64(len(f.ports)-1)))
		}
	}
	return r
}
