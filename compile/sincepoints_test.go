package compile_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
)

// TestSincePoints pins every since-point of every flow fact from both
// sides with the goldens of the real northd: at the since-point version,
// compiling with the fact switched off must break at least one fixture's
// golden, and at the verified version just before it on its branch,
// compiling with the fact switched on must break one there. A since-point
// one patch too late or too early, or a fact no fixture exercises, fails
// here. A point on a branch aclc does not verify (23.06, 24.09) is a date
// only. A point at a branch's first version (x.y.0) has no version before
// it on its branch; there the newest verified version of an older branch
// that lacks the fact is the other side.
func TestSincePoints(t *testing.T) {
	fx := fixtures(t)
	for _, f := range release.Facts() {
		if f.Kind() != release.FlowFact {
			continue
		}
		t.Run(f.Name(), func(t *testing.T) {
			for _, p := range f.Since().Points() {
				on := release.OnBranch(p)
				if len(on) == 0 {
					continue // a branch aclc does not verify
				}
				at := release.MustLookup(p.String())
				if !at.Verified() {
					t.Errorf("since-point %s is not a verified version", p)
					continue
				}
				if !breaks(t, fx, at.With(f, false)) {
					t.Errorf("at %s, compiling without %s matches every golden: no fixture pins the since-point", p, f)
				}
				var before *release.Release
				if p.Patch > 0 {
					before = release.MustLookup(fmt.Sprintf("%d.%02d.%d", p.Major, p.Minor, p.Patch-1))
					if !before.Verified() {
						t.Errorf("since-point %s: %s is not verified, so the point is not pinned from below", p, before)
						continue
					}
				} else {
					for _, r := range release.All() {
						if r.Version.Compare(p) < 0 && !r.Has(f) {
							before = r
						}
					}
				}
				if before != nil && !breaks(t, fx, before.With(f, true)) {
					t.Errorf("at %s (before the since-point %s), compiling with %s matches every golden: no fixture pins the since-point", before, p, f)
				}
				// An interval's end (a revert) is pinned the same way.
				if end, ok := f.Since().Until(p); ok {
					last := release.MustLookup(fmt.Sprintf("%d.%02d.%d", end.Major, end.Minor, end.Patch-1))
					after := release.MustLookup(end.String())
					switch {
					case !last.Verified() || !after.Verified():
						t.Errorf("interval %s..%s: %s and %s must both be verified", p, end, last, after)
					case !breaks(t, fx, after.With(f, true)):
						t.Errorf("at %s (where %s ends), compiling with it matches every golden", after, f)
					case !breaks(t, fx, last.With(f, false)):
						t.Errorf("at %s (the last with %s), compiling without it matches every golden", last, f)
					}
				}
			}
		})
	}
}

// breaks reports whether compiling some fixture for r (a verified version
// with one fact overridden) differs from the version's golden, up to the
// renaming of persist-established ids. A compile that panics (a fact
// switched on where the version's layout has no stage for it) breaks.
func breaks(t *testing.T, fx map[string]string, r *release.Release) bool {
	t.Helper()
	base := r.Base()
	lay, _ := lflow.LayoutFor(r.Series())
	for name, path := range fx {
		golden, err := os.ReadFile(filepath.Join(goldenDir(base), name+".lflows"))
		if err != nil {
			continue // not expressible in this version
		}
		snap, ok := loadFor(t, path, base)
		if !ok {
			continue
		}
		if differs(snap, r, golden, lay) {
			return true
		}
	}
	return false
}

// differs reports whether snap compiled for r differs from golden.
func differs(snap *nbschema.Snapshot, r *release.Release, golden []byte, lay *lflow.Layout) (d bool) {
	defer func() {
		if recover() != nil {
			d = true
		}
	}()
	res := compile.CompileWith(snap, compile.Options{Release: r})
	var got bytes.Buffer
	if err := lflow.WriteText(&got, res.Flows); err != nil {
		return true
	}
	if bytes.Equal(got.Bytes(), golden) {
		return false
	}
	want, err := lflow.ParseTextLayout("golden", bytes.NewReader(golden), lay)
	if err != nil {
		return true
	}
	return len(lflow.Diff(lflow.RenumberACLIDs(want), lflow.RenumberACLIDs(res.Flows))) > 0
}
