package compile_test

import (
	"math/rand/v2"
	"testing"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
	"github.com/google/go-cmp/cmp"
)

// TestSharedEqualsPerSwitch checks the full Compile's shortcuts (each port
// group's flows built once per variant and merged, its facts precomputed)
// against the per-switch path the engine takes (CompileSwitchWith, every
// ACL looked at on every switch): every fixture for every release that
// can express it, and generated NBs with tiers, in both nbgen shapes.
func TestSharedEqualsPerSwitch(t *testing.T) {
	for _, r := range release.Distinct() {
		t.Run(r.Name(), func(t *testing.T) {
			for name, path := range fixtures(t) {
				if snap, ok := loadFor(t, path, r); ok {
					t.Run(name, func(t *testing.T) { sharedEqualsPerSwitch(t, snap, r) })
				}
			}
			if !r.Has(release.ACLTier) {
				return
			}
			for _, shape := range []nbgen.Shape{nbgen.ShapeConsecutive, nbgen.ShapeCluster} {
				t.Run("generated-tiers-"+string(shape), func(t *testing.T) {
					p := sized(2000, 40, 120, 100)
					p.Shape = shape
					snap := nbgen.Generate(p)
					rng := rand.New(rand.NewPCG(1, 2))
					for _, id := range nbschema.SortedKeys(snap.ACLs) {
						if rng.IntN(3) > 0 {
							snap.ACLs[id].Tier = rng.IntN(4)
						}
					}
					sharedEqualsPerSwitch(t, snap, r)
				})
			}
		})
	}
}

func sharedEqualsPerSwitch(t *testing.T, snap *nbschema.Snapshot, r *release.Release) {
	t.Helper()
	opts := compile.Options{Release: r}
	full := compile.CompileWith(snap, opts)
	for _, dp := range full.Flows.Datapaths {
		one, _ := compile.CompileSwitchWith(snap, dp.UUID, opts)
		if d := lflow.Diff(&lflow.Listing{Datapaths: []*lflow.Datapath{one}}, &lflow.Listing{Datapaths: []*lflow.Datapath{dp}}); len(d) > 0 {
			t.Errorf("switch %s: Compile and CompileSwitch differ in %d flows, first %+v", dp.Name, len(d), d[0])
		} else if !cmp.Equal(keys(one.Flows), keys(dp.Flows)) {
			t.Errorf("switch %s: same flows, different order", dp.Name)
		}
	}
	if len(full.Flows.Datapaths) != len(snap.Switches) {
		t.Errorf("%d datapaths for %d switches", len(full.Flows.Datapaths), len(snap.Switches))
	}
}

// keys are the flows' identities in order (Source, like northd's
// stage-hint, is not one: of two ACLs giving the same flow either may be
// named).
func keys(flows []lflow.Flow) []lflow.Key {
	out := make([]lflow.Key, len(flows))
	for i, f := range flows {
		out[i] = f.Key()
	}
	return out
}
