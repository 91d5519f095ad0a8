package pset

// ExistsAll returns s with all the bits of bs forgotten: Exists for each
// of them in turn, but in one walk of s (the walk copies the part of the
// diagram above the lowest forgotten bit once, not once per field).
func (m *Manager) ExistsAll(s Set, bs []Bits) Set {
	if len(bs) == 0 {
		return s
	}
	q := make([]bool, m.space.levels)
	hi := int32(-1)
	for _, b := range bs {
		for i := 0; i < b.N; i++ {
			l := b.f.level(b.Ofs + i)
			q[l] = true
			hi = max(hi, l)
		}
	}
	memo := map[Set]Set{}
	var ex func(Set) Set
	ex = func(x Set) Set {
		if x <= all {
			return x
		}
		if r, ok := memo[x]; ok {
			return r
		}
		n := m.nodes[x]
		var r Set
		switch {
		case n.level > hi:
			r = x // no forgotten bit below
		case q[n.level]:
			r = m.Or(ex(n.lo), ex(n.hi))
		default:
			r = m.mk(n.level, ex(n.lo), ex(n.hi))
		}
		memo[x] = r
		return r
	}
	return m.And(ex(s), m.univ)
}
