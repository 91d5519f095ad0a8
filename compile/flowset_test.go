package compile

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/lflow"
)

// TestFlowSetPatch checks flowSet.patch against plain sorted-set
// arithmetic over random patches big enough to split chunks, empty them
// and grow a set from nothing, and that a patch never changes the set it
// started from.
func TestFlowSetPatch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	flow := func() lflow.Flow {
		return lflow.Flow{Stage: lflow.InACL, Priority: 1000 + r.IntN(50), Match: fmt.Sprintf("m%d", r.IntN(400)), Actions: "next;"}
	}
	for _, start := range []int{0, 1, chunkSize, 1000} {
		// Patches up to 3 chunks big, and every 10th round one of 10
		// chunks in another stage, which all land in one chunk (after
		// every ls_in_acl flow), so that chunk must be cut into several.
		var flows []lflow.Flow
		for range start {
			flows = append(flows, flow())
		}
		slices.SortFunc(flows, lflow.Compare)
		flows = slices.CompactFunc(flows, func(a, b lflow.Flow) bool { return lflow.Compare(a, b) == 0 })
		fs := newFlowSet(flows)
		want := slices.Clone(flows)
		for round := range 150 {
			var add, rm []lflow.Flow
			for range r.IntN(3 * chunkSize) {
				add = append(add, flow())
			}
			if round%10 == 9 {
				p := 1000 + r.IntN(50)
				for k := range 10 * chunkSize {
					add = append(add, lflow.Flow{Stage: lflow.OutACL, Priority: p, Match: fmt.Sprintf("m%d-%04d", r.IntN(400), k), Actions: "next;"})
				}
			}
			for range r.IntN(3 * chunkSize) {
				if len(want) > 0 && r.IntN(4) > 0 {
					rm = append(rm, want[r.IntN(len(want))]) // present
				} else {
					rm = append(rm, flow()) // maybe absent
				}
			}
			before := fs.appendTo(nil)
			got, added, removed := fs.patch(slices.Clone(add), rm)
			if after := fs.appendTo(nil); !slices.Equal(before, after) {
				diff := cmp.Diff(before, after)
				t.Fatalf("start %d round %d: patch changed its input (-before +after):\n%s", start, round, diff)
			}
			setOf := func(list []lflow.Flow) map[lflow.Flow]bool {
				m := map[lflow.Flow]bool{}
				for _, f := range list {
					m[f] = true
				}
				return m
			}
			inAdd, inRm, inWant := setOf(add), setOf(rm), setOf(want)
			var next, wantAdded, wantRemoved []lflow.Flow
			for _, f := range want {
				if inRm[f] && !inAdd[f] {
					wantRemoved = append(wantRemoved, f)
					continue
				}
				next = append(next, f)
			}
			for f := range inAdd {
				if !inWant[f] {
					wantAdded = append(wantAdded, f)
					next = append(next, f)
				}
			}
			slices.SortFunc(next, lflow.Compare)
			slices.SortFunc(wantAdded, lflow.Compare)
			if flows := got.appendTo(nil); !slices.Equal(next, flows) {
				diff := cmp.Diff(next, flows)
				t.Fatalf("start %d round %d: flows (-want +got):\n%s", start, round, diff)
			}
			if diff := cmp.Diff(wantAdded, added); diff != "" {
				t.Fatalf("start %d round %d: added (-want +got):\n%s", start, round, diff)
			}
			if diff := cmp.Diff(wantRemoved, removed); diff != "" {
				t.Fatalf("start %d round %d: removed (-want +got):\n%s", start, round, diff)
			}
			if got.Len() != len(next) {
				t.Fatalf("start %d round %d: Len %d, want %d", start, round, got.Len(), len(next))
			}
			for i, c := range got.chunks {
				if len(c) == 0 || len(c) > 2*chunkSize {
					t.Fatalf("start %d round %d: chunk %d holds %d flows", start, round, i, len(c))
				}
			}
			fs, want = got, next
		}
	}
}

// TestDiffDatapath checks the merge diff over chunked sets.
func TestDiffDatapath(t *testing.T) {
	var a, b []lflow.Flow
	for i := range 500 {
		f := lflow.Flow{Stage: lflow.OutACL, Priority: 2000 - i, Match: "1", Actions: "next;"}
		if i%3 != 0 {
			a = append(a, f)
		}
		if i%5 != 0 {
			b = append(b, f)
		}
	}
	old := newDPFlows(&lflow.Datapath{Name: "sw", UUID: "u", Flows: a})
	cur := newDPFlows(&lflow.Datapath{Name: "sw", UUID: "u", Flows: b})
	dd, changed := diffDatapath("u", old, cur)
	if !changed {
		t.Fatal("no change reported")
	}
	var added, removed []lflow.Flow
	for _, f := range b {
		if !slices.Contains(a, f) {
			added = append(added, f)
		}
	}
	for _, f := range a {
		if !slices.Contains(b, f) {
			removed = append(removed, f)
		}
	}
	if diff := cmp.Diff(added, dd.Added); diff != "" {
		t.Errorf("added (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(removed, dd.Removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
}
