package lint

import (
	"bytes"
	"testing"

	"github.com/aclc/aclc/nbgen"
	"github.com/google/go-cmp/cmp"
)

// TestArenaRecycling checks that nothing built in a switch's arena is
// used after the switch is released: with recycled chunks poisoned
// (constraints no cube has), the reports on generated NBs of both shapes
// (findings of every rule, witness packets included) are those of a run
// that leaves the chunks to the collector.
func TestArenaRecycling(t *testing.T) {
	defer func() { recycleArenas, poisonArenas = true, false }()
	for _, shape := range []nbgen.Shape{nbgen.ShapeConsecutive, nbgen.ShapeCluster} {
		p := nbgen.Default()
		p.Shape, p.ACLs, p.Switches, p.PortGroups, p.AddressSets = shape, 4000, 40, 200, 400
		s := nbgen.Generate(p)
		run := func(recycle, poison bool) string {
			recycleArenas, poisonArenas = recycle, poison
			r, err := Lint(s)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Findings) < 100 {
				t.Fatalf("%s: only %d findings", shape, len(r.Findings))
			}
			r.Stats.Elapsed = 0
			var b bytes.Buffer
			if err := WriteJSON(&b, r); err != nil {
				t.Fatal(err)
			}
			return b.String()
		}
		want := run(false, false)
		if d := cmp.Diff(want, run(true, true)); d != "" {
			t.Errorf("%s: recycled arenas change the report (-kept +recycled):\n%s", shape, d)
		}
	}
}
