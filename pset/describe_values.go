package pset

import (
	"fmt"
	"math/big"

	"net/netip"
	"slices"
	"strings"

	"github.com/aclc/aclc/acl/expr"
)

// This file prints a set of values of one field as few comparisons as
// it can: named predicates (ip4, tcp, vlan.present), values, ranges,
// CIDRs and masks, or the negation of its complement's.

// eqOp is the operator of an equality test.
const eqOp = expr.Eq

// item is one constant of a value set: a value, a range lo..hi, a CIDR
// (value and prefix length) or a masked value.
type item struct {
	kind      itemKind
	val, mask *big.Int // itemValue: val; itemMasked: val/mask
	hi        *big.Int // itemRange: val..hi
	plen      int      // itemCIDR: val/plen
}

type itemKind uint8

const (
	itemValue itemKind = iota
	itemRange
	itemCIDR
	itemMasked
)

// fieldClass is how a field's constants are written.
type fieldClass uint8

const (
	classInt fieldClass = iota
	classMAC
	classIP4
	classIP6
)

// classOf follows acl/expr's formatValue: addresses by width and name.
func classOf(f *field) fieldClass {
	n := f.name
	switch {
	case f.width == 48 && (strings.HasPrefix(n, "eth.") || strings.HasSuffix(n, ".sha") || strings.HasSuffix(n, ".tha") ||
		strings.HasSuffix(n, ".sll") || strings.HasSuffix(n, ".tll")):
		return classMAC
	case f.width == 32 && (strings.HasPrefix(n, "ip4.") || strings.HasSuffix(n, ".spa") || strings.HasSuffix(n, ".tpa")):
		return classIP4
	case f.width == 128 && (strings.HasPrefix(n, "ip6.") || n == "nd.target"):
		return classIP6
	}
	return classInt
}

// valueNames are the predicates that name one value of a field, and the
// eth.type context they need (ip.proto 1 is icmp4 only on IPv4).
var valueNames = map[string][]struct {
	v    uint64
	name string
	need ctx
}{
	"eth.type": {{0x800, "ip4", 0}, {0x86dd, "ip6", 0}, {0x806, "arp", 0}, {0x8035, "rarp", 0}},
	"ip.proto": {{6, "tcp", 0}, {17, "udp", 0}, {132, "sctp", 0}, {1, "icmp4", ctxIP4}, {2, "igmp", ctxIP4}, {58, "icmp6", ctxIP6}},
}

// bitNames are the predicates and subfields that name one bit of a field.
var bitNames = map[string]map[int]string{
	"vlan.tci": {12: "vlan.present"},
	"eth.dst":  {40: "eth.mcast"},
	"ip.frag":  {0: "ip.is_frag", 1: "ip.later_frag"},
}

// values returns the comparisons that restrict f to vals under c (true
// when vals holds every value).
func (d *describer) values(f *field, vals Set, c ctx) *dnode {
	n := d.fieldValues(f, vals, c)
	if n.op != dTrue {
		n.pre, n.hasPre, n.fieldVals = d.m.And(vals, d.m.prereqs(f.sym)), true, vals
	}
	return n
}

// fieldValues is values without the node's pre.
func (d *describer) fieldValues(f *field, vals Set, c ctx) *dnode {
	m := d.m
	if m.fullField(f, vals) {
		return trueNode
	}
	if f.ports != nil {
		return nominalNode(d.portValues(f, vals))
	}
	its, total := d.items(f, vals)
	pos := d.itemsNode(f, its, total, c)
	nominal := f.sym.Level != expr.Ordinal
	if nominal && !d.style.negNominal {
		return nominalNode(pos) // no != and no ! (OVN's syntax)
	}
	cits, ctotal := d.items(f, m.apply(opDiff, all, vals))
	if ctotal > d.max || ctotal >= pos.size {
		return pos
	}
	neg := notNode(d.itemsNode(f, cits, ctotal, c))
	if x := neg.kids[0]; x.op == dList && int64(len(x.items)) == x.total {
		// f != {a, b}: a conjunction of inequalities, OVN's reading.
		text := f.name + " != " + x.items[0]
		if len(x.items) > 1 {
			text = f.name + " != {" + strings.Join(x.items, ", ") + "}"
		}
		neg = atom(text, x.total)
	}
	if nominal {
		return nominalNode(neg)
	}
	return neg
}

// portValues restricts a string field to the ports of vals, with ==
// (OVN's syntax allows nothing else on a string field). The other port
// has no name: with negated nominal tests, values with the other port
// are != the domain's ports not among them; without, they are not
// expressed (Describe's check fails).
func (d *describer) portValues(f *field, vals Set) *dnode {
	var in, out []string
	for i, p := range f.ports {
		if d.m.Intersects(vals, d.m.portIs(f, uint64(i))) {
			in = append(in, p)
		} else {
			out = append(out, p)
		}
	}
	if d.style.negNominal && d.m.Intersects(vals, d.m.portIs(f, uint64(len(f.ports)))) {
		text := f.name + " != {" + strings.Join(quoteAll(out), ", ") + "}"
		if len(out) == 1 {
			text = f.name + " != " + quoteAll(out)[0]
		}
		return atom(text, int64(len(out)))
	}
	return listNode(f.name, quoteAll(in), int64(len(in)))
}

// itemsNode is the disjunction of its (total items, the first len(its)
// known): named values as their predicates, ranges as range tests, the
// rest as one `f == {...}'; a single bit as the bit's test.
func (d *describer) itemsNode(f *field, its []item, total int64, c ctx) *dnode {
	if total == 1 && len(its) == 1 {
		if it := its[0]; it.kind == itemMasked || it.kind == itemCIDR {
			mask := it.mask
			if it.kind == itemCIDR {
				mask = prefixMask(f.width, it.plen)
			}
			if i := mask.TrailingZeroBits(); mask.BitLen() == int(i)+1 && f.sym.Level == expr.Ordinal {
				name := bitNames[f.name][int(i)]
				if name == "" || d.m.space.dialect.Symtab()[name] == nil {
					name = fmt.Sprintf("%s[%d]", f.name, i)
				}
				if it.val.Bit(int(i)) == 0 {
					return atom("!"+name, 1)
				}
				return atom(name, 1)
			}
		}
	}
	var pieces []*dnode
	var list []string
	named := map[uint64]string{}
	for _, nv := range valueNames[f.name] {
		if nv.need&c == nv.need && d.m.space.dialect.Symtab()[nv.name] != nil {
			named[nv.v] = nv.name
		}
	}
	var names []string
	for _, it := range its {
		if it.kind == itemValue && it.val.IsUint64() && named[it.val.Uint64()] != "" {
			names = append(names, named[it.val.Uint64()])
		}
	}
	if slices.Contains(names, "ip4") && slices.Contains(names, "ip6") && d.m.space.dialect.Symtab()["ip"] != nil {
		names = slices.DeleteFunc(names, func(n string) bool { return n == "ip4" || n == "ip6" })
		names = append([]string{"ip"}, names...)
		total--
	}
	for _, n := range names {
		pieces = append(pieces, atom(n, 1))
	}
	ranges := 0
	for _, it := range its {
		switch {
		case it.kind == itemValue && it.val.IsUint64() && named[it.val.Uint64()] != "":
		case it.kind == itemRange:
			ranges++
			pieces = append(pieces, d.rangeNode(f, it))
		default:
			list = append(list, d.constant(f, it))
		}
	}
	if rest := total - int64(len(pieces)); rest > 0 {
		pieces = append(pieces, listNode(f.name, list, rest))
	}
	return orNode(pieces)
}

// rangeNode is lo <= f <= hi, one-sided at the field's ends.
func (d *describer) rangeNode(f *field, it item) *dnode {
	lo, hi := d.format(f, it.val), d.format(f, it.hi)
	switch {
	case it.val.Sign() == 0:
		return atom(f.name+" <= "+hi, 1)
	case it.hi.Cmp(ones(f.width)) == 0:
		return atom(f.name+" >= "+lo, 1)
	}
	return rangeAtom(f.name + " >= " + lo + " && " + f.name + " <= " + hi)
}

// constant prints a value, CIDR or masked value of f.
func (d *describer) constant(f *field, it item) string {
	switch it.kind {
	case itemCIDR:
		if c := classOf(f); c == classIP4 || c == classIP6 {
			return fmt.Sprintf("%s/%d", d.format(f, it.val), it.plen)
		}
		return d.format(f, it.val) + "/" + d.format(f, prefixMask(f.width, it.plen))
	case itemMasked:
		if classOf(f) == classInt {
			return "0x" + it.val.Text(16) + "/0x" + it.mask.Text(16)
		}
		return d.format(f, it.val) + "/" + d.format(f, it.mask)
	}
	return d.format(f, it.val)
}

// format prints one value of f in its natural notation.
func (d *describer) format(f *field, v *big.Int) string {
	switch classOf(f) {
	case classMAC:
		b := make([]byte, 6)
		v.FillBytes(b)
		return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5])
	case classIP4:
		var b [4]byte
		v.FillBytes(b[:])
		return netip.AddrFrom4(b).String()
	case classIP6:
		var b [16]byte
		v.FillBytes(b[:])
		return netip.AddrFrom16(b).String()
	}
	if f.width <= 16 && f.name != "eth.type" || v.IsUint64() && v.Uint64() < 10 {
		return v.String()
	}
	return "0x" + v.Text(16)
}

// items returns the constants of vals (a set on f's bits): all of them
// when there are at most d.max, else the first d.max+1; and how many
// there are. A nominal field (eth.type, ip.proto: == and != only) lists
// values; a narrow number (an L4 port) merges its values into ranges;
// addresses and wide fields take the diagram's cubes, CIDRs where they
// are prefixes.
func (d *describer) items(f *field, vals Set) ([]item, int64) {
	m := d.m
	limit := int(d.max) + 1
	switch {
	case f.sym.Level != expr.Ordinal:
		var out []item
		m.cubes(vals, f, func(val, mask *big.Int) bool {
			free := freeBits(f.width, mask)
			for x := uint64(0); x < 1<<uint(len(free)) && len(out) < limit; x++ {
				v := new(big.Int).Set(val)
				for i, b := range free {
					v.SetBit(v, b, uint(x>>uint(i)&1))
				}
				out = append(out, item{kind: itemValue, val: v})
			}
			return len(out) < limit
		})
		slices.SortFunc(out, func(a, b item) int { return a.val.Cmp(b.val) })
		n := m.countValues(vals, f)
		if !n.IsInt64() {
			return out, maxSize
		}
		return out, min(n.Int64(), maxSize)
	case f.width <= 16 && classOf(f) == classInt:
		var ranges, masked []item
		m.cubes(vals, f, func(val, mask *big.Int) bool {
			if plen, ok := prefixLen(f.width, mask); ok {
				hi := new(big.Int).Or(val, new(big.Int).Xor(ones(f.width), prefixMask(f.width, plen)))
				ranges = append(ranges, item{kind: itemRange, val: val, hi: hi})
			} else {
				masked = append(masked, item{kind: itemMasked, val: val, mask: mask})
			}
			return true
		})
		slices.SortFunc(ranges, func(a, b item) int { return a.val.Cmp(b.val) })
		var out []item
		for _, r := range ranges {
			if k := len(out) - 1; k >= 0 && new(big.Int).Add(out[k].hi, big.NewInt(1)).Cmp(r.val) >= 0 {
				if r.hi.Cmp(out[k].hi) > 0 {
					out[k].hi = r.hi
				}
				continue
			}
			out = append(out, r)
		}
		for i := range out {
			if out[i].val.Cmp(out[i].hi) == 0 {
				out[i] = item{kind: itemValue, val: out[i].val}
			}
		}
		out = append(out, masked...)
		return out, int64(len(out))
	}
	paths := m.paths(vals, f)
	ranges := (classOf(f) == classIP4 || classOf(f) == classIP6) && paths <= maxAddressCubes
	var out []item
	m.cubes(vals, f, func(val, mask *big.Int) bool {
		plen, ok := prefixLen(f.width, mask)
		switch {
		case ok && plen == f.width:
			out = append(out, item{kind: itemValue, val: val})
		case ok && classOf(f) != classInt:
			out = append(out, item{kind: itemCIDR, val: val, plen: plen})
		default:
			out = append(out, item{kind: itemMasked, val: val, mask: mask})
		}
		return ranges || len(out) < limit
	})
	if ranges {
		out = addressRanges(f, out)
		return out, int64(len(out))
	}
	return out, paths
}

// maxAddressCubes bounds the cubes of an address set merged into ranges.
const maxAddressCubes = 4096

// addressRanges replaces each run of three or more adjacent addresses
// and CIDRs (the diagram's cubes of an interval are its fewest CIDRs)
// by one range: 10.0.0.1-10.0.0.9 rather than its five CIDRs.
func addressRanges(f *field, its []item) []item {
	var blocks, out []item
	for _, it := range its {
		switch it.kind {
		case itemValue:
			blocks = append(blocks, item{kind: itemRange, val: it.val, hi: it.val, plen: 1})
		case itemCIDR:
			hi := new(big.Int).Or(it.val, new(big.Int).Xor(ones(f.width), prefixMask(f.width, it.plen)))
			blocks = append(blocks, item{kind: itemRange, val: it.val, hi: hi, plen: 1, mask: big.NewInt(int64(it.plen))})
		default:
			out = append(out, it)
		}
	}
	slices.SortFunc(blocks, func(a, b item) int { return a.val.Cmp(b.val) })
	var runs [][]item
	for _, b := range blocks {
		if k := len(runs) - 1; k >= 0 && new(big.Int).Add(runs[k][len(runs[k])-1].hi, big.NewInt(1)).Cmp(b.val) == 0 {
			runs[k] = append(runs[k], b)
			continue
		}
		runs = append(runs, []item{b})
	}
	var merged []item
	for _, r := range runs {
		if len(r) >= 3 {
			merged = append(merged, item{kind: itemRange, val: r[0].val, hi: r[len(r)-1].hi})
			continue
		}
		for _, b := range r { // back to what they were
			if b.mask == nil {
				merged = append(merged, item{kind: itemValue, val: b.val})
			} else {
				merged = append(merged, item{kind: itemCIDR, val: b.val, plen: int(b.mask.Int64())})
			}
		}
	}
	return append(merged, out...)
}

// cubes calls fn with the cubes of vals (a set on f's bits), the paths
// of its diagram in order (the 0 branch first): the bits of mask are
// fixed to val's, the others free. It stops when fn returns false.
func (m *Manager) cubes(vals Set, f *field, fn func(val, mask *big.Int) bool) {
	val, mask := new(big.Int), new(big.Int)
	var walk func(Set) bool
	walk = func(x Set) bool {
		switch x {
		case Empty:
			return true
		case all:
			return fn(new(big.Int).Set(val), new(big.Int).Set(mask))
		}
		n := m.nodes[x]
		bit := f.width - 1 - int(n.level-f.first)
		mask.SetBit(mask, bit, 1)
		val.SetBit(val, bit, 0)
		ok := walk(n.lo)
		if ok {
			val.SetBit(val, bit, 1)
			ok = walk(n.hi)
		}
		val.SetBit(val, bit, 0)
		mask.SetBit(mask, bit, 0)
		return ok
	}
	walk(vals)
}

// countValues counts the values of f in vals (a set on f's bits).
func (m *Manager) countValues(vals Set, f *field) *big.Int {
	return m.countLevels(vals, f.first, f.end())
}

// paths counts the cubes of vals (saturating).
func (m *Manager) paths(vals Set, f *field) int64 {
	memo := map[Set]int64{}
	var count func(Set) int64
	count = func(x Set) int64 {
		switch x {
		case Empty:
			return 0
		case all:
			return 1
		}
		if c, ok := memo[x]; ok {
			return c
		}
		c := addSize(count(m.nodes[x].lo), count(m.nodes[x].hi))
		memo[x] = c
		return c
	}
	return count(vals)
}

// prefixLen returns the prefix length of mask when its bits are the top
// ones of a width-bit field.
func prefixLen(width int, mask *big.Int) (int, bool) {
	n := mask.BitLen()
	k := 0
	for i := 0; i < n; i++ {
		k += int(mask.Bit(i))
	}
	return k, n == width && int(mask.TrailingZeroBits()) == width-k || k == 0
}

// prefixMask is the mask of the top plen bits of a width-bit field.
func prefixMask(width, plen int) *big.Int {
	return new(big.Int).Xor(ones(width), ones(width-plen))
}

// ones is 2^n-1.
func ones(n int) *big.Int {
	return new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(n)), big.NewInt(1))
}

// freeBits lists the bits of a width-bit field mask leaves free, least
// significant first.
func freeBits(width int, mask *big.Int) []int {
	var out []int
	for i := 0; i < width; i++ {
		if mask.Bit(i) == 0 {
			out = append(out, i)
		}
	}
	return out
}
