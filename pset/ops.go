package pset

// op is a binary operation on sets.
type op uint8

const (
	opAnd  op = iota + 1 // intersection
	opOr                 // union
	opDiff               // difference: in a, not in b
)

// maxCache bounds the operation cache (entries; 16 bytes each).
const maxCache = 1 << 22

// opCache is a direct-mapped cache of operation results: an entry is
// overwritten by the next operation that hashes to its slot, so the cache
// stays bounded whatever the number of nodes.
type opCache struct {
	entries []cacheEntry
}

type cacheEntry struct {
	a, b, r Set
	op      op
}

func newOpCache(n int) opCache { return opCache{entries: make([]cacheEntry, n)} }

func (c *opCache) slot(o op, a, b Set) *cacheEntry {
	return &c.entries[hash3(uint32(o), uint32(a), uint32(b))&uint32(len(c.entries)-1)]
}

// And returns the intersection of a and b.
func (m *Manager) And(a, b Set) Set { return m.apply(opAnd, a, b) }

// Or returns the union of a and b.
func (m *Manager) Or(a, b Set) Set { return m.apply(opOr, a, b) }

// Diff returns the packets of a that are not in b.
func (m *Manager) Diff(a, b Set) Set { return m.apply(opDiff, a, b) }

// Not returns the packets of the space that are not in a.
func (m *Manager) Not(a Set) Set { return m.apply(opDiff, m.univ, a) }

// All returns the set of every packet of the space.
func (m *Manager) All() Set { return m.univ }

// IsEmpty reports whether a holds no packet.
func (m *Manager) IsEmpty(a Set) bool { return a == Empty }

// Equal reports whether a and b hold the same packets: the same node.
func (m *Manager) Equal(a, b Set) bool { return a == b }

// Subset reports whether every packet of a is in b.
func (m *Manager) Subset(a, b Set) bool { return m.Diff(a, b) == Empty }

// Intersects reports whether a and b have a packet in common.
func (m *Manager) Intersects(a, b Set) bool { return m.And(a, b) != Empty }

// OrAll returns the union of sets, combined pairwise in a balanced tree
// (cheaper than a running union when there are many).
func (m *Manager) OrAll(sets []Set) Set { return m.reduce(opOr, sets, Empty) }

// AndAll returns the intersection of sets (All for none).
func (m *Manager) AndAll(sets []Set) Set { return m.And(m.reduce(opAnd, sets, all), m.univ) }

// reduce combines sets with o in a balanced tree; unit for none.
func (m *Manager) reduce(o op, sets []Set, unit Set) Set {
	switch len(sets) {
	case 0:
		return unit
	case 1:
		return sets[0]
	}
	h := len(sets) / 2
	return m.apply(o, m.reduce(o, sets[:h], unit), m.reduce(o, sets[h:], unit))
}

// apply computes a o b by Shannon expansion on the top variable of the
// two, with the terminal cases of each operation and the cache.
func (m *Manager) apply(o op, a, b Set) Set {
	switch o {
	case opAnd:
		switch {
		case a == Empty || b == Empty:
			return Empty
		case a == all || a == b:
			return b
		case b == all:
			return a
		}
		if a > b {
			a, b = b, a
		}
	case opOr:
		switch {
		case a == all || b == all:
			return all
		case a == Empty || a == b:
			return b
		case b == Empty:
			return a
		}
		if a > b {
			a, b = b, a
		}
	case opDiff:
		switch {
		case a == Empty || b == all || a == b:
			return Empty
		case b == Empty:
			return a
		}
	}
	e := m.cache.slot(o, a, b)
	if e.op == o && e.a == a && e.b == b {
		return e.r
	}
	na, nb := m.nodes[a], m.nodes[b]
	lv := min(na.level, nb.level)
	alo, ahi := a, a
	if na.level == lv {
		alo, ahi = na.lo, na.hi
	}
	blo, bhi := b, b
	if nb.level == lv {
		blo, bhi = nb.lo, nb.hi
	}
	lo := m.apply(o, alo, blo)
	hi := m.apply(o, ahi, bhi)
	r := m.mk(lv, lo, hi)
	// The slot may have moved if the cache grew during the recursion.
	*m.cache.slot(o, a, b) = cacheEntry{a: a, b: b, r: r, op: o}
	return r
}
