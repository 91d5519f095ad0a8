package compile

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestFanIndex checks fanIndex against a map of sets over random adds and
// removes, short and long lists alike.
func TestFanIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	m := fanIndex{}
	want := map[string]map[string]bool{}
	for range 20000 {
		k := fmt.Sprint("k", r.IntN(3))
		v := fmt.Sprint("v", r.IntN(80))
		if r.IntN(3) > 0 {
			m.Add(k, v)
			if want[k] == nil {
				want[k] = map[string]bool{}
			}
			want[k][v] = true
		} else {
			m.Del(k, v)
			delete(want[k], v)
		}
		for _, k := range []string{"k0", "k1", "k2"} {
			got := slices.Sorted(slices.Values(m.Get(k)))
			var exp []string
			for v := range want[k] {
				exp = append(exp, v)
			}
			slices.Sort(exp)
			if !slices.Equal(got, exp) {
				t.Fatalf("%s: got %v, want %v", k, got, exp)
			}
			if f := m[k]; f != nil && f.pos != nil {
				for i, v := range f.list {
					if f.pos[v] != i {
						t.Fatalf("%s: position of %s is %d, want %d", k, v, f.pos[v], i)
					}
				}
			}
		}
	}
}
