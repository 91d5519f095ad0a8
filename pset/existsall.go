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
	return m.And(m.forget(s, func(l int32) bool { return q[l] }, hi, false), m.univ)
}
