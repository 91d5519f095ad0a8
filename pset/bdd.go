package pset

// Set is a set of packets: a node of its Manager's BDD. Sets of one
// Manager are canonical: two sets are equal exactly when their Set values
// are (==), and the empty set is Empty.
type Set int32

// The terminal nodes.
const (
	// Empty is the empty set (the BDD's false terminal).
	Empty Set = 0
	// all is the BDD's true terminal: every assignment of the variables,
	// port codes outside the domain included (Manager.All is the set of
	// packets of the space).
	all Set = 1
)

// node is one BDD node: the variable at level tests one bit; lo is the
// set where the bit is 0, hi where it is 1. Terminals have level
// Manager.levels.
type node struct {
	level  int32
	lo, hi Set
}

// Manager holds the nodes of the sets of one analysis over one Space:
// the node array, the unique table that keeps it reduced and canonical,
// and the operation cache. A Manager is not safe for concurrent use.
type Manager struct {
	space  *Space
	levels int32 // number of variables; the terminals' level
	nodes  []node
	// unique is an open-addressing hash table of node indices (0: free
	// slot; the terminals are never in it), len a power of two.
	unique []Set
	cache  opCache
	// symSets caches the sets of symbols' prerequisites and predicates.
	symSets map[symKey]Set
	univ    Set // the packets of the space: port codes within the domains
	// describers keep Describe's forms (describe.go).
	describers map[describerKey]*describer
}

// NewManager returns a Manager of sets over space.
func NewManager(space *Space) *Manager {
	m := &Manager{space: space, levels: int32(space.levels)}
	m.nodes = append(make([]node, 0, 1<<12), node{level: m.levels}, node{level: m.levels})
	m.unique = make([]Set, 1<<12)
	m.cache = newOpCache(1 << 14)
	m.univ = all
	m.symSets = map[symKey]Set{}
	for _, f := range space.fields {
		if f.ports != nil {
			m.univ = m.And(m.univ, m.atMost(f, uint64(len(f.ports))))
		}
	}
	return m
}

// Space returns the space the sets are over.
func (m *Manager) Space() *Space { return m.space }

// NodeCount returns the number of nodes the Manager holds, terminals
// included: its size, which only grows.
func (m *Manager) NodeCount() int { return len(m.nodes) }

// Size returns the number of nodes of s, terminals included.
func (m *Manager) Size(s Set) int {
	n := 0
	m.visit(s, func(Set) { n++ })
	return n
}

// visit calls fn once with each node of s, terminals included.
func (m *Manager) visit(s Set, fn func(Set)) {
	seen := map[Set]bool{}
	var walk func(Set)
	walk = func(x Set) {
		if seen[x] {
			return
		}
		seen[x] = true
		fn(x)
		if x > all {
			walk(m.nodes[x].lo)
			walk(m.nodes[x].hi)
		}
	}
	walk(s)
}

// mk returns the node testing level with children lo and hi: lo itself
// when both are the same (reduction), else the one node with those
// fields (uniqueness).
func (m *Manager) mk(level int32, lo, hi Set) Set {
	if lo == hi {
		return lo
	}
	mask := uint32(len(m.unique) - 1)
	h := hash3(uint32(level), uint32(lo), uint32(hi)) & mask
	for {
		x := m.unique[h]
		if x == 0 {
			break
		}
		if n := &m.nodes[x]; n.level == level && n.lo == lo && n.hi == hi {
			return x
		}
		h = (h + 1) & mask
	}
	if len(m.nodes) >= 1<<31-1 {
		panic("pset: more than 2^31 BDD nodes")
	}
	x := Set(len(m.nodes))
	m.nodes = append(m.nodes, node{level: level, lo: lo, hi: hi})
	m.unique[h] = x
	if 2*len(m.nodes) > len(m.unique) {
		m.grow()
	}
	return x
}

// grow doubles the unique table and the operation cache.
func (m *Manager) grow() {
	m.unique = make([]Set, 2*len(m.unique))
	mask := uint32(len(m.unique) - 1)
	for i := 2; i < len(m.nodes); i++ {
		n := &m.nodes[i]
		h := hash3(uint32(n.level), uint32(n.lo), uint32(n.hi)) & mask
		for m.unique[h] != 0 {
			h = (h + 1) & mask
		}
		m.unique[h] = Set(i)
	}
	if len(m.cache.entries) < maxCache && len(m.cache.entries) < len(m.nodes) {
		m.cache = newOpCache(2 * len(m.cache.entries))
	}
}

// hash3 mixes three 32-bit words.
func hash3(a, b, c uint32) uint32 {
	h := uint64(a)*0x9E3779B97F4A7C15 ^ uint64(b)*0xC2B2AE3D27D4EB4F ^ uint64(c)*0x165667B19E3779F9
	h ^= h >> 29
	h *= 0xBF58476D1CE4E5B9
	return uint32(h ^ h>>32)
}

// level returns the level of s's top variable (m.levels for terminals).
func (m *Manager) level(s Set) int32 { return m.nodes[s].level }
