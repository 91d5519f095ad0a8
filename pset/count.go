package pset

import "math/big"

// Count returns the number of packets in s: assignments of every
// variable of the space (a port field counts its domain's ports and the
// other port). Linear in the size of s.
func (m *Manager) Count(s Set) *big.Int {
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
		lo := new(big.Int).Lsh(count(n.lo), uint(m.level(n.lo)-n.level-1))
		hi := new(big.Int).Lsh(count(n.hi), uint(m.level(n.hi)-n.level-1))
		c := lo.Add(lo, hi)
		memo[x] = c
		return c
	}
	return new(big.Int).Lsh(count(s), uint(m.level(s)))
}
