package compile_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
)

var dpHeaderUUID = regexp.MustCompile(`" \([0-9a-f-]{36}\)  Pipeline`)

// routerFixtures are the fixtures with logical routers that aclc compiles.
func routerFixtures(t *testing.T) []string {
	t.Helper()
	paths, err := filepath.Glob("../testdata/routers/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no router fixtures: %v", err)
	}
	return paths
}

// TestRoutersNorthd loads every router fixture into a real NB under a
// real ovn-northd 23.03 and requires compile.Routers on the same live NB
// to give, for each router it compiles, exactly northd's lr_in_* and
// lr_out_* flows: `ovn-sbctl lflow-list ROUTER`, byte for byte (the
// datapath UUID in the headers aside). Routers it does not compile must
// be the ones with NAT, gateway ports and the like (the fixture says
// which with external_ids:aclc-test-unsupported).
func TestRoutersNorthd(t *testing.T) {
	sb := startNorthd(t, release.MustLookup("23.03.1"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	compiled := 0
	for _, path := range routerFixtures(t) {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".yaml"), func(t *testing.T) {
			snap, err := nbschema.LoadFixture(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := sb.Load(ctx, snap); err != nil {
				t.Fatal(err)
			}
			live, err := nbschema.LoadLive(ctx, nbschema.Options{Remotes: sb.NB})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range compile.Routers(live) {
				lr := live.Routers[r.UUID]
				want := lr.ExternalIDs["aclc-test-unsupported"]
				if len(r.Unsupported) > 0 {
					if want == "" || !strings.Contains(r.Unsupported[0].String(), want) {
						t.Errorf("router %s not compiled: %v (fixture expects %q)", r.Name, r.Unsupported, want)
					}
					continue
				}
				if want != "" {
					t.Errorf("router %s compiled, fixture expects it unsupported (%s)", r.Name, want)
				}
				out, err := sb.SBCtl(ctx, "lflow-list", r.Name)
				if err != nil {
					t.Fatal(err)
				}
				norm := func(s string) string { return dpHeaderUUID.ReplaceAllString(s, "\" (UUID)  Pipeline") }
				if diff := cmp.Diff(norm(out), norm(r.Text())); diff != "" {
					t.Errorf("router %s: flows differ (-northd +aclc):\n%s", r.Name, diff)
				}
				compiled++
			}
		})
	}
	t.Logf("%d routers compiled byte-identical to northd", compiled)
}

// TestRoutersOtherRelease: routers of an NB of another release are not
// compiled (their stages and flows are not 23.03's).
func TestRoutersOtherRelease(t *testing.T) {
	snap, err := nbschema.LoadFixture("../testdata/routers/two-switches.yaml")
	if err != nil {
		t.Fatal(err)
	}
	snap.Release = release.MustLookup("26.03.1")
	rs := compile.Routers(snap)
	if len(rs) != 1 || len(rs[0].Unsupported) == 0 || len(rs[0].Flows) != 0 ||
		!strings.Contains(rs[0].Unsupported[0].String(), "router pipeline of OVN 26.03.1") {
		t.Errorf("26.03 router: %+v", rs[0].Unsupported)
	}
	snap.Release = release.MustLookup("23.03.1")
	if rs := compile.Routers(snap); len(rs[0].Unsupported) != 0 || len(rs[0].Flows) == 0 {
		t.Errorf("23.03 router not compiled: %v", rs[0].Unsupported)
	}
}
