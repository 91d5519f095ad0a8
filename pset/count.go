package pset

import "math/big"

// Count returns the number of packets in s: assignments of every
// variable of the space (a port field counts its domain's ports and the
// other port). Linear in the size of s.
func (m *Manager) Count(s Set) *big.Int { return m.countLevels(s, 0, m.levels) }

// countLevels counts the assignments of levels top..end-1 in s, a set
// that tests no other level.
func (m *Manager) countLevels(s Set, top, end int32) *big.Int {
	lev := func(x Set) int32 {
		if x <= all {
			return end
		}
		return m.nodes[x].level
	}
	memo := map[Set]*big.Int{}
	var count func(x Set) *big.Int // assignments of the levels from x's down
	count = func(x Set) *big.Int {
		switch x {
		case Empty:
			return new(big.Int)
		case all:
			return big.NewInt(1)
		}
		if c, ok := memo[x]; ok {
			return c
		}
		n := m.nodes[x]
		lo := new(big.Int).Lsh(count(n.lo), uint(lev(n.lo)-n.level-1))
		c := lo.Add(lo, new(big.Int).Lsh(count(n.hi), uint(lev(n.hi)-n.level-1)))
		memo[x] = c
		return c
	}
	return new(big.Int).Lsh(count(s), uint(lev(s)-top))
}
