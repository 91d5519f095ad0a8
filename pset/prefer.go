package pset

import (
	"fmt"
	"math/big"

	"github.com/aclc/aclc/acl/expr"
)

// This file holds witnesses with preferred values: the packet of a set
// nearest to a packet the caller has in mind (a port's own MAC and
// addresses, a sensible protocol), so that a witness is a packet someone
// could really send rather than the set's smallest.

// A Preference steers WitnessPreferring: either a set whose packets are
// preferred (PreferIn) or a value a root field should be nearest to
// (Space.PreferValue).
type Preference struct {
	in    Set
	field *field // nil for a PreferIn
	value *big.Int
}

// PreferIn prefers the packets of p: where the set holds some, the
// witness is one of them.
func PreferIn(p Set) Preference { return Preference{in: p} }

// PreferValue prefers integer root field name (eth.dst, ip4.src, tcp.dst)
// nearest v: v itself where the set allows it, else the value that agrees
// with v on the most significant bits (bit by bit from the top, each bit
// v's where the set allows it), so that an address outside a forced
// prefix keeps its host bits. A field the set's packets do not all have
// (ip4.src where some are not IPv4: its prerequisites) is left alone:
// a witness never gives a value to a field its packet lacks.
func (sp *Space) PreferValue(name string, v *big.Int) (Preference, error) {
	f := sp.byName[name]
	if f == nil {
		return Preference{}, fmt.Errorf("pset: no root field %q in the space", name)
	}
	if f.ports != nil {
		return Preference{}, fmt.Errorf("pset: %s is a string field", name)
	}
	if v.Sign() < 0 || v.BitLen() > f.width {
		return Preference{}, fmt.Errorf("pset: %v does not fit %s's %d bits", v, name, f.width)
	}
	return Preference{field: f, value: new(big.Int).Set(v)}, nil
}

// WitnessPreferring returns a packet of s as Witness does, steered by
// prefs in order of importance: each preference narrows the packets still
// in question as far as they allow it (a PreferIn to its set's packets
// where there are some; a PreferValue fixes its field to the value
// nearest its own), so an earlier preference is never given up for a
// later one. The bits no preference fixed take Witness's defaults.
func (m *Manager) WitnessPreferring(s Set, prefs ...Preference) (Packet, bool) {
	if s == Empty {
		return Packet{}, false
	}
	for _, p := range prefs {
		if p.field == nil {
			if x := m.And(s, p.in); x != Empty {
				s = x
			}
			continue
		}
		if !m.Subset(s, m.prereqs(p.field.sym)) {
			continue // some packets lack the field
		}
		if x := m.And(s, m.cmpBits(bitsOf{p.field, 0, p.field.width}, expr.Eq, p.value, nil)); x != Empty {
			s = x // the value itself: one operation, not one per bit
			continue
		}
		for i := p.field.width - 1; i >= 0; i-- {
			lv := p.field.level(i)
			want, other := m.mk(lv, Empty, all), m.mk(lv, all, Empty)
			if p.value.Bit(i) == 0 {
				want, other = other, want
			}
			if x := m.And(s, want); x != Empty {
				s = x
			} else {
				s = m.And(s, other)
			}
		}
	}
	return m.Witness(s)
}
