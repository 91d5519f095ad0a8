package compile_test

import (
	"context"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
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

// TestRoutersNorthd loads every router fixture into a real NB under the
// real ovn-northd of each version whose router pipeline aclc verifies
// (compile.RouterReleases) and requires compile.Routers on the same live
// NB to give, for each router it compiles, exactly northd's lr_in_* and
// lr_out_* flows: `ovn-sbctl lflow-list ROUTER`, byte for byte (the
// datapath UUID in the headers aside). Routers it does not compile must
// be the ones with NAT, gateway ports and the like (the fixture says
// which with external_ids:aclc-test-unsupported). The versions run in
// parallel, each with its own northd.
//
// Each router fact (release.RouterFact) is pinned too: compiling with the
// fact switched (on where the version lacks it, off where it has it) must
// change some router's flows or whether it is compiled, against the same
// northd output, on at least one of the versions — a fact no fixture
// exercises on a verified version fails.
func TestRoutersNorthd(t *testing.T) {
	paths := routerFixtures(t)
	var (
		mu     sync.Mutex
		pinned = map[*release.Fact]bool{}
		ran    = 0
	)
	t.Cleanup(func() {
		if ran < len(compile.RouterReleases()) {
			return // a -run filter left versions out
		}
		for _, f := range release.Facts() {
			if f.Kind() == release.RouterFact && !pinned[f] {
				t.Errorf("router fact %s: switching it changes no router of any fixture on any verified version", f.Name())
			}
		}
	})
	for _, r := range compile.RouterReleases() {
		t.Run(r.Name(), func(t *testing.T) {
			t.Parallel()
			seen := testRoutersNorthd(t, r, paths)
			mu.Lock()
			defer mu.Unlock()
			ran++
			for _, f := range release.Facts() {
				if f.Kind() == release.RouterFact && factChangesRouters(r, f, seen) {
					pinned[f] = true
				}
			}
		})
	}
}

// northdRouters is one fixture's live NB and the flows northd wrote for
// each router aclc compiled ("" for one it does not).
type northdRouters struct {
	live  *nbschema.Snapshot
	flows map[string]string
}

// factChangesRouters reports whether compiling the fixtures with fact f
// switched changes a router's flows from northd's, or whether it is
// compiled.
func factChangesRouters(rel *release.Release, f *release.Fact, seen []northdRouters) bool {
	switched := rel.With(f, !rel.Has(f))
	for _, n := range seen {
		live := *n.live
		live.Release = switched
		for _, r := range compile.Routers(&live) {
			want, ok := n.flows[r.Name]
			if !ok {
				continue
			}
			if (len(r.Unsupported) > 0) != (want == "") || want != "" && normHeader(want) != normHeader(r.Text()) {
				return true
			}
		}
	}
	return false
}

var crECMPKey = regexp.MustCompile(`(outport == "cr-[^"]*"\), action=\(ct_commit \{ ct_label.ecmp_reply_eth = eth.dst; ct_mark.ecmp_reply_port = )(\d+)`)

// normCRKeys blanks the tunnel keys of the chassis-redirect ports in the
// lr_in_ecmp_stateful_egr flows of listing s, and returns them sorted.
func normCRKeys(s string) (string, []string) {
	var keys []string
	s = crECMPKey.ReplaceAllStringFunc(s, func(m string) string {
		sub := crECMPKey.FindStringSubmatch(m)
		keys = append(keys, sub[2])
		return sub[1] + "KEY"
	})
	slices.Sort(keys)
	return s, keys
}

// normHeader blanks the datapath UUID of lflow-list's headers.
func normHeader(s string) string { return dpHeaderUUID.ReplaceAllString(s, "\" (UUID)  Pipeline") }

func testRoutersNorthd(t *testing.T, rel *release.Release, paths []string) []northdRouters {
	var seen []northdRouters
	sb := startNorthd(t, rel)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	compiled := 0
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".yaml"), func(t *testing.T) {
			snap, err := nbschema.LoadFixtureWith(path, nbschema.FixtureOptions{Release: rel})
			if err != nil {
				t.Fatal(err)
			}
			if err := sb.Load(ctx, snap); err != nil {
				t.Fatal(err)
			}
			live, err := nbschema.LoadLive(ctx, nbschema.Options{Remotes: sb.NB, Release: rel})
			if err != nil {
				t.Fatal(err)
			}
			nr := northdRouters{live: live, flows: map[string]string{}}
			defer func() { seen = append(seen, nr) }()
			for _, r := range compile.Routers(live) {
				lr := live.Routers[r.UUID]
				want := lr.ExternalIDs["aclc-test-unsupported"]
				if w, ok := lr.ExternalIDs["aclc-test-unsupported-"+rel.Name()]; ok {
					want = w // the release has what aclc does not compile
				}
				if len(r.Unsupported) > 0 {
					nr.flows[r.Name] = ""
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
				nr.flows[r.Name] = out
				got := r.Text()
				if r.CRKeysUnknown {
					// northd numbers the chassis-redirect ports in an
					// order the NB does not give: the same keys, in any
					// order
					var wantKeys, gotKeys []string
					out, wantKeys = normCRKeys(out)
					got, gotKeys = normCRKeys(got)
					if !slices.Equal(wantKeys, gotKeys) {
						t.Errorf("router %s: chassis-redirect port keys %v, northd's %v", r.Name, gotKeys, wantKeys)
					}
				}
				if diff := cmp.Diff(normHeader(out), normHeader(got)); diff != "" {
					t.Errorf("router %s: flows differ (-northd +aclc):\n%s", r.Name, diff)
				} else {
					compiled++
				}
			}
		})
	}
	t.Logf("OVN %s: %d routers compiled byte-identical to northd", rel, compiled)
	if compiled == 0 {
		t.Errorf("OVN %s: no router compiled", rel)
	}
	return seen
}

// TestRoutersOtherRelease: routers are compiled for the versions whose
// router pipeline TestRoutersNorthd verifies, each with its own layout;
// a version it does not verify (26.03.2, 25.09.4) gets no flows and an
// Unsupported naming it.
func TestRoutersOtherRelease(t *testing.T) {
	snap, err := nbschema.LoadFixture("../testdata/routers/two-switches.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"26.03.2", "25.09.4", "24.03.9"} {
		snap.Release = release.MustLookup(v)
		rs := compile.Routers(snap)
		if len(rs) != 1 || len(rs[0].Unsupported) == 0 || len(rs[0].Flows) != 0 ||
			!strings.Contains(rs[0].Unsupported[0].String(), "router pipeline of OVN "+v) {
			t.Errorf("%s router: %+v", v, rs[0].Unsupported)
		}
	}
	tables := map[string]int{}
	for _, r := range compile.RouterReleases() {
		snap.Release = r
		rs := compile.Routers(snap)
		if len(rs[0].Unsupported) != 0 || len(rs[0].Flows) == 0 {
			t.Errorf("%s router not compiled: %v", r, rs[0].Unsupported)
			continue
		}
		tables[r.Name()] = rs[0].Layout.Table(lflow.LRInARPRequest)
	}
	// northd.h's lr_in_arp_request: 21 in 23.03, 25 in 25.03.0 (DHCP
	// relay, post-unsnat), 27 from 26.03 (ct_extract, network_id).
	want := map[string]int{"23.03.1": 21, "25.03.0": 25, "26.03.1": 27, "26.09.0": 27}
	if diff := cmp.Diff(want, tables); diff != "" {
		t.Errorf("lr_in_arp_request tables (-want +got):\n%s", diff)
	}
}
