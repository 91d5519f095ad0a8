package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnroot"
	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// startCentral starts NB, SB and (unless noNorthd) ovn-northd of release r.
func startCentral(t *testing.T, r *release.Release, noNorthd bool) *ovnsandbox.Sandbox {
	t.Helper()
	if ovnroot.OnHost(r) {
		testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovn-northd", "ovn-nbctl", "ovn-sbctl")
	}
	testenv.NeedRelease(t, r)
	sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{Release: r, NoNorthd: noNorthd})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Stop)
	return sb
}

// sbListing is the release's own `ovn-sbctl lflow-list` of its ACL
// stages, as testdata/regen.sh keeps it for a golden: the only rewrite is
// each "Datapath:" header's SB Datapath_Binding UUID, which becomes the NB
// Logical_Switch UUID aclc prints there.
func sbListing(t *testing.T, ctx context.Context, sb *ovnsandbox.Sandbox) string {
	t.Helper()
	lay, ok := lflow.LayoutFor(sb.Release.Series())
	if !ok {
		t.Fatalf("no layout for %s", sb.Release)
	}
	stage := regexp.MustCompile(`^  table=[0-9]+ *\((` + lay.ACLStageNames() + `) *\),`)
	uuids, err := sb.SBCtl(ctx, "--bare", "--columns=_uuid", "list", "Datapath_Binding")
	if err != nil {
		t.Fatal(err)
	}
	var rename []string
	for _, u := range strings.Fields(uuids) {
		ls, err := sb.SBCtl(ctx, "--if-exists", "get", "Datapath_Binding", u, "external_ids:logical-switch")
		if ls = strings.Trim(strings.TrimSpace(ls), `"`); err == nil && ls != "" {
			rename = append(rename, "("+u+")  Pipeline", "("+ls+")  Pipeline")
		}
	}
	out, err := sb.SBCtl(ctx, "lflow-list")
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	hdr := ""
	for _, l := range strings.SplitAfter(out, "\n") {
		switch {
		case strings.HasPrefix(l, "Datapath: "):
			hdr = strings.NewReplacer(rename...).Replace(l)
		case stage.MatchString(l):
			b.WriteString(hdr)
			hdr = ""
			b.WriteString(l)
		}
	}
	return b.String()
}

// TestCompileSBLive: on each release with persist-established ACLs,
// `aclc compile --nb --sb` prints exactly what that release's northd wrote
// to the SB (its own ovn-sbctl lflow-list, no renaming of ACL ids), while
// without --sb the ids are aclc's own (equal only up to a renaming). The
// NB is loaded in two steps so that northd's ids cannot be aclc's: the
// persist-established ACL with the smallest UUID comes last and gets the
// highest id from northd, the first from aclc.
func TestCompileSBLive(t *testing.T) {
	const fx = "../../testdata/fixtures/persist-established-multi.yaml"
	for _, r := range testenv.LiveReleases(t) {
		if !r.Has(release.PersistEstablished) {
			continue
		}
		t.Run(r.Name(), func(t *testing.T) {
			t.Parallel()
			sb := startCentral(t, r, false)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			full, err := nbschema.LoadFixtureWith(fx, nbschema.FixtureOptions{Release: r})
			if err != nil {
				t.Fatal(err)
			}
			first, err := nbschema.LoadFixtureWith(fx, nbschema.FixtureOptions{Release: r})
			if err != nil {
				t.Fatal(err)
			}
			last := dropFirstPersistACL(t, first)
			if err := sb.Load(ctx, first); err != nil {
				t.Fatal(err)
			}
			nb, err := nbschema.Connect(ctx, nbschema.Options{Remotes: sb.NB})
			if err != nil {
				t.Fatal(err)
			}
			err = nbschema.Store(ctx, nb.Client, full, nbschema.StoreOptions{Replace: true})
			nb.Close()
			if err != nil {
				t.Fatal(err)
			}
			if err := sb.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			want := sbListing(t, ctx, sb)
			if !strings.Contains(want, "reg2[16..31] = 4;") {
				t.Fatalf("northd allocated no id 4 (to ACL %s):\n%s", last, want)
			}

			c := aclc(t, "", "compile", "--nb", sb.NB, "--sb", sb.SB)
			if c.code != 0 || c.stderr != "" {
				t.Fatalf("compile --sb: exit %d: %s", c.code, c.stderr)
			}
			if c.stdout != want {
				t.Errorf("compile --nb --sb differs from ovn-sbctl lflow-list:\n%s", textDiff(t, want, c.stdout))
			}
			own := aclc(t, "", "compile", "--nb", sb.NB)
			if own.code != 0 || own.stdout == want {
				t.Errorf("compile without --sb: exit %d, identical to northd's ids: %v (the two-step load should make them differ)", own.code, own.stdout == want)
			}
		})
	}
}

// dropFirstPersistACL removes from s the persist-established ACL with the
// smallest UUID and returns that UUID.
func dropFirstPersistACL(t *testing.T, s *nbschema.Snapshot) string {
	t.Helper()
	for _, id := range nbschema.SortedKeys(s.ACLs) {
		if a := s.ACLs[id]; a.Action != nbdb.ACLActionAllowRelated || a.Options["persist-established"] != "true" {
			continue
		}
		delete(s.ACLs, id)
		for _, ls := range s.Switches {
			ls.ACLs = remove(ls.ACLs, id)
		}
		for _, pg := range s.PortGroups {
			pg.ACLs = remove(pg.ACLs, id)
		}
		return id
	}
	t.Fatal("no persist-established ACL")
	return ""
}

func remove(list []string, x string) []string {
	var out []string
	for _, s := range list {
		if s != x {
			out = append(out, s)
		}
	}
	return out
}

// textDiff shows the first lines in which a and b differ.
func textDiff(t *testing.T, a, b string) string {
	t.Helper()
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < max(len(la), len(lb)) && len(out) < 20; i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			out = append(out, "- "+x, "+ "+y)
		}
	}
	return strings.Join(out, "\n")
}

// TestCompileSBRefused: --sb that cannot be reached, or that belongs to
// another release than the NB, is an error naming it, with nothing on
// stdout.
func TestCompileSBRefused(t *testing.T) {
	nb26 := startCentral(t, release.MustLookup("26.03.1"), true)
	sb25 := startCentral(t, release.MustLookup("25.03.0"), true)
	if l := aclc(t, "", "nb", "load", "--nb", nb26.NB, "../../testdata/fixtures/persist-established.yaml"); l.code != 0 {
		t.Fatalf("nb load: %s", l.stderr)
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"unreachable", []string{"--nb", nb26.NB, "--sb", "unix:/nonexistent/sb.sock"}, []string{"--sb", "/nonexistent/sb.sock"}},
		{"NB as SB", []string{"--nb", nb26.NB, "--sb", nb26.NB}, []string{"--sb", "OVN_Northbound"}},
		{"other release", []string{"--nb", nb26.NB, "--sb", sb25.SB}, []string{"OVN 25.03's (SB schema 20.41.0)", "(SB schema 21.8.0)"}},
		{"fixture of another release", []string{"../../testdata/fixtures/persist-established.yaml", "--ovn-version", "26.03", "--sb", sb25.SB}, []string{"OVN 25.03's"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := aclc(t, "", append([]string{"compile", "--timeout", "2s"}, tc.args...)...)
			if c.code != 1 || c.stdout != "" {
				t.Errorf("exit %d, stdout %.80q; want 1 and nothing", c.code, c.stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(c.stderr, w) {
					t.Errorf("stderr %q lacks %q", c.stderr, w)
				}
			}
		})
	}
}

// chassisKeys are the feature keys an up-to-date ovn-controller of the
// supported releases announces in SB Chassis other_config
// (include/ovn/features.h at v26.03.1; 25.03.0's are a subset).
var chassisKeys = []string{"port-up-notif", "ct-no-masked-label", "mac-binding-timestamp", "ovn-ct-lb-related",
	"fdb-timestamp", "ls-dpg-column", "ct-commit-nat-v2", "ct-commit-to-zone", "ovn-sample-with-registers",
	"ct-next-zone", "ct-label-flush", "ct-state-save"}

// TestChassisLacksNorthd: with a chassis in the SB that has every feature
// but one, each release's northd writes what `aclc compile
// --chassis-lacks FEATURE` prints for the NB (and what `compile --sb`
// prints, reading the chassis itself; verify, which reads them too, finds
// the SB in sync), and that differs from the flows without the flag
// (northd with no chassis).
func TestChassisLacksNorthd(t *testing.T) {
	for _, r := range testenv.LiveReleases(t) {
		if !r.Has(release.ACLSample) {
			continue
		}
		t.Run(r.Name(), func(t *testing.T) {
			t.Parallel()
			sb := startCentral(t, r, false)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			for _, tc := range []struct{ feature, fixture string }{
				{"ct-label-flush", "persist-established"},
				{"ovn-sample-with-registers", "sample-new-est"},
			} {
				t.Run(tc.feature, func(t *testing.T) {
					fx := "../../testdata/fixtures/" + tc.fixture + ".yaml"
					snap, err := nbschema.LoadFixtureWith(fx, nbschema.FixtureOptions{Release: r})
					if err != nil {
						t.Fatal(err)
					}
					if err := sb.Load(ctx, snap); err != nil {
						t.Fatal(err)
					}
					args := []string{"--may-exist", "chassis-add", "ch1", "geneve", "127.0.0.1", "--", "set", "Chassis", "ch1"}
					for _, k := range chassisKeys {
						args = append(args, "other_config:"+k+"="+map[bool]string{true: "false", false: "true"}[k == tc.feature])
					}
					if _, err := sb.SBCtl(ctx, args...); err != nil {
						t.Fatal(err)
					}
					defer sb.SBCtl(ctx, "chassis-del", "ch1")
					for range 2 { // northd sees the chassis, then the NB's sync
						if err := sb.Sync(ctx); err != nil {
							t.Fatal(err)
						}
					}
					want := sbListing(t, ctx, sb)
					for _, c := range [][]string{
						{"compile", "--nb", sb.NB, "--chassis-lacks", tc.feature},
						{"compile", "--nb", sb.NB, "--sb", sb.SB},
					} {
						got := aclc(t, "", c...)
						if got.code != 0 || got.stdout != want {
							t.Errorf("%s: exit %d %s\n%s", strings.Join(c, " "), got.code, got.stderr, textDiff(t, want, got.stdout))
						}
					}
					if got := watchFirstSnapshot(t, ctx, "--nb", sb.NB, "--chassis-lacks", tc.feature); got != want {
						t.Errorf("watch --chassis-lacks %s:\n%s", tc.feature, textDiff(t, want, got))
					}
					if v := aclc(t, "", "verify", "--nb", sb.NB, "--sb", sb.SB); v.code != 0 || !strings.HasPrefix(v.stdout, "in sync:") {
						t.Errorf("verify with a chassis lacking %s: exit %d\n%s%s", tc.feature, v.code, v.stdout, v.stderr)
					}
					plain := aclc(t, "", "compile", "--nb", sb.NB)
					if plain.stdout == want {
						t.Errorf("northd lacking %s wrote the same flows as with every feature: the fixture does not show the feature", tc.feature)
					}
					// ignore_chassis_features: northd enables every feature
					// whatever the chassis, and the flag no longer applies.
					if _, err := sb.NBCtl(ctx, "set", "NB_Global", ".", "options:ignore_chassis_features=true"); err != nil {
						t.Fatal(err)
					}
					defer sb.NBCtl(ctx, "remove", "NB_Global", ".", "options", "ignore_chassis_features")
					if err := sb.Sync(ctx); err != nil {
						t.Fatal(err)
					}
					want = sbListing(t, ctx, sb)
					if got := aclc(t, "", "compile", "--nb", sb.NB, "--chassis-lacks", tc.feature); got.code != 0 || got.stdout != want || !strings.Contains(got.stderr, "has no effect") {
						t.Errorf("compile --chassis-lacks %s with ignore_chassis_features: exit %d %s\n%s", tc.feature, got.code, got.stderr, textDiff(t, want, got.stdout))
					}
					if got := watchFirstSnapshot(t, ctx, "--nb", sb.NB, "--chassis-lacks", tc.feature); got != want {
						t.Errorf("watch --chassis-lacks %s with ignore_chassis_features:\n%s", tc.feature, textDiff(t, want, got))
					}
				})
			}
		})
	}
}

// TestCompileSBNetworkFunctionsLive: with the network functions' ports
// bound to a chassis (ovn-sbctl lsp-bind; northd then sets them up), the
// group's function is active, on 26.09 only so (network_function_update_active
// reads the bindings): `aclc compile --nb --sb` reads them and prints
// exactly the SB's flows, redirects (inline) and mirrors (vtap) included;
// without --sb, 26.09's aclc assumes no chassis, as the goldens do.
func TestCompileSBNetworkFunctionsLive(t *testing.T) {
	cases := []struct{ fixture, want string }{
		{"network-function", "outport = \"nf-in\"; output;"},
		{"network-function-vtap", "clone {outport = \"tap1\"; output;}; next;"},
	}
	for _, r := range testenv.LiveReleases(t) {
		if !r.Has(release.NetworkFunction) {
			continue
		}
		for _, c := range cases {
			fx := "../../testdata/fixtures/" + c.fixture + ".yaml"
			snap, err := nbschema.LoadFixtureWith(fx, nbschema.FixtureOptions{Release: r})
			if err != nil {
				continue // not expressible on r
			}
			t.Run(r.Name()+"/"+c.fixture, func(t *testing.T) {
				t.Parallel()
				sb := startCentral(t, r, false)
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
				defer cancel()
				if err := sb.Load(ctx, snap); err != nil {
					t.Fatal(err)
				}
				if _, err := sb.SBCtl(ctx, "chassis-add", "ch1", "geneve", "127.0.0.1"); err != nil {
					t.Fatal(err)
				}
				for _, id := range nbschema.SortedKeys(snap.Ports) {
					if _, err := sb.SBCtl(ctx, "lsp-bind", snap.Ports[id].Name, "ch1"); err != nil {
						t.Fatal(err)
					}
				}
				if err := sb.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				want := sbListing(t, ctx, sb)
				if r.Has(release.NFPortBinding) && !strings.Contains(want, c.want) {
					t.Fatalf("northd has no flow with %q with the ports bound:\n%s", c.want, want)
				}
				got := aclc(t, "", "compile", "--nb", sb.NB, "--sb", sb.SB)
				if got.code != 0 || got.stderr != "" {
					t.Fatalf("compile --sb: exit %d: %s", got.code, got.stderr)
				}
				if got.stdout != want {
					t.Errorf("compile --nb --sb differs from ovn-sbctl lflow-list:\n%s", textDiff(t, want, got.stdout))
				}
				if own := aclc(t, "", "compile", "--nb", sb.NB); r.Has(release.NFPortBinding) && strings.Contains(own.stdout, c.want) {
					t.Errorf("compile without --sb has %q: it should assume no chassis", c.want)
				}
			})
		}
	}
}
