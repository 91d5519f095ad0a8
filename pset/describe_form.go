package pset

import (
	"math/big"
	"math/bits"
	"slices"
)

// This file finds a description's form: the set as a decision over
// fields (not bits), with common field constraints factored out and
// complements taken where shorter.
//
// Why the form is exact: a comparison of field f carries f's
// prerequisites (tcp.dst == 80 is tcp && tcp.dst == 80), so printing a
// test of f is only right where the packets on the way to it satisfy
// them. Sets made from matches never depend on a field where its
// prerequisites fail, and every prerequisite tests fields placed before
// the field (eth.type and ip.proto come first), so a decision that reaches
// a test of f has already restricted the packets to f's prerequisites.
// Describe checks the result anyway.

// formStyle selects the devices a form may use.
type formStyle struct {
	neg  bool // !(complement) where shorter
	pull bool // factor out a field constraint common to a whole set
	// negNominal: negate nominal fields and predicates too (not OVN's
	// syntax: expr.Dialect.ParseNegatedNominals).
	negNominal bool
}

// ctx is what the path to a node knows of eth.type, for names that
// depend on it (ip.proto 1 is icmp4 only for IPv4).
type ctx uint8

const (
	ctxIP4 ctx = 1 << iota // eth.type is 0x800
	ctxIP6                 // eth.type is 0x86dd
	// ctxNegated: the node is under an odd number of `!'. A conjunction
	// there keeps the constraints its later conjuncts imply: `udp &&
	// udp.dst == 53' negated is every packet but those, `udp.dst == 53'
	// negated only UDP ones.
	ctxNegated
)

type dkey struct {
	s Set
	c ctx
}

// describer builds the forms of one Describe call.
type describer struct {
	m        *Manager
	style    formStyle
	max      int64
	nodes    map[dkey]*dnode
	pos      map[dkey]*dnode
	factors  map[Set]factored
	supp     map[Set][]uint64 // support: a bit per field index
	ethType  *field
	ip4, ip6 Set // eth.type == 0x800, == 0x86dd (Empty without eth.type)
}

func newDescriber(m *Manager, style formStyle, max int64) *describer {
	d := &describer{m: m, style: style, max: max, nodes: map[dkey]*dnode{}, pos: map[dkey]*dnode{}, factors: map[Set]factored{},
		supp: map[Set][]uint64{}, ethType: m.space.byName["eth.type"]}
	if f := d.ethType; f != nil {
		d.ip4 = m.cmpBits(bitsOf{f, 0, f.width}, eqOp, big.NewInt(0x800), nil)
		d.ip6 = m.cmpBits(bitsOf{f, 0, f.width}, eqOp, big.NewInt(0x86dd), nil)
	}
	return d
}

// node returns the shortest form of s under c: s's own, or the negation
// of its complement's when that is shorter, fits the bound (a negation
// cannot be cut) and tests no nominal field (OVN's syntax allows no `!'
// over them). The negation is exact: the complement's ordinal tests
// carry prerequisites that, tested by nominal fields outside it, hold
// on the way to s.
func (d *describer) node(s Set, c ctx) *dnode {
	if s <= all {
		return constNode(s)
	}
	k := dkey{s, c}
	if n := d.nodes[k]; n != nil {
		return n
	}
	n := d.positive(s, c)
	if d.style.neg && n.size > 1 {
		if x := d.positive(d.m.apply(opDiff, all, s), c^ctxNegated); x.size < n.size && x.size <= d.max && (!x.nominal || d.style.negNominal) {
			n = notNode(x)
		}
	}
	d.nodes[k] = n
	return n
}

// positive returns s's form without negating s as a whole: its factored
// field constraints, and the rest as a disjunction over the values of its
// top field.
func (d *describer) positive(s Set, c ctx) *dnode {
	if s <= all {
		return constNode(s)
	}
	k := dkey{s, c}
	if n := d.pos[k]; n != nil {
		return n
	}
	d.pos[k] = busyNode // a form of s made of s itself is never the shortest
	var conj []*dnode
	rest := s
	if d.style.pull {
		fc := d.factor(s)
		for _, p := range fc.pulled {
			conj = append(conj, d.values(p.f, p.vals, c))
			if p.f == d.ethType {
				c = d.ctxOf(p.vals) | c&ctxNegated
			}
		}
		rest = fc.rest
	}
	switch {
	case rest == s:
		conj = append(conj, d.alternatives(s, c))
	case rest != all:
		conj = append(conj, d.node(rest, c))
	}
	n := d.and(conj, c)
	d.pos[k] = n
	return n
}

// and is the conjunction of kids without the field constraints the
// conjuncts after them imply through their prerequisites (`tcp.dst ==
// 80' is `tcp && tcp.dst == 80': no `ip && tcp' in front), except under
// a negation (ctxNegated).
func (d *describer) and(kids []*dnode, c ctx) *dnode {
	implied := all
	var keep []*dnode
	for i := len(kids) - 1; i >= 0; i-- {
		k := kids[i]
		if c&ctxNegated == 0 && k.fieldVals != Empty && i < len(kids)-1 && d.m.Subset(implied, k.fieldVals) {
			continue
		}
		implied = d.m.And(implied, d.pre(k))
		keep = append(keep, k)
	}
	slices.Reverse(keep)
	n := andNode(keep)
	if n.op == dAnd {
		n.pre, n.hasPre = implied, true
	}
	return n
}

// or is the disjunction of kids.
func (d *describer) or(kids []*dnode) *dnode {
	n := orNode(kids)
	if n.op == dOr {
		u := Empty
		for _, k := range n.kids {
			u = d.m.Or(u, d.pre(k))
		}
		n.pre, n.hasPre = u, true
	}
	return n
}

// pre returns n's pre (all when unknown).
func (d *describer) pre(n *dnode) Set {
	switch {
	case n.op == dFalse:
		return Empty
	case n.hasPre:
		return n.pre
	}
	return all
}

// branches is s as a disjunction over the value sets of its top field
// that lead to the same rest.
func (d *describer) branches(s Set, c ctx) *dnode {
	f := d.m.space.fieldAt[d.m.level(s)]
	var alts []*dnode
	for _, b := range d.m.split(s, f) {
		cc := c
		if f == d.ethType {
			cc = d.ctxOf(b.vals) | c&ctxNegated
		}
		alts = append(alts, d.and([]*dnode{d.values(f, b.vals, c), d.node(b.rest, cc)}, c))
	}
	return d.or(alts)
}

// alternatives returns the shorter of s's branches and, for the first
// field without prerequisites that has some, the values of it for which
// s holds whatever the other fields pulled out in front: `vlan.present ||
// eth.src[40]' rather than `vlan.present || (!vlan.present &&
// eth.src[40])'. The rest needs to be right only for the other values
// (restrict). One field only, and only a short constraint: each
// candidate is a description of its own.
func (d *describer) alternatives(s Set, c ctx) *dnode {
	best := d.branches(s, c)
	if !d.style.pull || best.size <= 2 {
		return best
	}
	m := d.m
	ns := m.apply(opDiff, m.univ, s)
	for _, f := range d.support(s) {
		if f.sym.Prereqs != "" || f.ports != nil {
			continue
		}
		sure := m.apply(opDiff, all, m.quantify(ns, f.first, f.end()-1, false))
		if sure == Empty {
			continue
		}
		v := d.values(f, sure, c)
		rest := m.restrict(s, m.apply(opDiff, all, sure))
		if v.size <= 2 && rest != s {
			if n := d.or([]*dnode{v, d.node(rest, c)}); n.size < best.size {
				best = n
			}
		}
		break
	}
	return best
}

// ctxOf is what eth.type values vals tell.
func (d *describer) ctxOf(vals Set) ctx {
	var c ctx
	if d.m.Subset(vals, d.ip4) {
		c |= ctxIP4
	}
	if d.m.Subset(vals, d.ip6) {
		c |= ctxIP6
	}
	return c
}

// fieldVals is a set of values of one field: a set testing only its bits.
type fieldVals struct {
	f    *field
	vals Set
}

// factored is a set as the conjunction of constraints on single fields
// and a rest.
type factored struct {
	pulled []fieldVals
	rest   Set
}

// factor pulls out of s, field by field in the space's order, every
// constraint s is the conjunction of: s = vals(f) ∧ rest where vals is
// s's projection on f and rest is s with f forgotten. A string field's
// constraint that only excludes codes outside its domain is dropped
// (every conversion excludes them).
func (d *describer) factor(s Set) factored {
	if fc, ok := d.factors[s]; ok {
		return fc
	}
	m := d.m
	fc := factored{rest: s}
	for _, f := range d.support(s) {
		proj := m.quantify(fc.rest, f.first, f.end()-1, false)
		if proj == all {
			continue // every value: s depends on f otherwise than through a constraint
		}
		rest := m.quantify(fc.rest, f.first, f.end()-1, true)
		if m.And(proj, rest) != fc.rest {
			continue
		}
		fc.rest = rest
		if !m.fullField(f, proj) {
			fc.pulled = append(fc.pulled, fieldVals{f, proj})
		}
	}
	d.factors[s] = fc
	return fc
}

// fullField reports whether vals holds every value of f (for a string
// field, every code of its domain and the other port).
func (m *Manager) fullField(f *field, vals Set) bool {
	if f.ports == nil {
		return vals == all
	}
	return m.Subset(m.atMost(f, uint64(len(f.ports))), vals)
}

// support is Manager.support, computed bottom up once per node.
func (d *describer) support(s Set) []*field {
	var out []*field
	for i, w := range d.supportBits(s) {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, d.m.space.fields[64*i+b])
			w &^= 1 << uint(b)
		}
	}
	return out
}

// supportBits is s's support as a bit per field index.
func (d *describer) supportBits(s Set) []uint64 {
	if s <= all {
		return nil
	}
	if b, ok := d.supp[s]; ok {
		return b
	}
	n := d.m.nodes[s]
	lo, hi := d.supportBits(n.lo), d.supportBits(n.hi)
	b := make([]uint64, (len(d.m.space.fields)+63)/64)
	for i := range b {
		if i < len(lo) {
			b[i] |= lo[i]
		}
		if i < len(hi) {
			b[i] |= hi[i]
		}
	}
	idx := d.m.space.fieldAt[n.level].idx
	b[idx/64] |= 1 << uint(idx%64)
	d.supp[s] = b
	return b
}

// support returns the fields s tests, in the space's order.
func (m *Manager) support(s Set) []*field {
	in := map[*field]bool{}
	m.visit(s, func(x Set) {
		if x > all {
			in[m.space.fieldAt[m.nodes[x].level]] = true
		}
	})
	var out []*field
	for _, f := range m.space.fields {
		if in[f] {
			out = append(out, f)
		}
	}
	return out
}

// branch is one way down a field: the values that lead to rest.
type branch struct {
	vals, rest Set
}

// split returns the ways down s's top field f: for each distinct set
// below f's bits except Empty, the values of f that lead to it, in the
// order of the smallest value. Values of a string field outside its
// domain are left out.
func (m *Manager) split(s Set, f *field) []branch {
	end := f.end()
	var exits []Set
	seen := map[Set]bool{}
	var walk func(Set)
	walk = func(x Set) {
		if seen[x] {
			return
		}
		seen[x] = true
		if m.level(x) >= end {
			if x != Empty {
				exits = append(exits, x)
			}
			return
		}
		walk(m.nodes[x].lo)
		walk(m.nodes[x].hi)
	}
	walk(s)
	var out []branch
	for _, e := range exits {
		memo := map[Set]Set{}
		var to func(Set) Set
		to = func(x Set) Set {
			if m.level(x) >= end {
				return truth(x == e)
			}
			if r, ok := memo[x]; ok {
				return r
			}
			n := m.nodes[x]
			r := m.mk(n.level, to(n.lo), to(n.hi))
			memo[x] = r
			return r
		}
		vals := to(s)
		if f.ports != nil {
			if vals = m.And(vals, m.atMost(f, uint64(len(f.ports)))); vals == Empty {
				continue
			}
		}
		out = append(out, branch{vals, e})
	}
	return out
}
