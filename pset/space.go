package pset

import (
	"fmt"
	"math/big"
	"math/bits"
	"slices"

	"github.com/aclc/aclc/acl/expr"
)

// Space is the packet space sets are over: the root fields of one
// release's match language, each a run of BDD variables, and the domain
// of port names of the string fields (inport, outport, remote_outport).
// A Space is immutable and may be shared by Managers.
type Space struct {
	dialect *expr.Dialect
	fields  []*field          // in variable order
	byName  map[string]*field // by root field name
	levels  int
	ports   []string
	other   string
	fieldAt []*field // the field of each level
}

// field is one root field of the space.
type field struct {
	name  string
	sym   *expr.Symbol
	width int   // bits: the field's, or for a string field the code's
	first int32 // level of its most significant bit
	idx   int   // its index in Space.fields
	// ports is a string field's domain: code i is ports[i], code
	// len(ports) the other port; nil for integer fields.
	ports []string
	code  map[string]uint64
}

// level returns the level of bit i (0: least significant) of f.
func (f *field) level(i int) int32 { return f.first + int32(f.width-1-i) }

// end returns the level after f's last (least significant) bit.
func (f *field) end() int32 { return f.first + int32(f.width) }

// fieldOrder are the root fields placed first, in this order: few
// distinct values per ACL set first (ports, protocols, conntrack state,
// L4 ports), addresses last, so that the large address tries of address
// sets sit at the bottom of the diagram and are shared by every context
// above them. The other roots follow in name order, before the addresses.
var fieldOrder = []string{
	"inport", "outport", "remote_outport",
	"eth.type", "ip.proto", "vlan.tci", "ip.frag",
	"ct_state", "ct_mark", "ct_label",
	"tcp.dst", "udp.dst", "sctp.dst", "tcp.src", "udp.src", "sctp.src", "tcp.flags",
	"icmp4.type", "icmp4.code", "icmp6.type", "icmp6.code",
	"ip.ttl", "ip.dscp", "ip.ecn",
}

// addressOrder are the root fields placed last, in this order.
var addressOrder = []string{"eth.src", "eth.dst", "ip4.src", "ip4.dst", "ip6.src", "ip6.dst"}

// NewSpace returns the space of dialect d's root fields, with ports as
// the domain of inport and outport (their order is the codes'; names must
// be distinct) and other the name printed for "any other port" (a port
// of the datapath the domain does not list; by default "other").
func NewSpace(d *expr.Dialect, ports []string, other string) (*Space, error) {
	if other == "" {
		other = "other"
	}
	code := make(map[string]uint64, len(ports))
	for i, p := range ports {
		if _, dup := code[p]; dup {
			return nil, fmt.Errorf("pset: port %q listed twice", p)
		}
		code[p] = uint64(i)
	}
	if _, clash := code[other]; clash {
		return nil, fmt.Errorf("pset: the other port's name %q is a port of the domain", other)
	}
	t := d.Symtab()
	var roots []string
	for _, n := range t.Names() {
		if s := t[n]; s.Parent == nil && !s.IsPredicate() {
			roots = append(roots, n)
		}
	}
	rank := func(n string) int {
		if i := slices.Index(fieldOrder, n); i >= 0 {
			return i
		}
		if i := slices.Index(addressOrder, n); i >= 0 {
			return len(fieldOrder) + len(roots) + i
		}
		return len(fieldOrder) // then name order (the sort is stable)
	}
	slices.SortStableFunc(roots, func(a, b string) int { return rank(a) - rank(b) })
	sp := &Space{dialect: d, byName: map[string]*field{}, ports: slices.Clone(ports), other: other}
	for _, n := range roots {
		s := t[n]
		f := &field{name: n, sym: s, width: s.Width, first: int32(sp.levels), idx: len(sp.fields)}
		if s.IsString() {
			f.ports, f.code = sp.ports, code
			f.width = bits.Len(uint(len(ports)))
		}
		sp.levels += f.width
		for range f.width {
			sp.fieldAt = append(sp.fieldAt, f)
		}
		sp.fields = append(sp.fields, f)
		sp.byName[n] = f
	}
	return sp, nil
}

// Dialect returns the match language of the space.
func (sp *Space) Dialect() *expr.Dialect { return sp.dialect }

// Ports returns the domain of inport and outport (without the other
// port); the slice must not be modified.
func (sp *Space) Ports() []string { return sp.ports }

// Other returns the name of the other port.
func (sp *Space) Other() string { return sp.other }

// Fields returns the root field names in variable order.
func (sp *Space) Fields() []string {
	out := make([]string, len(sp.fields))
	for i, f := range sp.fields {
		out[i] = f.name
	}
	return out
}

// Variables returns the number of BDD variables of the space.
func (sp *Space) Variables() int { return sp.levels }

// value returns the value of field f in assignment bits (one bool per
// level).
func (f *field) value(assign []bool) *big.Int {
	v := new(big.Int)
	for i := 0; i < f.width; i++ {
		if assign[f.level(i)] {
			v.SetBit(v, i, 1)
		}
	}
	return v
}
