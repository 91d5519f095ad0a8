package pset

import (
	"math/big"

	"github.com/aclc/aclc/acl/expr"
)

// Witness returns one packet of s as field values (ok false when s is
// empty): each bit, in variable order, takes its default wherever s
// allows it — 0, so inport and outport are the domain's first port, and
// an IP packet's ip.ttl 64 — so the witness is the packet of s nearest
// to the defaults.
func (m *Manager) Witness(s Set) (w Packet, ok bool) {
	if s == Empty {
		return Packet{}, false
	}
	assign := m.walk(s, make([]bool, m.levels))
	// A second walk that keeps the first's choices where it can gives
	// IP packets their defaults (a TTL): only now is it known to be IP,
	// and a non-IP packet with a TTL would not be a packet ovn-trace reads.
	if et := m.space.byName["eth.type"]; et != nil {
		if v := et.value(assign); v.IsUint64() && (v.Uint64() == 0x800 || v.Uint64() == 0x86dd) {
			for name, d := range ipDefaults {
				if f := m.space.byName[name]; f != nil {
					for i := 0; i < f.width; i++ {
						assign[f.level(i)] = d>>uint(i)&1 == 1
					}
				}
			}
			assign = m.walk(s, assign)
		}
	}
	return Packet{space: m.space, assign: assign}, true
}

// ipDefaults are a witness's values of the fields of an IP packet its set
// leaves free, where 0 would not be a sensible packet.
var ipDefaults = map[string]uint64{"ip.ttl": 64}

// walk returns the assignment of s nearest to assign in variable order:
// down from s, the branch assign prefers where it is not empty.
func (m *Manager) walk(s Set, assign []bool) []bool {
	for x := s; x > all; {
		n := m.nodes[x]
		want := assign[n.level]
		next := n.lo
		if want {
			next = n.hi
		}
		if next == Empty { // the other branch: a node is never empty below
			want = !want
			next = n.lo
			if want {
				next = n.hi
			}
		}
		assign[n.level] = want
		x = next
	}
	return assign
}

// Packet is one assignment of every variable of a space: a packet.
type Packet struct {
	space  *Space
	assign []bool
}

// Port returns the port a string field (inport, outport) names in p: a
// port of the domain or the space's other port.
func (p Packet) Port(name string) string {
	f := p.space.byName[name]
	c := f.value(p.assign)
	if c.IsUint64() && c.Uint64() < uint64(len(f.ports)) {
		return f.ports[c.Uint64()]
	}
	return p.space.other
}

// Value returns the value of integer root field name in p.
func (p Packet) Value(name string) *big.Int { return p.space.byName[name].value(p.assign) }

// Microflow returns p as a Microflow of the space's dialect: every root
// field set to its value, inport to its port and the other string fields
// (outport, remote_outport) to theirs where they name a port of the
// domain. Its String is an ovn-trace microflow (the non-zero fields, in
// name order) that ParseMicroflow reads back: ovn-trace needs the inport,
// and an outport that names no port is a packet's before the L2 lookup
// sets it (ovn-trace gives an outport the microflow names to the stages
// before the L2 lookup, which a packet as it enters never has).
func (p Packet) Microflow() *expr.Microflow {
	mf := p.space.dialect.NewMicroflow()
	for _, f := range p.space.fields {
		var err error
		if f.ports != nil {
			if port := p.Port(f.name); f.name == "inport" || port != p.space.other {
				err = mf.Set(f.name, port)
			}
		} else if v := f.value(p.assign); v.Sign() != 0 {
			err = mf.Set(f.name, v)
		}
		if err != nil {
			panic("pset: the space's own field " + f.name + ": " + err.Error())
		}
	}
	return mf
}

// String returns p's microflow as ovn-trace reads it.
func (p Packet) String() string { return p.Microflow().String() }

// Contains reports whether the packet mf (its fields' values; inport and
// outport the other port when they name no port of the domain) is in s.
func (m *Manager) Contains(s Set, mf *expr.Microflow) bool {
	return m.contains(s, m.assignmentOf(mf))
}

// contains follows assign from s down to a terminal.
func (m *Manager) contains(s Set, assign []bool) bool {
	for s > all {
		n := m.nodes[s]
		if assign[n.level] {
			s = n.hi
		} else {
			s = n.lo
		}
	}
	return s == all
}

// assignmentOf returns the variables of the packet mf.
func (m *Manager) assignmentOf(mf *expr.Microflow) []bool {
	assign := make([]bool, m.levels)
	for _, f := range m.space.fields {
		var v *big.Int
		if f.ports != nil {
			name, _ := mf.Get(f.name)
			c, ok := f.code[name.(string)]
			if !ok {
				c = uint64(len(f.ports))
			}
			v = new(big.Int).SetUint64(c)
		} else {
			x, err := mf.Get(f.name)
			if err != nil {
				panic("pset: the space's own field " + f.name + ": " + err.Error())
			}
			v = x.(*big.Int)
		}
		for i := 0; i < f.width; i++ {
			assign[f.level(i)] = v.Bit(i) == 1
		}
	}
	return assign
}
