package lint

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
)

// TestAppliedIsNBView checks that a switch's view (linter.applied, which
// classifies each port group's ACLs once per cover for speed) applies
// exactly the ACLs nbview.AppliedACLs says northd applies there, in its
// order: own and shared instances are each that order's subsequence.
// NBs: every lint fixture that loads, both generated shapes, and a
// generated NB where ACLs are listed by a switch and a port group, or by
// two port groups (the de-duplication path).
func TestAppliedIsNBView(t *testing.T) {
	snaps := map[string]*nbschema.Snapshot{}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, f := range files {
		if s, err := nbschema.LoadFixture(f); err == nil {
			snaps[f] = s
		}
	}
	if len(snaps) < 10 {
		t.Fatalf("only %d lint fixtures load", len(snaps))
	}
	for _, shape := range []nbgen.Shape{nbgen.ShapeConsecutive, nbgen.ShapeCluster} {
		p := nbgen.Default()
		p.Shape, p.ACLs, p.Switches, p.PortGroups, p.AddressSets = shape, 2000, 20, 100, 200
		snaps[string(shape)] = nbgen.Generate(p)
	}
	p := nbgen.Default()
	p.ACLs, p.Switches, p.PortGroups, p.AddressSets = 1000, 20, 50, 100
	s := nbgen.Generate(p)
	pgs := nbschema.SortedKeys(s.PortGroups)
	sws := nbschema.SortedKeys(s.Switches)
	for i := 0; i+1 < len(pgs) && i < 10; i++ {
		a, b := s.PortGroups[pgs[i]], s.PortGroups[pgs[i+1]]
		if len(a.ACLs) > 0 {
			b.ACLs = append(b.ACLs, a.ACLs[0])
			ls := s.Switches[sws[i%len(sws)]]
			ls.ACLs = append(ls.ACLs, a.ACLs[0])
		}
	}
	snaps["listed twice"] = s

	for name, s := range snaps {
		l, err := newLinter(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, id := range nbschema.SortedKeys(s.Switches) {
			v := l.view(id)
			var want, own, shared []string
			isShared := map[string]bool{}
			for _, in := range v.shared {
				isShared[in.a.acl.UUID] = true
				shared = append(shared, in.a.acl.UUID)
			}
			for _, in := range v.own {
				own = append(own, in.a.acl.UUID)
			}
			var wantOwn, wantShared []string
			for _, a := range l.nb.AppliedACLs(l.nb.Switch(id)) {
				want = append(want, a.UUID)
				if isShared[a.UUID] {
					wantShared = append(wantShared, a.UUID)
				} else {
					wantOwn = append(wantOwn, a.UUID)
				}
			}
			if len(own)+len(shared) != len(want) || !slices.Equal(own, wantOwn) || !slices.Equal(shared, wantShared) {
				t.Errorf("%s, switch %s: view applies own %v + shared %v, nbview applies %v", name, v.name, own, shared, want)
			}
		}
	}
}
