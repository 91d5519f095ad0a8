package lint

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestQueryOfCandidates checks the queries queryOf builds against the
// cubes: every ACL with a cube that meets a cube of the queried set is a
// candidate, and the names queryOf adds to the hull narrow the candidates
// (fewer than the hull alone gives, on some queries).
func TestQueryOfCandidates(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	randSet := func() []cube { return randPortSet(r) }
	narrowed := 0
	for range 300 {
		list := make([]*inst, 1+r.IntN(120))
		sets := map[*inst][]cube{}
		for i := range list {
			list[i] = &inst{prio: 100}
			sets[list[i]] = randSet()
		}
		x := newACLIndex(list, func(in *inst) ([]cube, cube) { return sets[in], hull(sets[in]) })
		for range 20 {
			cs := randSet()
			var buf qbuf
			byQuery, byHull := map[*inst]bool{}, 0
			x.candidates(queryOf(&buf, cs, hull(cs)), 0, len(list), func(_ int, in *inst) bool {
				byQuery[in] = true
				return true
			})
			x.candidates(hull(cs), 0, len(list), func(int, *inst) bool { byHull++; return true })
			if len(byQuery) < byHull {
				narrowed++
			}
			for _, in := range list {
				if anyIntersect(cs, sets[in]) && !byQuery[in] {
					t.Fatalf("query %v: an ACL with cubes %v meets it but is no candidate", cs, sets[in])
				}
			}
		}
	}
	if narrowed == 0 {
		t.Fatal("the names never narrowed the candidates")
	}
}

// randPortSet returns 1-3 random cubes (randCube's, with value sets)
// that constrain a port field alike (one strc, as a product's cubes do)
// or each its own way, or not at all.
func randPortSet(r *rand.Rand) []cube {
	port := fieldID(vsFields + 1)
	randStr := func() *strc {
		s := &strc{in: map[string]bool{}}
		for range 1 + r.IntN(2) {
			s.in[fmt.Sprint("p", r.IntN(6))] = true
		}
		return s
	}
	shared := randStr()
	same := r.IntN(2) == 0
	var cs []cube
	for range 1 + r.IntN(3) {
		c := randCube(r, true)
		s := shared
		if !same {
			s = randStr()
		}
		if same || r.IntN(4) != 0 {
			c = append(c, fc{id: port, str: s})
		}
		cs = append(cs, c)
	}
	return cs
}
