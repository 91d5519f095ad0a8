package lint

import (
	"cmp"
	"math/bits"
	"slices"
	"sort"
	"sync"
)

// aclIndex finds, among a fixed list of ACL instances sorted by priority
// (highest first), those whose matches may meet a cube, without trying
// each: it indexes every ACL's hull (for bit fields the constraints all of
// its cubes share, for inport/outport the union of the names its cubes
// admit) by field, and a query ANDs, field by field, the bitsets of the
// ACLs compatible with the query's constraint on that field. A candidate
// is only a candidate: the rules still test its cubes. The index is read
// by many goroutines at once and never changes once built.
type aclIndex struct {
	list   []*inst
	prios  []int  // list's priorities, non-increasing
	live   bitset // entries with at least one cube
	words  int
	fields []*fieldPosting // by fieldID; nil for a field no entry constrains
	slab   []uint64        // where newSet carves the bitsets (while building)

	compMu   sync.RWMutex
	comps    map[compKey]bitset // compatible's cache (a typed map: sync.Map boxed and hashed each key as an interface)
	zeroOnce sync.Once
	zero     []bitset // by fieldID, the entries a packet with 0 bits and no name there can be in (holding)
}

// fieldPosting is one field's part of an index.
type fieldPosting struct {
	free   bitset            // ACLs that do not constrain the field (while building: that do)
	groups []*maskGroup      // bit fields: the ACLs by mask, then value
	names  map[string]bitset // string fields: admitted name → ACLs
	// bits, for a bit field with more than sliceMin mask groups (the
	// fixed bits of address sets make one per set), is per bit some mask
	// fixes the ACLs that fix it to 0 and to 1: a query then clears, bit
	// by bit, the ACLs that fix one of its bits otherwise, instead of
	// visiting every group.
	bits []bitSlice
}

// bitSlice is one bit of a posting's bits.
type bitSlice struct {
	bit       int
	zero, one bitset
}

// sliceMin is the most mask groups of a posting queried group by group.
const sliceMin = 8

// slice builds p.bits (p is field id's posting) from the constraints
// post grouped: each sets its entry's bit in the zero or one slice of
// every bit its mask fixes.
func (p *fieldPosting) slice(x *aclIndex, ps *postedList, id fieldID) {
	var union u128
	for _, gk := range ps.keys {
		if gk.id == id {
			union = union.or(gk.mask)
		}
	}
	p.bits = make([]bitSlice, 0, union.popcount())
	var at [128]uint8 // bit → its slice in p.bits
	for bit := range 128 {
		if union.bit(bit) {
			at[bit] = uint8(len(p.bits))
			p.bits = append(p.bits, bitSlice{bit: bit, zero: x.newSet(), one: x.newSet()})
		}
	}
	for gi, gk := range ps.keys {
		if gk.id != id {
			continue
		}
		for _, e := range ps.byGroup[ps.start[gi]:ps.start[gi+1]] {
			for w, m := range gk.mask {
				for m != 0 {
					bit := 64*w + bits.TrailingZeros64(m)
					m &= m - 1
					s := &p.bits[at[bit]]
					if e.val.bit(bit) {
						s.one.set(int(e.i))
					} else {
						s.zero.set(int(e.i))
					}
				}
			}
		}
	}
}

// clear clears in b (words from w0 on) the entries that fix one of the
// bits of mask to a value other than val's (p.bits).
func (p *fieldPosting) clear(b bitset, mask, val u128, w0 int) {
	w1 := w0 + len(b)
	for _, s := range p.bits {
		if !mask.bit(s.bit) {
			continue
		}
		other := s.one
		if val.bit(s.bit) {
			other = s.zero
		}
		for i, w := range other[w0:w1] {
			b[i] &^= w
		}
	}
}

// meets reports whether b and c have a bit in common.
func (b bitset) meets(c bitset) bool {
	for i, w := range b {
		if w&c[i] != 0 {
			return true
		}
	}
	return false
}

// fillAll sets every bit of b.
func (b bitset) fillAll() {
	for i := range b {
		b[i] = ^uint64(0)
	}
}

// maskGroup is the ACLs of a posting that constrain its field under one
// mask, by value: slices, not maps, for the queries that scan them.
type maskGroup struct {
	mask u128
	vals []u128   // sorted (cmpU128)
	sets []bitset // sets[i]: the ACLs with vals[i]
	all  bitset   // the union of sets
}

// maxScan is the most values of a mask group looked up by a scan rather
// than by a binary search.
const maxScan = 8

// find returns the index of val in g.vals, -1 if none.
func (g *maskGroup) find(val u128) int {
	if len(g.vals) <= maxScan {
		for j, v := range g.vals {
			if v == val {
				return j
			}
		}
		return -1
	}
	j, ok := slices.BinarySearchFunc(g.vals, val, cmpU128)
	if !ok {
		return -1
	}
	return j
}

func cmpU128(a, b u128) int {
	if a[1] != b[1] {
		return cmp.Compare(a[1], b[1])
	}
	return cmp.Compare(a[0], b[0])
}

type bitset []uint64

func (b bitset) set(i int) { b[i/64] |= 1 << (i % 64) }
func (b bitset) or(c bitset) {
	for i := range b {
		b[i] |= c[i]
	}
}
func (b bitset) and(c bitset) {
	for i := range b {
		b[i] &= c[i]
	}
}
func (b bitset) copyFrom(c bitset) { copy(b, c) }
func (b bitset) fill(n int)        { fillBits(b, n) }
func newBitset(words int) bitset   { return make(bitset, words) }
func (x *aclIndex) empty() bool    { return x == nil || len(x.list) == 0 }

// newSet returns an empty bitset for the index's entries, carved from a
// slab: only while building (the index is then read concurrently).
func (x *aclIndex) newSet() bitset {
	if len(x.slab) < x.words {
		x.slab = make([]uint64, max(64*x.words, 512))
	}
	b := bitset(x.slab[:x.words:x.words])
	x.slab = x.slab[x.words:]
	return b
}

func (x *aclIndex) posting(id fieldID) *fieldPosting {
	if int(id) >= len(x.fields) {
		x.fields = slices.Grow(x.fields, int(id)+1-len(x.fields))[:int(id)+1]
	}
	p := x.fields[id]
	if p == nil {
		p = &fieldPosting{free: x.newSet()}
		x.fields[id] = p
	}
	return p
}

func fillBits(b bitset, n int) {
	for i := range b {
		switch {
		case (i+1)*64 <= n:
			b[i] = ^uint64(0)
		case i*64 < n:
			b[i] = 1<<(n-i*64) - 1
		default:
			b[i] = 0
		}
	}
}

// newACLIndex indexes list (sorted by priority, highest first); cubes
// returns the cubes of an instance to index and their hull.
func newACLIndex(list []*inst, cubes func(*inst) ([]cube, cube)) *aclIndex {
	x := &aclIndex{list: list, words: (len(list) + 63) / 64}
	x.prios = make([]int, len(list))
	x.live = x.newSet()
	ps := getPosted()
	defer postedPool.Put(ps)
	for i, in := range list {
		x.prios[i] = in.prio
		cs, h := cubes(in)
		if len(cs) == 0 {
			continue // matches nothing: never a candidate
		}
		x.live.set(i)
		for _, f := range h {
			ps.list = append(ps.list, posted{mask: f.mask, val: f.val, i: int32(i), id: f.id})
			x.posting(f.id).free.set(i) // constrained: inverted below
		}
		nameHull(cs, func(id fieldID) {
			x.posting(id).free.set(i)
		}, func(id fieldID, n string) {
			p := x.posting(id)
			if p.names == nil {
				p.names = map[string]bitset{}
			}
			b := p.names[n]
			if b == nil {
				b = x.newSet()
				p.names[n] = b
			}
			b.set(i)
		})
	}
	x.post(ps)
	for id, p := range x.fields {
		if p == nil {
			continue
		}
		if len(p.groups) > sliceMin && p.names == nil {
			p.slice(x, ps, fieldID(id))
		}
		constrained := p.free
		p.free = x.newSet()
		p.free.fill(len(list))
		for w := range p.free {
			p.free[w] &^= constrained[w]
		}
	}
	x.slab = nil
	return x
}

// without returns the index of x's entries but those at the places drop:
// x's postings, with only the live entries its own (layer.reps).
func (x *aclIndex) without(drop []int) *aclIndex {
	y := &aclIndex{list: x.list, prios: x.prios, live: slices.Clone(x.live), words: x.words, fields: x.fields}
	for _, i := range drop {
		y.live[i/64] &^= 1 << (i % 64)
	}
	return y
}

// posted is one constraint of an entry's hull while an index is built:
// entry i constrains field id to val under mask (in mask group g).
type posted struct {
	mask, val u128
	i, g      int32
	id        fieldID
}

// groupKey identifies a mask group while an index is built.
type groupKey struct {
	mask u128
	id   fieldID
}

// A postedList is newACLIndex's buffers, pooled: an index of a few
// hundred ACLs has a few thousand constraints.
type postedList struct {
	list, byGroup []posted
	groups        map[groupKey]int32
	keys          []groupKey // the groups in order of first appearance
	start         []int32    // by group, where its constraints start in byGroup
	fill          []int32
	dv            []u128         // the groups' distinct values, group after group
	dvStart       []int32        // by group, where its values start in dv
	byVal         map[u128]int32 // a large group's values while they are found
	ord, rank     []int32        // a large group's values sorted, and their ranks
	sorted        []u128
}

var postedPool = sync.Pool{New: func() any {
	return &postedList{groups: map[groupKey]int32{}, byVal: map[u128]int32{}}
}}

func getPosted() *postedList {
	ps := postedPool.Get().(*postedList)
	ps.list = ps.list[:0]
	return ps
}

// post builds the mask groups of x's postings (which exist) from ps's
// constraints: the groups of a field in order of first appearance, a
// group's values too unless it has more than maxScan constraints, then
// sorted (find and agreeing search them); the groups, their values, value
// sets and bitsets each carved from one block, not grown one append at a
// time.
func (x *aclIndex) post(ps *postedList) {
	clear(ps.groups)
	ps.keys = ps.keys[:0]
	for k := range ps.list {
		e := &ps.list[k]
		gk := groupKey{e.mask, e.id}
		g, ok := ps.groups[gk]
		if !ok {
			g = int32(len(ps.keys))
			ps.groups[gk] = g
			ps.keys = append(ps.keys, gk)
		}
		e.g = g
	}
	ngroups := len(ps.keys)
	if ngroups == 0 {
		return
	}
	// The constraints by group (a counting sort, stable).
	ps.start = append(ps.start[:0], make([]int32, ngroups+1)...)
	for _, e := range ps.list {
		ps.start[e.g+1]++
	}
	for g := range ngroups {
		ps.start[g+1] += ps.start[g]
	}
	ps.byGroup = slices.Grow(ps.byGroup[:0], len(ps.list))[:len(ps.list)]
	ps.fill = append(ps.fill[:0], ps.start[:ngroups]...)
	for _, e := range ps.list {
		ps.byGroup[ps.fill[e.g]] = e
		ps.fill[e.g]++
	}
	// Each group's distinct values (in order of first appearance; sorted
	// when more than maxScan), found by a pooled map in a large group;
	// each constraint's g becomes the index of its value in its group.
	ps.dv, ps.dvStart = ps.dv[:0], ps.dvStart[:0]
	for g := range ngroups {
		run := ps.byGroup[ps.start[g]:ps.start[g+1]]
		lo := len(ps.dv)
		ps.dvStart = append(ps.dvStart, int32(lo))
		if len(run) > maxScan {
			clear(ps.byVal)
		}
		for k := range run {
			e := &run[k]
			j := -1
			if len(run) > maxScan {
				if v, ok := ps.byVal[e.val]; ok {
					j = int(v)
				}
			} else {
				j = slices.Index(ps.dv[lo:], e.val)
			}
			if j < 0 {
				j = len(ps.dv) - lo
				ps.dv = append(ps.dv, e.val)
				if len(run) > maxScan {
					ps.byVal[e.val] = int32(j)
				}
			}
			e.g = int32(j)
		}
		if vals := ps.dv[lo:]; len(vals) > maxScan {
			ps.ord = ps.ord[:0]
			for j := range vals {
				ps.ord = append(ps.ord, int32(j))
			}
			slices.SortFunc(ps.ord, func(a, b int32) int { return cmpU128(vals[a], vals[b]) })
			ps.rank = slices.Grow(ps.rank[:0], len(vals))[:len(vals)]
			sorted := ps.sorted[:0]
			for k, j := range ps.ord {
				ps.rank[j] = int32(k)
				sorted = append(sorted, vals[j])
			}
			ps.sorted = sorted
			copy(vals, sorted)
			for k := range run {
				run[k].g = ps.rank[run[k].g]
			}
		}
	}
	ps.dvStart = append(ps.dvStart, int32(len(ps.dv)))
	nvals := len(ps.dv)
	perField := append(ps.fill[:0], make([]int32, len(x.fields))...) // groups per field
	for _, gk := range ps.keys {
		perField[gk.id]++
	}
	if need := x.words * (ngroups + nvals); len(x.slab) < need {
		x.slab = make([]uint64, need+max(64*x.words, 512))
	}
	groups, ptrs := make([]maskGroup, ngroups), make([]*maskGroup, ngroups)
	vals, sets := slices.Clone(ps.dv), make([]bitset, nvals)
	at := int32(0)
	for id, n := range perField {
		if n > 0 {
			x.fields[id].groups = ptrs[at : at : at+n]
			at += n
		}
	}
	for gi, gk := range ps.keys {
		g := &groups[gi]
		p := x.fields[gk.id]
		p.groups = append(p.groups, g)
		g.mask, g.all = gk.mask, x.newSet()
		lo, hi := ps.dvStart[gi], ps.dvStart[gi+1]
		g.vals, g.sets = vals[lo:hi:hi], sets[lo:hi:hi]
		for j := range g.sets {
			g.sets[j] = x.newSet()
		}
		for _, e := range ps.byGroup[ps.start[gi]:ps.start[gi+1]] {
			g.sets[e.g].set(int(e.i))
			g.all.set(int(e.i))
		}
	}
}

// nameHull calls field for each string field every cube constrains to a
// finite set of names, then name with each name some cube admits (a name
// possibly more than once).
func nameHull(cs []cube, field func(id fieldID), name func(id fieldID, n string)) {
	for _, f := range cs[0] {
		if f.str == nil || f.str.in == nil {
			continue
		}
		ok, same := true, true // same: every cube shares f's constraint (a product's cubes do)
		for _, c := range cs[1:] {
			g, has := c.field(f.id)
			if !has || g.str == nil || g.str.in == nil {
				ok = false
				break
			}
			same = same && g.str == f.str
		}
		if !ok {
			continue
		}
		field(f.id)
		if same {
			names(f.id, f.str, name)
			continue
		}
		for _, c := range cs {
			g, _ := c.field(f.id)
			names(f.id, g.str, name)
		}
	}
}

// names calls name with each name s admits.
func names(id fieldID, s *strc, name func(id fieldID, n string)) {
	for n := range s.in {
		if !s.out[n] {
			name(id, n)
		}
	}
}

// below returns the number of list entries with a priority above p (they
// come first).
func (x *aclIndex) above(p int) int {
	return sort.Search(len(x.prios), func(i int) bool { return x.prios[i] <= p })
}

// span returns the range of list entries with priority p.
func (x *aclIndex) span(p int) (int, int) {
	return x.above(p), sort.Search(len(x.prios), func(i int) bool { return x.prios[i] < p })
}

// candidates calls fn, in list order, for each entry in [lo, hi) whose
// hull is compatible with q on every field q constrains, until fn returns
// false.
func (x *aclIndex) candidates(q cube, lo, hi int, fn func(i int, in *inst) bool) bool {
	if x.empty() || lo >= hi {
		return true
	}
	var buf queryBuf
	cand, comp, w0 := x.query(&buf, lo, hi)
	w1 := w0 + len(cand)
	for _, f := range q {
		if int(f.id) >= len(x.fields) || x.fields[f.id] == nil {
			continue
		}
		p := x.fields[f.id]
		if f.str != nil {
			if f.str.in == nil {
				continue
			}
			comp.copyFrom(p.free[w0:w1])
			for n := range f.str.in {
				if b := p.names[n]; b != nil && !f.str.out[n] {
					comp.or(b[w0:w1])
				}
			}
		} else if f.set == nil && x.words >= minCached {
			if !cand.andAny(x.compatible(p, f)[w0:w1]) {
				return true
			}
			continue
		} else {
			p.compatible(comp, f, w0)
		}
		if !cand.andAny(comp) {
			return true
		}
	}
	return x.each(cand, w0, fn)
}

// minCached is the size, in words, from which an index keeps the entries
// compatible with a plain bit constraint (the same eth.type, ip.proto or
// tcp.dst is queried again and again).
const minCached = 8

type compKey struct {
	id        fieldID
	mask, val u128
}

// compatible returns the entries compatible with f, a bit constraint
// without a set, on p's field, cached.
func (x *aclIndex) compatible(p *fieldPosting, f fc) bitset {
	k := compKey{f.id, f.mask, f.val}
	x.compMu.RLock()
	b, ok := x.comps[k]
	x.compMu.RUnlock()
	if ok {
		return b
	}
	b = newBitset(x.words)
	p.compatible(b, f, 0)
	x.compMu.Lock()
	if x.comps == nil {
		x.comps = map[compKey]bitset{}
	}
	x.comps[k] = b
	x.compMu.Unlock()
	return b
}

// compatible sets b to the entries compatible with f, a bit constraint,
// on p's field (b's words from word w0 on).
func (p *fieldPosting) compatible(b bitset, f fc, w0 int) {
	w1 := w0 + len(b)
	qm, qv := f.fixed()
	if p.bits != nil {
		// An entry of a group is compatible when its value agrees with qv
		// on the bits the group's mask and qm share (below), and, where
		// setNarrows, with one of f's values.
		b.fillAll()
		p.clear(b, qm, qv, w0)
		if f.set == nil {
			return
		}
		for _, g := range p.groups {
			if !g.all[w0:w1].meets(b) || !setNarrows(f.set, g) {
				continue // none of g's entries is left, or no value test
			}
			common := g.mask.and(qm)
			want := qv.and(common)
			lo, hi := g.agreeing(common, want)
			for j, v := range g.vals[lo:hi] {
				if v.and(common) == want && !f.set.anyAgree(g.mask, v) {
					s := g.sets[lo+j][w0:w1]
					for i, w := range s {
						b[i] &^= w
					}
				}
			}
		}
		return
	}
	b.copyFrom(p.free[w0:w1])
	for _, g := range p.groups {
		common := g.mask.and(qm)
		if f.set != nil && setNarrows(f.set, g) {
			want := qv.and(common)
			lo, hi := g.agreeing(common, want)
			for j, v := range g.vals[lo:hi] {
				if v.and(common) == want && f.set.anyAgree(g.mask, v) {
					b.or(g.sets[lo+j][w0:w1])
				}
			}
			continue
		}
		switch {
		case common == g.mask:
			if j := g.find(qv.and(g.mask)); j >= 0 {
				b.or(g.sets[j][w0:w1])
			}
		case common.zero():
			b.or(g.all[w0:w1])
		default:
			want := qv.and(common)
			lo, hi := g.agreeing(common, want)
			for j, v := range g.vals[lo:hi] {
				if v.and(common) == want {
					b.or(g.sets[lo+j][w0:w1])
				}
			}
		}
	}
}

// agreeing returns a range of g.vals holding every value v with v&common
// == want (common within g.mask). The sorted values of a large group that
// agree with want on the prefix of the mask common holds (the bits above
// the highest bit common leaves out: a query's address or port prefix
// against a group of single addresses or ports) are a range: found by
// binary search, not a scan.
func (g *maskGroup) agreeing(common, want u128) (int, int) {
	if len(g.vals) <= maxScan {
		return 0, len(g.vals)
	}
	// The bits of the mask above its highest bit outside common.
	prefix := g.mask.andNot(below(g.mask.andNot(common)))
	if prefix.zero() {
		return 0, len(g.vals)
	}
	want = want.and(prefix)
	rest := g.mask.andNot(prefix)
	lo, _ := slices.BinarySearchFunc(g.vals, want, cmpU128)
	n, found := slices.BinarySearchFunc(g.vals[lo:], want.or(rest), cmpU128)
	if found {
		n++
	}
	return lo, lo + n
}

// below returns the bits at and below the highest bit of a, as cmpU128
// orders values (none when a is zero).
func below(a u128) u128 {
	switch {
	case a[1] != 0:
		return u128{^uint64(0), ^uint64(0) >> bits.LeadingZeros64(a[1])}
	case a[0] != 0:
		return u128{^uint64(0) >> bits.LeadingZeros64(a[0]), 0}
	}
	return u128{}
}

// queryBuf holds a query's two bitsets on the stack for up to 4096
// entries (a class's layer at 50k ACLs of the cluster shape is a few
// thousand: with room for 512 its queries allocated 90 MB a run).
type queryBuf [128]uint64

// query returns the bitsets of a query for the entries [lo, hi), over
// the words that hold them, from word w0 on (in buf when they fit): cand,
// the live entries, and comp, room for one field's. A query over a few
// priorities of a large index (samePriority) then costs a few words.
func (x *aclIndex) query(buf *queryBuf, lo, hi int) (cand, comp bitset, w0 int) {
	w0 = lo / 64
	n := (hi+63)/64 - w0
	if n <= len(buf)/2 {
		cand, comp = buf[:n:n], buf[n:2*n:2*n]
	} else {
		cand, comp = newBitset(n), newBitset(n)
	}
	cand.fill(hi - w0*64)
	cand.and(x.live[w0 : w0+n])
	if lo%64 != 0 {
		cand[0] &^= 1<<(lo%64) - 1
	}
	return cand, comp, w0
}

// andAny ANDs c into b and reports whether any bit is left.
func (b bitset) andAny(c bitset) bool {
	var any uint64
	for i := range b {
		b[i] &= c[i]
		any |= b[i]
	}
	return any != 0
}

// each calls fn, in list order, for the entries of cand (from word w0 on)
// until it returns false.
func (x *aclIndex) each(cand bitset, w0 int, fn func(i int, in *inst) bool) bool {
	for w, word := range cand {
		for word != 0 {
			i := (w0+w)*64 + bits.TrailingZeros64(word)
			word &= word - 1
			if !fn(i, x.list[i]) {
				return false
			}
		}
	}
	return true
}

// setNarrows reports whether a query's set s is worth testing value by
// value against group g: g fixes bits of s on which its values differ,
// and the test is cheap (a lookup, or few values on either side). The
// fixed bits all of s's values share are tested anyway (fc.fixed).
func setNarrows(s *vset, g *maskGroup) bool {
	m := g.mask.and(s.mask)
	if m.andNot(s.cm).zero() {
		return false
	}
	return m == s.mask && s.idx != nil || len(g.vals)*len(s.vals) <= 256
}

// admitting sets b to the entries whose hull admits the value val, or the
// name, on the posting's field (b's words from word w0 on).
func (p *fieldPosting) admitting(b bitset, val u128, name string, w0 int) {
	w1 := w0 + len(b)
	if p.bits != nil {
		b.fillAll()
		p.clear(b, u128{^uint64(0), ^uint64(0)}, val, w0)
		return
	}
	b.copyFrom(p.free[w0:w1])
	if s := p.names[name]; s != nil {
		b.or(s[w0:w1])
	}
	for _, g := range p.groups {
		if j := g.find(val.and(g.mask)); j >= 0 {
			b.or(g.sets[j][w0:w1])
		}
	}
}

// holding calls fn, in list order, for each entry in [lo, hi) whose hull
// admits the packet p (its fields sorted by id; 0 bits and no name on the
// others, as pointIn reads it), until fn returns false. A query by one
// packet is much narrower than one by a cube: every indexed field is
// fixed.
func (x *aclIndex) holding(p []pointField, lo, hi int, fn func(i int, in *inst) bool) bool {
	if x.empty() || lo >= hi {
		return true
	}
	var buf queryBuf
	cand, comp, w0 := x.query(&buf, lo, hi)
	w1 := w0 + len(cand)
	x.zeroOnce.Do(func() {
		x.zero = make([]bitset, len(x.fields))
		for id, post := range x.fields {
			if post != nil {
				x.zero[id] = newBitset(x.words)
				post.admitting(x.zero[id], u128{}, noName, 0)
			}
		}
	})
	i := 0 // p's fields are sorted, as x.zero's
	for id, z := range x.zero {
		if z == nil {
			continue
		}
		for i < len(p) && p[i].id < fieldID(id) {
			i++
		}
		ok := i < len(p) && p[i].id == fieldID(id)
		if !ok || p[i].bits.zero() && p[i].name == noName {
			if !cand.andAny(z[w0:w1]) {
				return true
			}
			continue
		}
		x.fields[id].admitting(comp, p[i].bits, p[i].name, w0)
		if !cand.andAny(comp) {
			return true
		}
	}
	return x.each(cand, w0, fn)
}
