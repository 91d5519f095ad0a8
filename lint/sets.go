package lint

import (
	"maps"
	"math/big"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/release"
)

// This file is the set reasoning behind the overlap, shadowing, stateless
// and load-balancer rules: a match is turned into a disjunction of cubes,
// each cube a conjunction of value/mask constraints on whole OVN fields
// (subfields folded into their root: reg0 into xxreg0, ct.est into
// ct_state) and of membership constraints on inport/outport. OVN's
// implicit prerequisites are ANDed into every field test, as OVN does.
//
// Constructs the cubes cannot represent exactly (is_chassis_resident, !=
// on a wide field, a disjunction that explodes) are approximated twice:
// once from above (the constraint dropped: the cubes match at least the
// packets the ACL matches) and once from below (the cube dropped: the cubes
// match at most those packets). A proof of containment uses the
// approximation from below for the container and from above for the
// contained; a proof of disjointness uses both from above; a proof of
// overlap uses both from below.

// maxCubes bounds the cubes of one match; beyond it the match is
// approximated.
const maxCubes = 2048

// maxNeBits is the widest field for which field != value is expanded into
// one cube per bit (exact); wider ones are approximated.
const maxNeBits = 16

// u128 is a 128-bit value, lo word first.
type u128 [2]uint64

func (a u128) and(b u128) u128 { return u128{a[0] & b[0], a[1] & b[1]} }
func (a u128) or(b u128) u128  { return u128{a[0] | b[0], a[1] | b[1]} }
func (a u128) zero() bool      { return a[0] == 0 && a[1] == 0 }

func (a u128) shl(n int) u128 {
	switch {
	case n == 0:
		return a
	case n >= 128:
		return u128{}
	case n >= 64:
		return u128{0, a[0] << (n - 64)}
	}
	return u128{a[0] << n, a[1]<<n | a[0]>>(64-n)}
}

func onesN(n int) u128 {
	switch {
	case n <= 0:
		return u128{}
	case n >= 128:
		return u128{^uint64(0), ^uint64(0)}
	case n >= 64:
		return u128{^uint64(0), ^uint64(0) >> (128 - n)}
	}
	return u128{^uint64(0) >> (64 - n), 0}
}

func fromBig(x *big.Int) u128 {
	if x == nil {
		return u128{}
	}
	if x.Sign() >= 0 && bits.UintSize == 64 { // the words themselves
		var v u128
		for i, w := range x.Bits()[:min(2, len(x.Bits()))] {
			v[i] = uint64(w)
		}
		return v
	}
	lo := new(big.Int).And(x, new(big.Int).SetUint64(^uint64(0))).Uint64()
	hi := new(big.Int).Rsh(x, 64).Uint64()
	return u128{lo, hi}
}

func (a u128) bit(i int) bool { return a[i/64]>>(i%64)&1 == 1 }

func (a u128) popcount() int { return bits.OnesCount64(a[0]) + bits.OnesCount64(a[1]) }

// strc constrains a string field (inport, outport): its value is in `in'
// (nil: any value) and not in `out'. The maps are never modified once
// built.
type strc struct {
	in, out map[string]bool
}

// fc constrains one field: the bits of mask of a root field to val and,
// when set is not nil, the bits of set.mask (none of mask) to one of its
// values (valueset.go); or, when str is not nil, a string field.
type fc struct {
	id        fieldID
	val, mask u128
	set       *vset
	str       *strc
}

// fieldID numbers the symbols of OVN's symbol table in name order, so
// that cubes compare small integers instead of names.
type fieldID uint16

// Built on first use from the symbols of every version's match language
// (a field one version lacks has a number all the same), in name order.
var fieldIDs = sync.OnceValue(func() map[string]fieldID {
	names := map[string]bool{}
	for _, r := range release.Distinct() {
		for _, n := range compile.Dialect(r).Symtab().Names() {
			names[n] = true
		}
	}
	m := map[string]fieldID{}
	for i, n := range slices.Sorted(maps.Keys(names)) {
		m[n] = fieldID(i + 1)
	}
	return m
})

// idOf returns the number of the symbol called name (0 if none).
func idOf(name string) fieldID { return fieldIDs()[name] }

// cube is a conjunction of field constraints sorted by field name; the
// empty cube matches everything. Cubes are never modified once built.
type cube []fc

var trueCube = cube(nil)

// field returns the constraint on the named field, if any.
func (c cube) field(id fieldID) (*fc, bool) {
	for i := range c {
		if c[i].id == id {
			return &c[i], true
		}
	}
	return nil, false
}

// and returns the conjunction of c and d, and false if it is empty.
func (c cube) and(d cube) (cube, bool) {
	return c.andInto(make(cube, 0, len(c)+len(d)), d)
}

// andInto is and, appending the result to out (which must have room for
// len(c)+len(d) constraints, so that it is never reallocated).
func (c cube) andInto(out cube, d cube) (cube, bool) {
	i, j := 0, 0
	for i < len(c) || j < len(d) {
		switch {
		case j == len(d) || i < len(c) && c[i].id < d[j].id:
			out = append(out, c[i])
			i++
		case i == len(c) || d[j].id < c[i].id:
			out = append(out, d[j])
			j++
		default:
			x, y := c[i], d[j]
			i++
			j++
			if x.str != nil || y.str != nil {
				if x.str == nil || y.str == nil {
					return nil, false
				}
				m, ok := strAnd(*x.str, *y.str)
				if !ok {
					return nil, false
				}
				out = append(out, fc{id: x.id, str: &m})
				continue
			}
			z, ok := bitAnd(x, y)
			if !ok {
				return nil, false
			}
			out = append(out, z)
		}
	}
	return out, true
}

func strAnd(a, b strc) (strc, bool) {
	n := strc{}
	switch {
	case a.in == nil:
		n.in = b.in
	case b.in == nil:
		n.in = a.in
	default:
		n.in = map[string]bool{}
		for x := range a.in {
			if b.in[x] {
				n.in[x] = true
			}
		}
	}
	switch {
	case len(a.out) == 0:
		n.out = b.out
	case len(b.out) == 0:
		n.out = a.out
	default:
		n.out = make(map[string]bool, len(a.out)+len(b.out))
		for x := range a.out {
			n.out[x] = true
		}
		for x := range b.out {
			n.out[x] = true
		}
	}
	if n.in != nil && !anyOutside(n.in, n.out) {
		return strc{}, false
	}
	return n, true
}

func anyOutside(in, out map[string]bool) bool {
	for x := range in {
		if !out[x] {
			return true
		}
	}
	return false
}

// within reports whether every packet of c is in d.
func (c cube) within(d cube) bool {
	i := 0
	for _, dv := range d {
		for i < len(c) && c[i].id < dv.id {
			i++
		}
		if i == len(c) || c[i].id != dv.id {
			return false
		}
		cv := c[i]
		if dv.str != nil || cv.str != nil {
			if dv.str == nil || cv.str == nil || !strWithin(*cv.str, *dv.str) {
				return false
			}
			continue
		}
		if cv.set != nil || dv.set != nil {
			if !bitWithin(cv, dv) {
				return false
			}
			continue
		}
		if cv.mask.and(dv.mask) != dv.mask || cv.val.and(dv.mask) != dv.val {
			return false
		}
	}
	return true
}

// strWithin reports whether every value c admits, d admits.
func strWithin(c, d strc) bool {
	if d.in != nil {
		if c.in == nil {
			return false
		}
		for x := range c.in {
			if !c.out[x] && (!d.in[x] || d.out[x]) {
				return false
			}
		}
		return true
	}
	if c.in != nil {
		for x := range c.in {
			if !c.out[x] && d.out[x] {
				return false
			}
		}
		return true
	}
	for x := range d.out {
		if !c.out[x] {
			return false
		}
	}
	return true
}

// hull returns the constraints on bit fields that every cube of cs states
// alike: a cube containing them all (nil matches everything).
func hull(cs []cube) cube {
	if len(cs) == 0 {
		return nil
	}
	if len(cs) == 1 && len(cs[0]) > 0 && !slices.ContainsFunc(cs[0], notHullFC) {
		return cs[0] // the hull of one cube of plain constraints is the cube (shared: never modified)
	}
	var buf [16]fc // built here, kept at its exact size
	out := buf[:0]
	for _, f := range cs[0] {
		if f.str != nil {
			continue
		}
		mask, val := f.fixed()
		for _, c := range cs[1:] {
			g, ok := c.field(f.id)
			if !ok || g.str != nil {
				mask = u128{}
				break
			}
			gm, gv := g.fixed()
			mask = mask.and(gm).andNot(val.xor(gv))
			if mask.zero() {
				break
			}
		}
		if !mask.zero() {
			out = append(out, fc{id: f.id, val: val.and(mask), mask: mask})
		}
	}
	if len(out) == 0 {
		return nil
	}
	return slices.Clone(out)
}

// notHullFC reports whether f is not the same as hull keeps of it: a value
// set, names, or no bits.
func notHullFC(f fc) bool {
	return f.set != nil || f.str != nil || f.mask.zero() || f.val.and(f.mask) != f.val
}

// set is a match as cubes, approximated from above (over) and from below
// (under); exact when no approximation was needed (then both are equal).
type set struct {
	over, under []cube
	exact       bool
}

// intersects reports whether some packet is in a and b: yes, no, or maybe
// (when the approximations cannot tell).
func intersects(a, b *set) tri {
	if !anyIntersect(a.over, b.over) {
		return no
	}
	if anyIntersect(a.under, b.under) {
		return yes
	}
	return maybe
}

func anyIntersect(as, bs []cube) bool {
	for _, x := range as {
		for _, y := range bs {
			if x.meets(y) {
				return true
			}
		}
	}
	return false
}

// plainConflict reports whether c and d constrain a field alike without
// value sets or names (plain value and mask) to values that differ: then
// c.andInto(d) fails.
func plainConflict(c, d cube) bool { return !c.meetsOn(d, true) }

// meets reports whether c and d have a packet in common, without building
// their conjunction.
func (c cube) meets(d cube) bool { return c.meetsOn(d, false) }

// meetsOn is meets, on the plain fields only when plain is set (the
// others are then taken to meet).
func (c cube) meetsOn(d cube, plain bool) bool {
	i, j := 0, 0
	for i < len(c) && j < len(d) {
		switch {
		case c[i].id < d[j].id:
			i++
		case d[j].id < c[i].id:
			j++
		default:
			x, y := &c[i], &d[j]
			i++
			j++
			switch {
			case plain && (x.str != nil || y.str != nil || x.set != nil || y.set != nil):
				continue
			case x.str != nil || y.str != nil:
				if x.str == nil || y.str == nil || !strMeets(*x.str, *y.str) {
					return false
				}
				continue
			case x.set != nil || y.set != nil:
				if !bitMeets(*x, *y) {
					return false
				}
				continue
			}
			both := x.mask.and(y.mask)
			if x.val.and(both) != y.val.and(both) {
				return false
			}
		}
	}
	return true
}

// strMeets reports whether two string constraints admit a common value.
func strMeets(a, b strc) bool {
	if a.in == nil && b.in == nil {
		return true // infinitely many strings
	}
	if a.in == nil {
		a, b = b, a
	}
	for x := range a.in {
		if !a.out[x] && !b.out[x] && (b.in == nil || b.in[x]) {
			return true
		}
	}
	return false
}

// tri is a three-valued answer.
type tri int

const (
	no tri = iota
	maybe
	yes
)

// converter turns parsed matches into cube sets on one datapath.
type converter struct {
	d     *expr.Dialect // the match language of the NB's version
	r     expr.Resolver
	as    *asCache
	inexs bool // set when the conversion approximated
	// cover names the port groups that hold every port of the datapath:
	// there `inport == @pg' admits every inport a packet can have (a
	// packet's inport and outport are always ports of its switch), so it
	// is no constraint at all, and such an ACL's cubes are the same on
	// every switch the group covers.
	cover map[string]bool
	sc    *scratch // during toSet: where the cubes are built
	// long converts the long way, without the shortcuts that give the
	// same cubes (andTerm's, setUnion): for the tests that check that.
	long bool
}

// asCache caches address set members converted to constants, and the
// cubes of comparisons with address sets, NB-wide.
type asCache struct {
	mu    sync.Mutex
	m     map[string]asMembers
	cubes sync.Map // field and constant set → []cube
	// global, when set, has the address sets' entries already lexed into
	// constants (the parser's, sorted by value): members takes them from
	// there, in the entries' order.
	global *expr.MapResolver
}

// asMembers is an address set's entries (the resolver's slice, to tell
// that it is the same set) and their constants.
type asMembers struct {
	addrs  []string
	consts []expr.Const
}

func (e asMembers) of(addrs []string) bool {
	return len(e.addrs) == len(addrs) && (len(addrs) == 0 || &e.addrs[0] == &addrs[0])
}

func newASCache() *asCache { return &asCache{m: map[string]asMembers{}} }

// members returns the integer constants of an address set's addresses as
// OVN reads them (the first token of each entry; non-integers skipped).
func (c *asCache) members(name string, addrs []string) []expr.Const {
	c.mu.Lock()
	v, ok := c.m[name]
	c.mu.Unlock()
	if ok && v.of(addrs) {
		return v.consts
	}
	out, ok := c.lexed(name, addrs)
	if !ok {
		out = parseMembers(addrs)
	}
	c.mu.Lock()
	c.m[name] = asMembers{addrs, out}
	c.mu.Unlock()
	return out
}

// parseMembers reads addrs as OVN does: the first tokens of the entries
// as one set of constants of a 128-bit field, or, when that does not
// parse, each alone (those that do not parse skipped).
func parseMembers(addrs []string) []expr.Const {
	var toks []string
	for _, a := range addrs {
		if f := strings.Fields(a); len(f) > 0 {
			toks = append(toks, f[0])
		}
	}
	var out []expr.Const
	if e, err := expr.Parse("xxreg0 == {"+strings.Join(toks, ", ")+"}", nil); err == nil && len(toks) > 0 {
		out = cmpValues(e.Root)
	} else {
		for _, t := range toks {
			if e, err := expr.Parse("xxreg0 == "+t, nil); err == nil {
				out = append(out, cmpValues(e.Root)...)
			}
		}
	}
	return out
}

// lexed is parseMembers(addrs) from the constants the global resolver
// lexed (the same lexer's items for the same tokens), ok false unless
// every entry's first token is one of them whole, an integer or masked
// integer of at most 128 bits: then the set parses, and each token is
// that constant.
func (c *asCache) lexed(name string, addrs []string) ([]expr.Const, bool) {
	if c.global == nil || len(addrs) == 0 {
		return nil, false
	}
	if g := c.global.AddressSets[name]; len(g) != len(addrs) || &g[0] != &addrs[0] {
		return nil, false
	}
	ms, ok := c.global.AddressSetMembers(name)
	if !ok || len(ms) == 0 {
		return nil, false
	}
	var byText map[string]int
	if len(ms) > 16 {
		byText = make(map[string]int, len(ms))
		for i := range ms {
			byText[ms[i].Text] = i
		}
	}
	out := make([]expr.Const, 0, len(addrs))
	for _, a := range addrs {
		tok := strings.TrimLeftFunc(a, unicode.IsSpace)
		if end := strings.IndexFunc(tok, unicode.IsSpace); end >= 0 {
			tok = tok[:end]
		}
		if tok == "" {
			continue
		}
		i, found := -1, false
		if byText != nil {
			i, found = byText[tok]
		} else {
			i = slices.IndexFunc(ms, func(m expr.Const) bool { return m.Text == tok })
			found = i >= 0
		}
		if !found {
			return nil, false
		}
		m := ms[i]
		if m.Kind != expr.IntConst && m.Kind != expr.MaskedConst || m.Width() > 128 {
			return nil, false
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, false
	}
	return out, true
}

func cmpValues(n expr.Node) []expr.Const {
	if c, ok := n.(*expr.Cmp); ok {
		return c.Values.Values
	}
	return nil
}

var prereqCache sync.Map // prereqKey → expr.Node

type prereqKey struct {
	d    *expr.Dialect
	text string
}

// parsedText parses a symbol's prerequisites or predicate expansion in
// dialect d, the one whose table the symbol came from (another version's
// table may lack the fields it names: from_evpn_vtep is __inport[31]).
func parsedText(d *expr.Dialect, s string) expr.Node {
	k := prereqKey{d, s}
	if n, ok := prereqCache.Load(k); ok {
		return n.(expr.Node)
	}
	e, err := d.Parse(s, nil)
	if err != nil {
		panic("lint: OVN " + d.String() + "'s own symbol table does not parse " + s + ": " + err.Error())
	}
	prereqCache.Store(k, e.Root)
	return e.Root
}

// toSet converts a parsed match.
func (cv *converter) toSet(n expr.Node) *set {
	return cv.toSetOf(func(up bool) []cube { return cv.node(n, false, up) })
}

// toSetTerms converts the conjunction of terms but those at the indexes
// skip (increasing), as toSet converts a conjunction of them (without
// building it).
func (cv *converter) toSetTerms(terms []expr.Node, skip []int) *set {
	return cv.toSetOf(func(up bool) []cube { return cv.conj(terms, skip, false, up) })
}

// toSetOf is toSet with node(n, false, up) given as conv.
func (cv *converter) toSetOf(conv func(up bool) []cube) *set {
	if cv.sc == nil {
		cv.sc = getScratch()
		defer func() { cv.sc.release(); cv.sc = nil }()
	}
	cv.inexs = false
	over := conv(true)
	exact := !cv.inexs
	if exact {
		over = compact(over)
		return &set{over: over, under: over, exact: true}
	}
	cv.inexs = false
	under := conv(false)
	return &set{over: compact(over), under: compact(under)}
}

// and is andSets during a conversion: the result in the scratch.
func (cv *converter) and(a, b []cube) ([]cube, bool) {
	if cv.sc == nil {
		return andSets(a, b)
	}
	return cv.sc.and(a, b)
}

// approx is what an unrepresentable constraint becomes.
func (cv *converter) approx(up bool) []cube {
	cv.inexs = true
	if up {
		return []cube{trueCube}
	}
	return nil
}

// andSets returns the conjunction of two cube lists in an allocation of
// its own (ok false when it would exceed maxCubes).
func andSets(a, b []cube) ([]cube, bool) { return andSetsIn(nil, a, b) }

// andSetsIn is andSets with the result in ar (nil: an allocation of its
// own).
func andSetsIn(ar *arena, a, b []cube) ([]cube, bool) {
	if isTrue(a) {
		return b, true
	}
	if isTrue(b) {
		return a, true
	}
	if ar != nil && len(a) == 1 {
		if out, ok, done := ar.andOne(a[0], b); done {
			return out, ok
		}
	}
	sc := getScratch()
	defer sc.release()
	out, ok := sc.and(a, b)
	if !ok || out == nil {
		return out, ok
	}
	if ar == nil {
		return compact(out), true
	}
	return ar.compact(out), true
}

// andOne is andSetsIn(ar, {d}, bs) built straight in the arena (one cube
// of port group terms times the ACL's other cubes, splitSet's usual
// product) when it fits a chunk; done is false when it does not.
func (ar *arena) andOne(d cube, bs []cube) (out []cube, ok, done bool) {
	n := 0
	for _, y := range bs {
		n += len(d) + len(y)
	}
	if n > arenaFcs/4 || len(bs) > arenaCubes/4 {
		return nil, false, false
	}
	ar.mu.Lock()
	defer ar.mu.Unlock()
	ar.reserve(n, len(bs))
	slab, cs := ar.fcs, ar.cubes[:0:len(bs)]
	k := 0
	for _, y := range bs {
		var z cube
		if i := insertAt(d, y); i >= 0 { // d's one constraint on a field y leaves free: andInto's merge, copied
			z = slab[k : k+len(y)+1 : k+len(y)+1]
			copy(z, y[:i])
			z[i] = d[0]
			copy(z[i+1:], y[i:])
		} else {
			var ok bool
			if z, ok = d.andInto(slab[k:k:k+len(d)+len(y)], y); !ok {
				continue
			}
		}
		cs = append(cs, z[:len(z):len(z)])
		k += len(z)
	}
	if len(cs) == 0 {
		return make([]cube, 0), true, true
	}
	ar.fcs, ar.cubes = ar.fcs[k:], ar.cubes[len(cs):]
	return cs[:len(cs):len(cs)], true, true
}

// insertAt returns where d's single constraint goes among y's (sorted by
// field), -1 when d has more than one or y constrains its field too.
func insertAt(d, y cube) int {
	if len(d) != 1 {
		return -1
	}
	i := 0
	for i < len(y) && y[i].id < d[0].id {
		i++
	}
	if i < len(y) && y[i].id == d[0].id {
		return -1
	}
	return i
}

func isTrue(cs []cube) bool { return len(cs) == 1 && len(cs[0]) == 0 }

// scratch is where one conversion builds its cubes, the products of each
// step of a conjunction included: most of them are garbage once the next
// step is done, so they are carved from chunks reused across conversions
// instead of a new block per step, and the result is copied out (compact)
// in one block of its exact size. Nothing built in a scratch may outlive
// its release but through compact.
type scratch struct {
	fcs   []fc   // the current chunk of constraints; cubes slice it
	cubes []cube // the current chunk of cube lists
	tmp   []cube // and's result while it is built
}

const (
	scratchFcs   = 8192
	scratchCubes = 1024
)

var scratchPool = sync.Pool{New: func() any {
	return &scratch{fcs: make([]fc, 0, scratchFcs), cubes: make([]cube, 0, scratchCubes)}
}}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// release makes the scratch's memory reusable: nothing may still refer
// to it. Chunks grown far beyond the usual size are dropped.
func (sc *scratch) release() {
	if cap(sc.fcs) > 16*scratchFcs {
		sc.fcs = make([]fc, 0, scratchFcs)
	}
	if cap(sc.cubes) > 16*scratchCubes {
		sc.cubes = make([]cube, 0, scratchCubes)
	}
	if cap(sc.tmp) > 16*scratchCubes {
		sc.tmp = nil
	}
	clear(sc.fcs) // drop the pointers to sets, names and old chunks
	clear(sc.cubes)
	sc.fcs, sc.cubes, sc.tmp = sc.fcs[:0], sc.cubes[:0], sc.tmp[:0]
	scratchPool.Put(sc)
}

// room returns the unused part of the current chunk of constraints with
// room for n, starting a new chunk when the current one is full (the old
// one stays with the cubes that slice it).
func (sc *scratch) room(n int) []fc {
	if cap(sc.fcs)-len(sc.fcs) < n {
		sc.fcs = make([]fc, 0, max(cap(sc.fcs), 2*n, scratchFcs))
	}
	return sc.fcs[len(sc.fcs):len(sc.fcs):cap(sc.fcs)]
}

// cubeList returns a list of the cubes cs in the scratch.
func (sc *scratch) cubeList(cs []cube) []cube {
	n := len(cs)
	if cap(sc.cubes)-len(sc.cubes) < n {
		sc.cubes = make([]cube, 0, max(cap(sc.cubes), 2*n, scratchCubes))
	}
	start := len(sc.cubes)
	sc.cubes = append(sc.cubes, cs...)
	return sc.cubes[start:len(sc.cubes):len(sc.cubes)]
}

// and is andSets with the result in the scratch (or a or b themselves).
func (sc *scratch) and(a, b []cube) ([]cube, bool) {
	if isTrue(a) {
		return b, true
	}
	if isTrue(b) {
		return a, true
	}
	if len(a)*len(b) > 64*maxCubes {
		return nil, false
	}
	out := sc.tmp[:0]
	defer func() { clear(out); sc.tmp = out[:0] }()
	// In a product of many pairs (ranges decomposed into prefixes) most
	// fail on a plain field: a walk that copies nothing rules them out.
	pre := len(a) > 1 && len(b) > 1
	for _, x := range a {
		for _, y := range b {
			if pre && plainConflict(x, y) {
				continue
			}
			z, ok := x.andInto(sc.room(len(x)+len(y)), y)
			if !ok {
				continue
			}
			sc.fcs = sc.fcs[:len(sc.fcs)+len(z)]
			out = append(out, z[:len(z):len(z)])
			if len(out) > maxCubes {
				return nil, false
			}
		}
	}
	if len(out) == 0 {
		return make([]cube, 0), true
	}
	return sc.cubeList(out), true
}

// compact copies cs into one block of its exact size (empty cubes keep
// their nil-ness).
func compact(cs []cube) []cube {
	if cs == nil {
		return nil
	}
	out := make([]cube, len(cs))
	copyCubes(out, make([]fc, constraints(cs)), cs)
	return out
}

// constraints counts the constraints of cs.
func constraints(cs []cube) int {
	n := 0
	for _, c := range cs {
		n += len(c)
	}
	return n
}

// copyCubes copies the cubes cs into out, their constraints into slab.
func copyCubes(out []cube, slab []fc, cs []cube) {
	k := 0
	for i, c := range cs {
		if c == nil {
			continue
		}
		copy(slab[k:], c)
		out[i] = slab[k : k+len(c) : k+len(c)]
		k += len(c)
	}
}

// arena holds the cubes of sets that all live as long as one switch's
// view (splitSet's products, thousands per switch): carved from chunks
// instead of two allocations each. Safe for concurrent use.
type arena struct {
	mu        sync.Mutex
	fcs       []fc
	cubes     []cube
	held      []*[]fc   // the chunks, recycled with the switch (arena.go)
	heldCubes []*[]cube // the same for cubes
	sets      []set     // the current chunk of sets (newSet)
	heldSets  []*[]set
}

const (
	arenaFcs   = 512
	arenaCubes = 128
)

// compact is compact with the copy in the arena.
func (ar *arena) compact(cs []cube) []cube {
	if cs == nil {
		return nil
	}
	slab, out, ok := ar.carve(constraints(cs), len(cs))
	if !ok {
		return compact(cs)
	}
	copyCubes(out, slab, cs)
	return out
}

// node converts n (negated when neg); up selects the approximation from
// above.
func (cv *converter) node(n expr.Node, neg, up bool) []cube {
	switch n := n.(type) {
	case *expr.Paren:
		return cv.node(n.X, neg, up)
	case *expr.Not:
		return cv.node(n.X, !neg, up)
	case *expr.Bool:
		if n.Value != neg {
			return []cube{trueCube}
		}
		return nil
	case *expr.Binary:
		if n.Or == neg { // conjunction
			return cv.conj(n.Terms, nil, neg, up)
		}
		var acc []cube
		for _, t := range n.Terms {
			acc = append(acc, cv.node(t, neg, up)...)
			if len(acc) > maxCubes {
				return cv.approx(up)
			}
		}
		return acc
	case *expr.FieldTest, *expr.Cmp, *expr.Range:
		cs, sym, wrap := cv.leaf(n, neg, up)
		if wrap {
			return cv.withPrereqs(sym, cs, up)
		}
		return cs
	}
	return cv.approx(up)
}

// conj converts the conjunction of terms but those at the indexes skip
// (increasing).
func (cv *converter) conj(terms []expr.Node, skip []int, neg, up bool) []cube {
	acc := []cube{trueCube}
	for k, t := range terms {
		if len(skip) > 0 && skip[0] == k {
			skip = skip[1:]
			continue
		}
		var ok bool
		acc, ok = cv.andTerm(acc, t, neg, up)
		if !ok {
			return cv.approx(up)
		}
		if len(acc) == 0 {
			return nil
		}
	}
	return acc
}

// leaf converts a field test, comparison or range (negated when neg)
// without its field's prerequisites: node is withPrereqs(sym, cs) when
// wrap is set, cs itself otherwise.
func (cv *converter) leaf(n expr.Node, neg, up bool) (cs []cube, sym *expr.Symbol, wrap bool) {
	switch n := n.(type) {
	case *expr.FieldTest:
		f := n.Field
		if f.Symbol.IsPredicate() {
			return cv.textCubes(f.Symbol, true, neg, up), f.Symbol, true
		}
		if f.NBits > 1 { // `!field' means field == 0 whatever the polarity
			return []cube{bitCube(f, u128{}, onesN(f.NBits))}, f.Symbol, true
		}
		v := u128{1, 0}
		if neg {
			v = u128{}
		}
		return []cube{bitCube(f, v, onesN(1))}, f.Symbol, true
	case *expr.Cmp:
		op := n.FieldOp()
		if neg {
			op = op.Invert()
		}
		return cv.cmp(n.Field, op, n.Values, up), n.Field.Symbol, true
	case *expr.Range:
		lo, hi := n.LowOp.Turn(), n.HighOp
		if !neg {
			if cs, ok := cv.interval(n); ok {
				return cs, n.Field.Symbol, true
			}
		}
		a := cv.cmp(n.Field, lo, n.Low, up)
		b := cv.cmp(n.Field, hi, n.High, up)
		if neg {
			a = cv.cmp(n.Field, lo.Invert(), n.Low, up)
			b = cv.cmp(n.Field, hi.Invert(), n.High, up)
			return append(a, b...), n.Field.Symbol, true
		}
		ab, ok := cv.and(a, b)
		if !ok {
			return cv.approx(up), nil, false
		}
		return ab, n.Field.Symbol, true
	}
	return cv.approx(up), nil, false
}

// andTerm is cv.and(acc, cv.node(t, neg, up)), one step of a
// conjunction. When every cube of acc already lies within one of the
// term's prerequisite cubes (and those are disjoint), ANDing them into
// the term first changes nothing the product keeps: each cube x of acc
// meets exactly one prerequisite cube p, x∧y∧p is x∧y constraint for
// constraint (p's bits are plain and fixed alike in x, and no cube y
// of the term has a value set on p's fields), and the products come out
// in the same order. So the term's cubes are ANDed in directly: `tcp &&
// tcp.dst >= 1000 && tcp.dst <= 2000' no longer multiplies each range's
// prefixes by ip4 || ip6 first. The bounds keep every product within
// the sizes at which the long way would have given up.
func (cv *converter) andTerm(acc []cube, t expr.Node, neg, up bool) ([]cube, bool) {
	u, uneg := t, neg
	for {
		switch x := u.(type) {
		case *expr.Paren:
			u = x.X
			continue
		case *expr.Not:
			u, uneg = x.X, !uneg
			continue
		}
		break
	}
	switch u.(type) {
	case *expr.FieldTest, *expr.Cmp, *expr.Range:
	default:
		return cv.and(acc, cv.node(t, neg, up))
	}
	cs, sym, wrap := cv.leaf(u, uneg, up)
	if !wrap || sym.Prereqs == "" || len(cs) == 0 {
		return cv.and(acc, cs)
	}
	pre := cv.textCubes(sym, false, false, up)
	if !cv.long && !isTrue(acc) && len(cs)*len(pre) <= maxCubes && len(acc)*len(cs)*len(pre) <= 64*maxCubes && impliedPrereqs(acc, cs, pre) {
		return cv.and(acc, cs)
	}
	withPre, ok := cv.and(cs, pre)
	if !ok {
		return cv.and(acc, cv.approx(up))
	}
	return cv.and(acc, withPre)
}

// impliedPrereqs reports whether ANDing the prerequisite cubes pre into
// cs before ANDing acc in changes nothing (andTerm): pre's cubes are
// pairwise disjoint and plain, each cube of acc is within one of them with plain
// constraints on its fields, and no cube of cs has a value set or names
// on them (pre's constraints are all plain).
func impliedPrereqs(acc, cs, pre []cube) bool {
	for i, p := range pre {
		if len(p) == 0 || p.hasSet() || !strFree(p) {
			return false
		}
		for _, q := range pre[i+1:] {
			if p.meets(q) {
				return false
			}
		}
	}
	for _, x := range acc {
		if !slices.ContainsFunc(pre, func(p cube) bool { return plainWithin(x, p) }) {
			return false
		}
	}
	for _, p := range pre {
		for _, f := range p {
			for _, y := range cs {
				if g, ok := y.field(f.id); ok && (g.set != nil || g.str != nil) {
					return false
				}
			}
		}
	}
	return true
}

// strFree reports whether c constrains no string field.
func strFree(c cube) bool {
	return !slices.ContainsFunc(c, func(f fc) bool { return f.str != nil })
}

// plainWithin reports whether x fixes every bit p's plain constraints fix,
// to the same values, with plain constraints of its own.
func plainWithin(x, p cube) bool {
	for i := range p {
		f := &p[i]
		g, ok := x.field(f.id)
		if !ok || f.set != nil || f.str != nil || g.set != nil || g.str != nil ||
			g.mask.and(f.mask) != f.mask || g.val.and(f.mask) != f.val {
			return false
		}
	}
	return true
}

// textCubes converts a symbol's prerequisites (pred false) or its
// predicate's expansion, caching the result by symbol (no text to hash):
// these need no resolver and are always exact.
func (cv *converter) textCubes(sym *expr.Symbol, pred, neg, up bool) []cube {
	type key struct {
		sym             *expr.Symbol
		pred, neg, long bool
	}
	k := key{sym, pred, neg, cv.long}
	if x, ok := textCubeCache.Load(k); ok {
		return x.([]cube)
	}
	text := sym.Prereqs
	if pred {
		text = sym.Predicate
	}
	sub := &converter{d: cv.d, as: cv.as, sc: cv.sc, long: cv.long}
	cs := sub.node(parsedText(cv.d, text), neg, true)
	if sub.inexs {
		cv.inexs = true
		sub.inexs = false
		return sub.node(parsedText(cv.d, text), neg, up)
	}
	cs = compact(cs) // kept: out of the scratch
	textCubeCache.Store(k, cs)
	return cs
}

var textCubeCache sync.Map

// withPrereqs ANDs sym's prerequisites (never negated) into cs.
func (cv *converter) withPrereqs(sym *expr.Symbol, cs []cube, up bool) []cube {
	if sym.Prereqs == "" || len(cs) == 0 {
		return cs
	}
	out, ok := cv.and(cs, cv.textCubes(sym, false, false, up))
	if !ok {
		return cv.approx(up)
	}
	return out
}

// eqCubes converts `f == {vals}' (cs resolved): the values with one mask
// are one cube whose field is set-valued (valueset.go). The cubes of a set
// naming an address set are converted once per run and shared.
func (cv *converter) eqCubes(f expr.Field, key *eqKey, runs [][]expr.Const, up bool) []cube {
	full := onesN(f.NBits)
	if out, ok := cv.oneMask(f, key, runs); ok {
		return out
	}
	type group struct {
		mask u128
		vals []u128
	}
	var groups []group
	for _, vals := range runs {
		for _, v := range vals {
			mask := full
			if v.Kind == expr.MaskedConst {
				mask = fromBig(v.Mask).and(full)
			}
			val := fromBig(v.Value).and(mask)
			i := slices.IndexFunc(groups, func(g group) bool { return g.mask == mask })
			if i < 0 {
				i = len(groups)
				groups = append(groups, group{mask: mask})
			}
			groups[i].vals = append(groups[i].vals, val)
		}
	}
	if len(groups) > maxCubes {
		return cv.approx(up)
	}
	out := make([]cube, 0, len(groups))
	for _, g := range groups {
		out = append(out, setCube(f, g.mask, g.vals))
	}
	if key != nil {
		cv.as.cubes.Store(*key, out)
	}
	return out
}

// oneMask is eqCubes when every value has the same mask (the common
// case: one group, built without the groups' lists); ok is false
// otherwise.
func (cv *converter) oneMask(f expr.Field, key *eqKey, runs [][]expr.Const) ([]cube, bool) {
	full := onesN(f.NBits)
	maskOf := func(v expr.Const) u128 {
		if v.Kind == expr.MaskedConst {
			return fromBig(v.Mask).and(full)
		}
		return full
	}
	n := 0
	var mask u128
	for _, vals := range runs {
		for _, v := range vals {
			if n++; n == 1 {
				mask = maskOf(v)
			} else if maskOf(v) != mask {
				return nil, false
			}
		}
	}
	if n == 0 {
		return nil, false
	}
	var c cube
	if n == 1 {
		vals := runs[slices.IndexFunc(runs, func(r []expr.Const) bool { return len(r) > 0 })]
		if key == nil && cv.sc != nil { // in the scratch: compacted with the rest
			fcs := cv.sc.room(1)[:1]
			cv.sc.fcs = cv.sc.fcs[:len(cv.sc.fcs)+1]
			fcs[0] = bitCube1(f, fromBig(vals[0].Value).and(mask), mask)
			return cv.sc.cubeList([]cube{fcs[:1:1]}), true
		}
		c = bitCube(f, fromBig(vals[0].Value).and(mask), mask)
	} else {
		vs := make([]u128, 0, n)
		for _, vals := range runs {
			for _, v := range vals {
				vs = append(vs, fromBig(v.Value).and(mask))
			}
		}
		c = setCube(f, mask, vs)
	}
	out := []cube{c}
	if key != nil {
		cv.as.cubes.Store(*key, out)
	}
	return out, true
}

// setUnion converts `f == {$as1, $as2, ...}' from the cached cube of
// each `f == $asN' (each converted once per run, not per ACL, and the
// union not cached: such sets rarely repeat): when every one is a single
// cube of one mask, the union is their values in order, as the set's own
// conversion would list them (newVset keeps the first of duplicates
// either way). ok is false otherwise.
func (cv *converter) setUnion(f expr.Field, cs expr.ConstSet) ([]cube, bool) {
	if len(cs.Values) < 2 || len(cs.Values) > 8 || cv.long || cv.as == nil || cv.r == nil {
		return nil, false
	}
	var parts [8]fc
	n := 0
	for i, c := range cs.Values {
		if c.Kind != expr.AddressSetRef {
			return nil, false
		}
		k := eqKey{sym: f.Symbol, ofs: f.Ofs, nbits: f.NBits, single: true, kind: c.Kind, str: c.Str}
		var one []cube
		if x, ok := cv.as.cubes.Load(k); ok {
			one = x.([]cube)
		} else {
			addrs, ok := cv.r.AddressSet(c.Str)
			if !ok {
				return nil, false
			}
			if one, ok = cv.oneMask(f, &k, [][]expr.Const{cv.as.members(c.Str, addrs)}); !ok {
				return nil, false
			}
		}
		if len(one) != 1 || len(one[0]) != 1 {
			return nil, false
		}
		parts[i] = one[0][0]
		if parts[i].set != nil {
			n += len(parts[i].set.vals)
		} else {
			n++
		}
	}
	mask := parts[0].mask
	if parts[0].set != nil {
		mask = parts[0].set.mask
	}
	vals := make([]u128, 0, n)
	for _, p := range parts[:len(cs.Values)] {
		switch {
		case p.str != nil || p.id != parts[0].id:
			return nil, false
		case p.set != nil:
			if p.set.mask != mask || !p.mask.zero() {
				return nil, false
			}
			vals = append(vals, p.set.vals...)
		default:
			if p.mask != mask {
				return nil, false
			}
			vals = append(vals, p.val)
		}
	}
	s, one, _ := newVset(mask, vals)
	if s == nil {
		return []cube{{{id: parts[0].id, val: one, mask: mask}}}, true
	}
	return []cube{{{id: parts[0].id, set: s}}}, true
}

// eqKey identifies `f == {cs}' in the cache of cubes: the field's bits
// and, for a single address set, its name (no text to build), else the
// constants as text.
type eqKey struct {
	sym         *expr.Symbol
	ofs, nbits  int
	kind        expr.ConstKind
	str         string // the address set; or the constants as text
	single, set bool
}

// eqKeyOf returns the key of `f == {cs}' in the cache of cubes, ok false
// when it is not cached: cs names no address set (or there is no cache).
func (cv *converter) eqKeyOf(f expr.Field, cs expr.ConstSet) (k eqKey, ok bool) {
	if cv.as == nil {
		return k, false
	}
	k = eqKey{sym: f.Symbol, ofs: f.Ofs, nbits: f.NBits}
	if len(cs.Values) == 1 {
		c := cs.Values[0]
		switch c.Kind {
		case expr.AddressSetRef:
			k.single, k.kind, k.str = true, c.Kind, c.Str
			return k, cv.r != nil
		}
		// A single constant is one cube, built faster than looked up
		// (and, cached, the cache held one per distinct constant of the
		// NB all run long).
		return k, false
	}
	if cv.r == nil || !slices.ContainsFunc(cs.Values, func(c expr.Const) bool { return c.Kind == expr.AddressSetRef }) {
		return k, false
	}
	var b []byte
	for _, c := range cs.Values {
		b = append(b, 0)
		b = strconv.AppendInt(b, int64(c.Kind), 10)
		b = append(b, ':')
		b = append(b, c.Str...)
		b = append(b, ':')
		if c.Value != nil {
			b = c.Value.Append(b, 16)
		}
		b = append(b, '/')
		if c.Mask != nil {
			b = c.Mask.Append(b, 16)
		}
	}
	k.set, k.str = true, string(b)
	return k, true
}

// setCube constrains field f (its selected bits) under mask to one of
// vals.
func setCube(f expr.Field, mask u128, vals []u128) cube {
	if len(vals) == 1 {
		return bitCube(f, vals[0], mask)
	}
	root, ofs := f.Symbol.Root()
	ofs += f.Ofs
	mask = mask.and(onesN(f.NBits))
	sh := make([]u128, len(vals))
	for i, v := range vals {
		sh[i] = v.and(mask).shl(ofs)
	}
	s, one, _ := newVset(mask.shl(ofs), sh)
	if s == nil {
		return cube{{id: idOf(root.Name), val: one, mask: mask.shl(ofs)}}
	}
	return cube{{id: idOf(root.Name), set: s}}
}

// bitCube constrains field f (its selected bits) to val under mask.
func bitCube(f expr.Field, val, mask u128) cube { return cube{bitCube1(f, val, mask)} }

// bitCube1 is bitCube's constraint.
func bitCube1(f expr.Field, val, mask u128) fc {
	root, ofs := f.Symbol.Root()
	ofs += f.Ofs
	mask = mask.and(onesN(f.NBits))
	return fc{id: idOf(root.Name), val: val.and(mask).shl(ofs), mask: mask.shl(ofs)}
}

// expand resolves references in cs; ok is false when one cannot be
// resolved. all is set when cs names a port group that covers the
// datapath.
func (cv *converter) expand(cs expr.ConstSet) (out []expr.Const, all, ok bool) {
	if len(cs.Values) == 1 && cs.Values[0].Kind == expr.AddressSetRef && cv.r != nil {
		// The cached members themselves, not a copy (never modified).
		name := cs.Values[0].Str
		addrs, ok := cv.r.AddressSet(name)
		if !ok {
			return nil, false, false
		}
		return cv.as.members(name, addrs), false, true
	}
	if !slices.ContainsFunc(cs.Values, func(c expr.Const) bool {
		return c.Kind == expr.AddressSetRef || c.Kind == expr.PortGroupRef
	}) {
		return cs.Values, false, true // the constants themselves (callers only read them)
	}
	for _, c := range cs.Values {
		switch c.Kind {
		case expr.AddressSetRef:
			if cv.r == nil {
				return nil, false, false
			}
			addrs, ok := cv.r.AddressSet(c.Str)
			if !ok {
				return nil, false, false
			}
			out = append(out, cv.as.members(c.Str, addrs)...)
		case expr.PortGroupRef:
			if cv.cover[c.Str] {
				all = true
				continue
			}
			if cv.r == nil {
				return nil, false, false
			}
			ports, ok := cv.r.PortGroup(c.Str)
			if !ok {
				return nil, false, false
			}
			for _, p := range ports {
				out = append(out, expr.Const{Kind: expr.StringConst, Str: p})
			}
		default:
			out = append(out, c)
		}
	}
	return out, all, true
}

// expandRuns is expand for a set of constants and address sets (ok
// false when it names a port group or an address set that does not
// exist): the runs of constants expand would concatenate, appended to
// out in order.
func (cv *converter) expandRuns(cs expr.ConstSet, out [][]expr.Const) ([][]expr.Const, bool) {
	start := 0
	for i, c := range cs.Values {
		switch c.Kind {
		case expr.PortGroupRef:
			return nil, false
		case expr.AddressSetRef:
			if start < i {
				out = append(out, cs.Values[start:i])
			}
			start = i + 1
			addrs, ok := cv.r.AddressSet(c.Str)
			if !ok {
				return nil, false
			}
			out = append(out, cv.as.members(c.Str, addrs))
		}
	}
	if start < len(cs.Values) {
		out = append(out, cs.Values[start:])
	}
	return out, true
}

// cmp converts `f op values' (without prerequisites).
func (cv *converter) cmp(f expr.Field, op expr.Relop, cs expr.ConstSet, up bool) []cube {
	var key *eqKey
	if op == expr.Eq && !f.Symbol.IsString() && !f.Symbol.IsPredicate() && f.NBits <= 128 {
		if out, ok := cv.setUnion(f, cs); ok {
			return out
		}
		if k, ok := cv.eqKeyOf(f, cs); ok {
			if out, ok := cv.as.cubes.Load(k); ok {
				return out.([]cube)
			}
			key = &k
		}
	}
	if key != nil && key.set { // its members where they are, not copied into one list
		var buf [4][]expr.Const
		if runs, ok := cv.expandRuns(cs, buf[:0]); ok {
			return cv.eqCubes(f, key, runs, up)
		}
	}
	vals, all, ok := cv.expand(cs)
	if !ok {
		return cv.approx(up)
	}
	if all && f.Symbol.IsString() && (op == expr.Eq || op == expr.Ne) {
		if op == expr.Eq {
			return []cube{trueCube}
		}
		return nil
	}
	if f.Symbol.IsString() {
		set := make(map[string]bool, len(vals))
		for _, v := range vals {
			set[v.Str] = true
		}
		switch op {
		case expr.Eq:
			if len(set) == 0 {
				return nil
			}
			return []cube{{{id: idOf(f.Symbol.Name), str: &strc{in: set}}}}
		case expr.Ne:
			return []cube{{{id: idOf(f.Symbol.Name), str: &strc{out: set}}}}
		}
		return cv.approx(up)
	}
	if f.Symbol.IsPredicate() { // tcp == 1, eth.bcast != 0 ...
		if len(vals) != 1 || vals[0].Value == nil {
			return cv.approx(up)
		}
		pos := (vals[0].Value.Sign() != 0) == (op == expr.Eq)
		if op != expr.Eq && op != expr.Ne {
			return cv.approx(up)
		}
		return cv.textCubes(f.Symbol, true, !pos, up)
	}
	if f.NBits > 128 {
		return cv.approx(up)
	}
	full := onesN(f.NBits)
	switch op {
	case expr.Eq:
		return cv.eqCubes(f, key, [][]expr.Const{vals}, up)
	case expr.Ne:
		acc := []cube{trueCube}
		for _, v := range vals {
			mask := full
			if v.Kind == expr.MaskedConst {
				mask = fromBig(v.Mask).and(full)
			}
			if mask.popcount() > maxNeBits {
				return cv.approx(up)
			}
			val := fromBig(v.Value)
			var alts []cube
			for i := 0; i < f.NBits; i++ {
				if mask.bit(i) {
					bit := u128{1, 0}.shl(i)
					flipped := u128{}
					if !val.bit(i) {
						flipped = bit
					}
					alts = append(alts, bitCube(f, flipped, bit))
				}
			}
			var ok bool
			if acc, ok = cv.and(acc, alts); !ok {
				return cv.approx(up)
			}
		}
		return acc
	}
	// <, <=, >, >= on a single unmasked constant: prefix decomposition.
	if len(vals) != 1 || vals[0].Kind != expr.IntConst || f.NBits > 64 {
		return cv.approx(up)
	}
	v := fromBig(vals[0].Value)
	if v[1] != 0 {
		return cv.approx(up)
	}
	maxv := onesN(f.NBits)[0]
	x := v[0]
	var lo, hi uint64
	switch op {
	case expr.Lt:
		if x == 0 {
			return nil
		}
		lo, hi = 0, x-1
	case expr.Le:
		lo, hi = 0, x
	case expr.Gt:
		if x >= maxv {
			return nil
		}
		lo, hi = x+1, maxv
	case expr.Ge:
		lo, hi = x, maxv
	}
	if hi > maxv {
		hi = maxv
	}
	return cv.prefixCubes(f, lo, hi)
}

// interval converts `lo <(=) field <(=) hi' with plain constants directly
// into prefixes (instead of intersecting two half-ranges).
func (cv *converter) interval(n *expr.Range) ([]cube, bool) {
	f := n.Field
	if f.NBits > 64 || len(n.Low.Values) != 1 || len(n.High.Values) != 1 {
		return nil, false
	}
	l, h := n.Low.Values[0], n.High.Values[0]
	if l.Kind != expr.IntConst || h.Kind != expr.IntConst || !l.Value.IsUint64() || !h.Value.IsUint64() {
		return nil, false
	}
	lo, hi := l.Value.Uint64(), h.Value.Uint64()
	if n.LowOp == expr.Lt {
		if lo == ^uint64(0) {
			return nil, true
		}
		lo++
	} else if n.LowOp != expr.Le {
		return nil, false
	}
	if n.HighOp == expr.Lt {
		if hi == 0 {
			return nil, true
		}
		hi--
	} else if n.HighOp != expr.Le {
		return nil, false
	}
	if maxv := onesN(f.NBits)[0]; hi > maxv {
		hi = maxv
	}
	if lo > hi {
		return nil, true
	}
	return cv.prefixCubes(f, lo, hi), true
}

// prefixCubes returns the cubes of lo <= f <= hi, one per prefix, in the
// scratch during a conversion.
func (cv *converter) prefixCubes(f expr.Field, lo, hi uint64) []cube {
	var buf [130][2]uint64
	ps := appendPrefixes(buf[:0], lo, hi, f.NBits)
	if cv.sc == nil || len(ps) > 130 {
		out := make([]cube, len(ps))
		for i, p := range ps {
			out[i] = bitCube(f, u128{p[0], 0}, u128{p[1], 0})
		}
		return out
	}
	fcs := cv.sc.room(len(ps))[:len(ps)]
	cv.sc.fcs = cv.sc.fcs[:len(cv.sc.fcs)+len(ps)]
	var cb [130]cube
	cs := cb[:len(ps)]
	for i, p := range ps {
		fcs[i] = bitCube1(f, u128{p[0], 0}, u128{p[1], 0})
		cs[i] = fcs[i : i+1 : i+1]
	}
	return cv.sc.cubeList(cs)
}

// prefixes splits [lo, hi] of an n-bit field into value/mask prefixes.
func prefixes(lo, hi uint64, n int) [][2]uint64 { return appendPrefixes(nil, lo, hi, n) }

// appendPrefixes is prefixes appending to out.
func appendPrefixes(out [][2]uint64, lo, hi uint64, n int) [][2]uint64 {
	full := onesN(n)[0]
	for {
		size := uint64(1)
		for {
			next := size * 2
			if next == 0 || next-1 > full || lo&(next-1) != 0 || lo+next-1 < lo || lo+next-1 > hi {
				break
			}
			size = next
		}
		out = append(out, [2]uint64{lo, full &^ (size - 1)})
		end := lo + size - 1
		if end >= hi {
			return out
		}
		lo = end + 1
	}
}
