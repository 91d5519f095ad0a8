package expr

import (
	"fmt"
	"sort"
	"sync/atomic"
)

// Level is a symbol's measurement level, OVN's enum expr_level. It decides
// which operators may be used with the symbol.
type Level int

// Measurement levels.
const (
	// Nominal symbols may only be compared for equality (taking enclosing
	// `!' into account), e.g. eth.type, ip.proto, inport, and the
	// predicates that expand to them (ip4, tcp, ...).
	Nominal Level = iota
	// Boolean symbols are predicates expanding only to ordinal tests
	// (eth.bcast, ip4.mcast): == and != only, either polarity.
	Boolean
	// Ordinal symbols are bitwise-maskable fields: every operator and
	// subfield selection is allowed.
	Ordinal
)

// String returns "nominal", "Boolean" or "ordinal" as OVN prints them.
func (l Level) String() string {
	switch l {
	case Nominal:
		return "nominal"
	case Boolean:
		return "Boolean"
	case Ordinal:
		return "ordinal"
	}
	return fmt.Sprintf("Level(%d)", int(l))
}

// Symbol is one name of an OVN release's logical-flow symbol table
// (lib/logical-fields.c ovn_init_symtab).
type Symbol struct {
	// Name is the symbol's name, e.g. "tcp.dst".
	Name string
	// Width is the width in bits; 0 for the string fields inport/outport,
	// 1 for predicates.
	Width int
	// Level is the measurement level.
	Level Level
	// Prereqs is the prerequisite expression ANDed in on every use, e.g.
	// "tcp" for tcp.dst, "ct.trk" for ct.new; "" for none.
	Prereqs string
	// Predicate is the expansion of a predicate symbol, e.g.
	// "ip.proto == 6" for tcp; "" for fields.
	Predicate string
	// Parent is the field this symbol is a subfield of (reg0 is
	// xxreg0[96..127]); nil for fields and predicates.
	Parent *Symbol
	// ParentOfs is the bit offset of a subfield in its Parent.
	ParentOfs int
	// MustCrossproduct is OVN's must_crossproduct flag (eth.type,
	// ip.proto, icmp6.type/code).
	MustCrossproduct bool
	// OVNField marks OVN-internal fields (icmp4.frag_mtu, icmp6.frag_mtu).
	OVNField bool
	// PortRegister names the string field whose register this numeric
	// field is (26.03.1's __inport is the register behind inport): its
	// value is that port's tunnel key.
	PortRegister string

	// exp caches Predicate and Prereqs parsed (expansionsOf).
	exp atomic.Pointer[symExpansions]
}

// IsPredicate reports whether s is a predicate (ip4, tcp, eth.bcast, ...).
func (s *Symbol) IsPredicate() bool { return s.Predicate != "" }

// IsString reports whether s is a string field (inport, outport).
func (s *Symbol) IsString() bool { return s.Width == 0 }

// Root returns the underlying field of a subfield chain and the bit offset
// of s within it: reg0 → (xxreg0, 96). For fields and predicates it
// returns (s, 0).
func (s *Symbol) Root() (*Symbol, int) {
	ofs := 0
	for s.Parent != nil {
		ofs += s.ParentOfs
		s = s.Parent
	}
	return s, ofs
}

// Symtab is a symbol table keyed by name.
type Symtab map[string]*Symbol

// Names returns all symbol names in sorted order.
func (t Symtab) Names() []string {
	names := make([]string, 0, len(t))
	for n := range t {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the symbol called name, or nil.
func (t Symtab) Lookup(name string) *Symbol { return t[name] }

// DefaultSymtab returns OVN 23.03.1's logical-flow symbol table, the table
// of Parse and Valid. The table is shared; callers must not modify it.
// Dialect.Symtab returns another release's.
func DefaultSymtab() Symtab { return OVN2303().Symtab() }

// symtabBuilder adds symbols the way lib/logical-fields.c does, with
// lib/expr.c's expr_symtab_add_* rules.
type symtabBuilder struct{ t Symtab }

func (b *symtabBuilder) add(name string, width int, level Level, prereqs string, cross bool) *Symbol {
	if _, dup := b.t[name]; dup {
		panic("expr: duplicate symbol " + name)
	}
	s := &Symbol{Name: name, Width: width, Level: level, Prereqs: prereqs, MustCrossproduct: cross}
	b.t[name] = s
	return s
}

// str adds a string field (expr_symtab_add_string).
func (b *symtabBuilder) str(name string) { b.add(name, 0, Nominal, "", false) }

// field adds a real OpenFlow field: ordinal if bitwise maskable.
func (b *symtabBuilder) field(name string, width int, maskable bool, prereqs string, cross bool) {
	level := Nominal
	if maskable {
		level = Ordinal
	}
	b.add(name, width, level, prereqs, cross)
}

// sub adds name as bits lo..hi of parent (expr_symtab_add_subfield).
func (b *symtabBuilder) sub(name, prereqs, parent string, lo, hi int) {
	p := b.t[parent]
	if p == nil || hi >= p.Width || lo > hi {
		panic("expr: bad subfield " + name)
	}
	s := b.add(name, hi-lo+1, p.Level, prereqs, false)
	s.Parent, s.ParentOfs = p, lo
}

// pred adds a predicate (expr_symtab_add_predicate); its level is that of
// its expansion.
func (b *symtabBuilder) pred(name, expansion string) {
	s := b.add(name, 1, Boolean, "", false)
	s.Predicate = expansion
	s.Level = predicateLevel(b.t, expansion)
}

// redefine gives an existing predicate a new expansion.
func (b *symtabBuilder) redefine(name, expansion string) {
	b.remove(name)
	b.pred(name, expansion)
}

// remove drops symbols that a release no longer has.
func (b *symtabBuilder) remove(names ...string) {
	for _, n := range names {
		if b.t[n] == nil {
			panic("expr: removing unknown symbol " + n)
		}
		delete(b.t, n)
	}
}

// buildSymtab2303 builds OVN 23.03.1's table (ovn_init_symtab); later
// releases apply symtabChanges to it (dialect.go).
func buildSymtab2303() Symtab {
	b := &symtabBuilder{t: Symtab{}}
	t := b.t
	add, field, sub, pred := b.add, b.field, b.sub, b.pred

	add("inport", 0, Nominal, "", false)
	add("outport", 0, Nominal, "", false)

	// Logical registers (MFF_N_LOG_REGS is 10 in 23.03: reg0..reg9,
	// xreg0..xreg4, xxreg0..xxreg1). reg10..reg15 hold flags, zones and the
	// logical ports and have no symbol.
	const nRegs = 10
	for xx := 0; xx < nRegs/4; xx++ {
		field(fmt.Sprintf("xxreg%d", xx), 128, true, "", false)
	}
	for x := 0; x < nRegs/2; x++ {
		if xx := x / 2; xx < nRegs/4 {
			lsb := 64 * (1 - x%2)
			sub(fmt.Sprintf("xreg%d", x), "", fmt.Sprintf("xxreg%d", xx), lsb, lsb+63)
		} else {
			field(fmt.Sprintf("xreg%d", x), 64, true, "", false)
		}
	}
	for i := 0; i < nRegs; i++ {
		if xx := i / 4; xx < nRegs/4 {
			lsb := 32 * (3 - i%4)
			sub(fmt.Sprintf("reg%d", i), "", fmt.Sprintf("xxreg%d", xx), lsb, lsb+31)
		} else {
			lsb := 32 * (1 - i%2)
			sub(fmt.Sprintf("reg%d", i), "", fmt.Sprintf("xreg%d", i/2), lsb, lsb+31)
		}
	}

	field("flags", 32, true, "", false)
	sub("flags.loopback", "", "flags", 0, 0)
	sub("flags.force_snat_for_dnat", "", "flags", 2, 2)
	sub("flags.force_snat_for_lb", "", "flags", 3, 3)
	sub("flags.skip_snat_for_lb", "", "flags", 9, 9)
	sub("flags.use_snat_zone", "", "flags", 11, 11)

	field("ct_mark", 32, true, "", false)
	sub("ct_mark.blocked", "", "ct_mark", 0, 0)
	sub("ct_mark.natted", "", "ct_mark", 1, 1)
	sub("ct_mark.ecmp_reply_port", "", "ct_mark", 16, 31)
	sub("ct_mark.skip_snat", "", "ct_mark", 2, 2)
	sub("ct_mark.force_snat", "", "ct_mark", 3, 3)

	field("ct_label", 128, true, "", false)
	sub("ct_label.blocked", "", "ct_label", 0, 0)
	sub("ct_label.natted", "", "ct_label", 1, 1)
	sub("ct_label.ecmp_reply_eth", "", "ct_label", 32, 79)
	sub("ct_label.ecmp_reply_port", "", "ct_label", 80, 95)
	sub("ct_label.label", "", "ct_label", 96, 127)
	sub("ct_label.skip_snat", "", "ct_label", 2, 2)
	sub("ct_label.force_snat", "", "ct_label", 3, 3)

	field("ct_state", 32, true, "", false)
	for i, n := range []string{"new", "est", "rel", "rpl", "inv", "trk", "snat", "dnat"} {
		pre := "ct.trk"
		if n == "trk" {
			pre = ""
		}
		sub("ct."+n, pre, "ct_state", i, i)
	}

	field("eth.src", 48, true, "", false)
	field("eth.dst", 48, true, "", false)
	field("eth.type", 16, false, "", true)
	pred("eth.bcast", "eth.dst == ff:ff:ff:ff:ff:ff")
	sub("eth.mcast", "", "eth.dst", 40, 40)
	pred("eth.mcastv6", "eth.dst[32..47] == 0x3333")

	field("vlan.tci", 16, true, "", false)
	pred("vlan.present", "vlan.tci[12]")
	sub("vlan.pcp", "vlan.present", "vlan.tci", 13, 15)
	sub("vlan.vid", "vlan.present", "vlan.tci", 0, 11)

	pred("ip4", "eth.type == 0x800")
	pred("ip6", "eth.type == 0x86dd")
	pred("ip", "ip4 || ip6")
	field("ip.proto", 8, false, "ip", true)
	field("ip.dscp", 6, false, "ip", false)
	field("ip.ecn", 2, false, "ip", false)
	field("ip.ttl", 8, false, "ip", false)

	field("ip4.src", 32, true, "ip4", false)
	field("ip4.dst", 32, true, "ip4", false)
	pred("ip4.src_mcast", "ip4.src[28..31] == 0xe")
	pred("ip4.mcast", "eth.mcast && ip4.dst[28..31] == 0xe")

	pred("icmp4", "ip4 && ip.proto == 1")
	field("icmp4.type", 8, false, "icmp4", false)
	field("icmp4.code", 8, false, "icmp4", false)

	pred("igmp", "ip4 && ip.proto == 2")

	field("ip6.src", 128, true, "ip6", false)
	field("ip6.dst", 128, true, "ip6", false)
	field("ip6.label", 20, true, "ip6", false)

	pred("ip6.mcast_rsvd", "ip6.dst[116..127] == 0xff0 && ip6.dst[0..111] == 0x0")
	pred("ip6.mcast_all_nodes", "ip6.dst == ff01::1 || ip6.dst == ff02::1")
	pred("ip6.mcast_all_rtrs", "ip6.dst == ff01::2 || ip6.dst == ff02::2 || ip6.dst == ff05::2")
	pred("ip6.mcast_sol_node", "ip6.dst == ff02::1:ff00:0000/104")
	pred("ip6.mcast_flood", "eth.mcastv6 && (ip6.mcast_rsvd || ip6.mcast_all_nodes || ip6.mcast_all_rtrs || ip6.mcast_sol_node)")
	pred("ip6.mcast", "eth.mcastv6 && ip6.dst[120..127] == 0xff")

	pred("icmp6", "ip6 && ip.proto == 58")
	field("icmp6.type", 8, false, "icmp6", true)
	field("icmp6.code", 8, false, "icmp6", true)

	pred("icmp", "icmp4 || icmp6")

	field("ip.frag", 2, true, "ip", false)
	pred("ip.is_frag", "ip.frag[0]")
	pred("ip.later_frag", "ip.frag[1]")
	pred("ip.first_frag", "ip.is_frag && !ip.later_frag")

	pred("arp", "eth.type == 0x806")
	field("arp.op", 16, false, "arp", false)
	field("arp.spa", 32, true, "arp", false)
	field("arp.sha", 48, true, "arp", false)
	field("arp.tpa", 32, true, "arp", false)
	field("arp.tha", 48, true, "arp", false)

	pred("rarp", "eth.type == 0x8035")
	field("rarp.op", 16, false, "rarp", false)
	field("rarp.spa", 32, true, "rarp", false)
	field("rarp.sha", 48, true, "rarp", false)
	field("rarp.tpa", 32, true, "rarp", false)
	field("rarp.tha", 48, true, "rarp", false)

	pred("nd", "icmp6.type == {135, 136} && icmp6.code == 0 && ip.ttl == 255")
	pred("nd_ns", "icmp6.type == 135 && icmp6.code == 0 && ip.ttl == 255")
	pred("nd_na", "icmp6.type == 136 && icmp6.code == 0 && ip.ttl == 255")
	pred("nd_rs", "icmp6.type == 133 && icmp6.code == 0 && ip.ttl == 255")
	pred("nd_ra", "icmp6.type == 134 && icmp6.code == 0 && ip.ttl == 255")
	field("nd.target", 128, true, "nd", false)
	field("nd.sll", 48, true, "nd_ns", false)
	field("nd.tll", 48, true, "nd_na", false)

	pred("mldv1", "ip6.src == fe80::/10 && icmp6.type == {130, 131, 132}")
	pred("mldv2", "ip6.dst == ff02::16 && icmp6.type == 143")

	pred("tcp", "ip.proto == 6")
	field("tcp.src", 16, true, "tcp", false)
	field("tcp.dst", 16, true, "tcp", false)
	field("tcp.flags", 12, true, "tcp", false)

	pred("udp", "ip.proto == 17")
	field("udp.src", 16, true, "udp", false)
	field("udp.dst", 16, true, "udp", false)

	pred("sctp", "ip.proto == 132")
	field("sctp.src", 16, true, "sctp", false)
	field("sctp.dst", 16, true, "sctp", false)

	field("pkt.mark", 32, true, "", false)

	add("icmp4.frag_mtu", 16, Nominal, "", false).OVNField = true
	add("icmp6.frag_mtu", 32, Nominal, "", false).OVNField = true
	return t
}

// predicateLevel is OVN's expr_parse_level: nominal if the expansion tests
// any nominal symbol, otherwise boolean.
func predicateLevel(t Symtab, expansion string) Level {
	n, err := parseWith(expansion, t, nil, nil)
	if err != nil {
		panic(fmt.Sprintf("expr: predicate %q: %v", expansion, err))
	}
	level := Boolean
	Inspect(n, func(n Node) bool {
		switch n := n.(type) {
		case *Cmp:
			if n.Field.Symbol.Level == Nominal {
				level = Nominal
			}
		case *FieldTest:
			if n.Field.Symbol.Level == Nominal {
				level = Nominal
			}
		case *Range:
			if n.Field.Symbol.Level == Nominal {
				level = Nominal
			}
		}
		return true
	})
	return level
}
