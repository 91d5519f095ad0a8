package compile

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/aclc/aclc/lflow"
)

// TestSortAndMergeFlows checks sortFlows and mergeSorted against
// lflow.Compare and Datapath.Sort on random flows with many ties.
func TestSortAndMergeFlows(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	stages := []lflow.Stage{lflow.InPreACL, lflow.InACL, lflow.OutACL, lflow.Layout2603.Stage(lflow.InACLAction)}
	words := []string{"1", "ip", "ip4 && tcp", "reg0[7] == 1 && (ip)", "reg0[8] == 1 && (ip)", "next;", "drop;"}
	flow := func() lflow.Flow {
		return lflow.Flow{Stage: stages[rng.IntN(len(stages))], Priority: rng.IntN(4) * 1000,
			Match: words[rng.IntN(len(words))], Actions: words[rng.IntN(len(words))]}
	}
	for n := range 200 {
		var runs [][]lflow.Flow
		var all []lflow.Flow
		for range rng.IntN(6) {
			var run []lflow.Flow
			for range rng.IntN(n + 1) {
				run = append(run, flow())
			}
			all = append(all, run...)
			want := slices.Clone(run)
			slices.SortFunc(want, lflow.Compare)
			if got := sortFlows(run); !slices.EqualFunc(got, want, func(a, b lflow.Flow) bool { return a.Key() == b.Key() }) {
				t.Fatalf("sortFlows(%d flows) differs from lflow.Compare's order", len(run))
			}
			runs = append(runs, compactFlows(run))
		}
		dp := &lflow.Datapath{Flows: all}
		dp.Sort()
		if got := mergeSorted(runs); !slices.EqualFunc(got, dp.Flows, func(a, b lflow.Flow) bool { return a.Key() == b.Key() }) {
			t.Fatalf("mergeSorted of %d runs: %d flows, Datapath.Sort %d", len(runs), len(got), len(dp.Flows))
		}
	}
}
