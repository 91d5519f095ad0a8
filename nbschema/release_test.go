package nbschema_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// releaseNB starts an NB ovsdb-server (and SB, no northd) of release r.
func releaseNB(t *testing.T, r *release.Release) *ovnsandbox.Sandbox {
	t.Helper()
	testenv.NeedRelease(t, r)
	sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{NoNorthd: true, Release: r})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Stop)
	return sb
}

// TestRoundTripEachRelease stores the full fixture and every bundled
// fixture in a real NB of each release (`aclc nb load`), reads it back
// with the fast reader and with libovsdb (`aclc nb dump`, watch), and
// dumps and re-parses it: all must be equal, and the release detected
// from the NB's schema version (no northd runs here, so the NB has no
// northd_internal_version: the newest verified version of r's series).
func TestRoundTripEachRelease(t *testing.T) {
	files, err := filepath.Glob("../testdata/fixtures/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	files = append([]string{fullFixture}, files...)
	for _, r := range testenv.LiveReleases(t) {
		t.Run(r.Name(), func(t *testing.T) {
			t.Parallel()
			sb := releaseNB(t, r)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			series := release.MustLookup(r.Series())
			got, err := nbschema.DetectRelease(ctx, nbschema.Options{Remotes: sb.NB})
			if err != nil || got != series {
				t.Fatalf("DetectRelease = %v, %v; want %v", got, err, series)
			}
			nb := connect(t, sb.NB)
			if nb.Release != series {
				t.Fatalf("Connect: release %v, want %v", nb.Release, series)
			}
			if err := nb.Monitor(ctx); err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				want, ok := loadForRelease(t, f, r)
				if !ok {
					continue // r cannot express the fixture (a tier on 23.03)
				}
				// Reset NB_Global's options (a fixture without nb_global
				// leaves the row alone), then store the fixture.
				reset := nbschema.NewSnapshot()
				reset.Global = &nbdb.NBGlobal{}
				if err := nbschema.Store(ctx, nb.Client, reset, nbschema.StoreOptions{Replace: true}); err != nil {
					t.Fatalf("%s: reset: %v", f, err)
				}
				if err := nbschema.Store(ctx, nb.Client, want, nbschema.StoreOptions{Replace: true}); err != nil {
					t.Fatalf("%s: store: %v", f, err)
				}
				// The NB keeps its NB_Global row (and UUID).
				noGlobal := func(s *nbschema.Snapshot) *nbschema.Snapshot {
					if want.Global == nil && s.Global != nil && len(s.Global.Options) == 0 {
						s.Global = nil
					}
					if want.Global != nil && s.Global != nil {
						g := *s.Global
						g.UUID = want.Global.UUID
						s.Global = &g
					}
					return s
				}
				live := noGlobal(loadLive(t, sb.NB))
				if live.Release != series {
					t.Errorf("%s: LoadLive release %v, want %v", f, live.Release, series)
				}
				if diff := cmp.Diff(want, live, snapshotCmp...); diff != "" {
					t.Fatalf("%s: live NB differs from the fixture (-fixture +live):\n%s", f, diff)
				}
				// libovsdb's cache follows the transaction (watch's path).
				deadline := time.Now().Add(10 * time.Second)
				for {
					cached, err := nb.Snapshot(ctx)
					if err != nil {
						t.Fatal(err)
					}
					noGlobal(cached)
					diff := cmp.Diff(want, cached, snapshotCmp...)
					if diff == "" {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s: libovsdb cache differs (-fixture +cache):\n%s", f, diff)
					}
					time.Sleep(20 * time.Millisecond)
				}
				var buf bytes.Buffer
				if err := nbschema.WriteFixture(&buf, live); err != nil {
					t.Fatal(err)
				}
				back, err := nbschema.ParseFixture("dump.yaml", buf.Bytes())
				if err != nil {
					t.Fatalf("%s: %v\n%s", f, err, buf.String())
				}
				if diff := cmp.Diff(want, back, snapshotCmp...); diff != "" {
					t.Errorf("%s: dumped fixture differs (-fixture +dump):\n%s", f, diff)
				}
			}
		})
	}
}

// TestTierRoundTrip: ACL tier and action pass go through the NB of every
// release that has them, and through nb dump.
func TestTierRoundTrip(t *testing.T) {
	const fx = "switches:\n  - name: sw0\n    acls:\n" +
		"      - {direction: to-lport, priority: 10, match: ip4, action: pass, tier: 1}\n" +
		"      - {direction: from-lport, priority: 5, match: ip6, action: allow-related, tier: 3}\n"
	for _, r := range testenv.LiveReleases(t) {
		if !r.Has(release.ACLTier) {
			continue
		}
		t.Run(r.Name(), func(t *testing.T) {
			want, err := nbschema.ParseFixtureWith("tier.yaml", []byte(fx), nbschema.FixtureOptions{Release: r})
			if err != nil {
				t.Fatal(err)
			}
			sb := releaseNB(t, r)
			if err := store(t, sb.NB, want, nbschema.StoreOptions{}); err != nil {
				t.Fatal(err)
			}
			live := loadLive(t, sb.NB)
			if diff := cmp.Diff(want, live, snapshotCmp...); diff != "" {
				t.Fatalf("(-fixture +live):\n%s", diff)
			}
			var buf bytes.Buffer
			if err := nbschema.WriteFixture(&buf, live); err != nil {
				t.Fatal(err)
			}
			// no northd ran: the NB is its series' newest verified version
			series := release.MustLookup(r.Series())
			if !strings.Contains(buf.String(), "tier: 3") || !strings.HasPrefix(buf.String(), "ovn: "+series.Name()) {
				t.Errorf("dump lacks the tier or the release:\n%s", buf.String())
			}
			back, err := nbschema.ParseFixture("dump.yaml", buf.Bytes())
			if err != nil || back.Release != series {
				t.Fatalf("%v, release %v\n%s", err, back, buf.String())
			}
			if diff := cmp.Diff(want, back, snapshotCmp...); diff != "" {
				t.Errorf("(-fixture +dump):\n%s", diff)
			}
		})
	}
}

// TestStoreColumnTheReleaseLacks: a row that sets a column the NB's
// release does not have is refused, naming the row and the column, and
// nothing is written.
func TestStoreColumnTheReleaseLacks(t *testing.T) {
	sb := releaseNB(t, release.MustLookup("23.03.1"))
	snap := nbschema.NewSnapshot()
	const u = "8e1f3c2a-0000-4000-8000-000000000001"
	snap.ACLs[u] = &nbdb.ACL{UUID: u, Direction: "to-lport", Priority: 1, Match: "ip", Action: "allow", Tier: 2}
	snap.Origin[u] = "x.yaml:3:5"
	err := store(t, sb.NB, snap, nbschema.StoreOptions{})
	if err == nil || !strings.Contains(err.Error(), "ACL "+u+" (x.yaml:3:5)") || !strings.Contains(err.Error(), "no column tier") {
		t.Fatalf("got %v, want an error naming the ACL and column tier", err)
	}
	if n := len(loadLive(t, sb.NB).ACLs); n != 0 {
		t.Errorf("%d ACLs written", n)
	}
}

// TestUnknownSchemaVersion: an NB whose schema version no supported
// release has is refused, naming the version and the supported releases,
// unless a release is given, which then wins.
func TestUnknownSchemaVersion(t *testing.T) {
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server")
	dir := t.TempDir()
	schema, err := os.ReadFile(ovnsandbox.NBSchema)
	if err != nil {
		t.Fatal(err)
	}
	schema = bytes.Replace(schema, []byte(`"version": "7.0.0"`), []byte(`"version": "7.99.1"`), 1)
	os.WriteFile(filepath.Join(dir, "nb.ovsschema"), schema, 0o644)
	db, sock := filepath.Join(dir, "nb.db"), filepath.Join(dir, "nb.sock")
	if out, err := exec.Command("ovsdb-tool", "create", db, filepath.Join(dir, "nb.ovsschema")).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	srv := exec.Command("ovsdb-server", "--remote=punix:"+sock, "--unixctl="+filepath.Join(dir, "ctl"), db)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	for i := 0; i < 200; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	ctx := context.Background()
	opts := nbschema.Options{Remotes: "unix:" + sock}
	for name, read := range map[string]func() error{
		"LoadLive": func() error { _, err := nbschema.LoadLive(ctx, opts); return err },
		"Connect":  func() error { _, err := nbschema.Connect(ctx, opts); return err },
	} {
		err := read()
		var se *release.UnknownSchemaError
		if !errors.As(err, &se) || se.Version != "7.99.1" || !strings.Contains(err.Error(), "26.03 (NB schema 7.18.0)") {
			t.Errorf("%s: got %v, want an UnknownSchemaError for 7.99.1 naming the supported releases", name, err)
		}
	}
	opts.Release = release.MustLookup("23.03.1")
	s, err := nbschema.LoadLive(ctx, opts)
	if err != nil || s.Release != release.MustLookup("23.03.1") {
		t.Fatalf("LoadLive with Release 23.03: %v, %v", s, err)
	}
}

// loadForRelease reads fixture f for release r; false when r cannot express
// it (it uses something r lacks). A fixture its own release cannot read
// fails the test.
func loadForRelease(t *testing.T, f string, r *release.Release) (*nbschema.Snapshot, bool) {
	t.Helper()
	s, err := nbschema.LoadFixtureWith(f, nbschema.FixtureOptions{Release: r})
	if err == nil {
		return s, true
	}
	if _, derr := nbschema.LoadFixture(f); derr != nil {
		t.Fatal(derr)
	}
	return nil, false
}

// TestSamplingNFRoundTrip: the sampling and network-function sections go
// through a 26.03 NB and nb dump unchanged; 25.03 refuses the network
// functions and 23.03 the samples too, at their positions.
func TestSamplingNFRoundTrip(t *testing.T) {
	const fx = "testdata/sampling-nf.yaml"
	want, err := nbschema.LoadFixture(fx)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Samples) != 2 || len(want.SampleCollectors) != 2 || len(want.SamplingApps) != 3 ||
		len(want.NetworkFunctions) != 1 || len(want.NetworkFunctionGroups) != 1 || len(want.NetworkFunctionHealths) != 1 {
		t.Fatalf("fixture rows: %+v", want)
	}
	sb := releaseNB(t, release.MustLookup("26.03.1"))
	if err := store(t, sb.NB, want, nbschema.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	live := loadLive(t, sb.NB)
	if diff := cmp.Diff(want, live, snapshotCmp...); diff != "" {
		t.Fatalf("(-fixture +live):\n%s", diff)
	}
	nb := connect(t, sb.NB)
	if err := nb.Monitor(context.Background()); err != nil {
		t.Fatal(err)
	}
	cached, err := nb.Snapshot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, cached, snapshotCmp...); diff != "" {
		t.Fatalf("(-fixture +libovsdb):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := nbschema.WriteFixture(&buf, live); err != nil {
		t.Fatal(err)
	}
	back, err := nbschema.ParseFixture("dump.yaml", buf.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if diff := cmp.Diff(want, back, snapshotCmp...); diff != "" {
		t.Errorf("(-fixture +dump):\n%s\n%s", diff, buf.String())
	}
	// References to the new tables are written by name, as the others
	// (samples have no name column: by UUID).
	for _, w := range []string{"network_function_group: nfg0", "collectors: [c1, c2]", "inport: nf-in", "outport: nf-out",
		"health_check: hc0", "network_functions: [nf0]", "active: nf0"} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("dump lacks %q:\n%s", w, buf.String())
		}
	}
	for _, c := range []struct {
		r    *release.Release
		want []string
	}{
		{release.MustLookup("25.03.0"), []string{"network_function_groups[0]: network functions", "came in OVN 26.03; OVN 25.03.0 does not have it",
			"switches[0].acls[0].network_function_group:"}},
		{release.MustLookup("23.03.1"), []string{"samples[0]: ACL sampling", "came in OVN 24.09; OVN 23.03.1 does not have it", "switches[0].acls[0].tier:"}},
	} {
		_, err := nbschema.LoadFixtureWith(fx, nbschema.FixtureOptions{Release: c.r})
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: got %v, want %q", c.r, err, w)
			}
		}
	}
}

// TestDetectNorthdVersion: a live NB served by the real northd of each
// installable version is detected as exactly that version (northd writes
// NB_Global options:northd_internal_version on every run); an NB with
// another northd_internal_version — a newer patch, another series, an
// unknown suffix, garbage, none — is detected, refused or assumed as
// release.Detect says, through the live path.
func TestDetectNorthdVersion(t *testing.T) {
	for _, r := range testenv.LiveReleases(t) {
		t.Run(r.Name(), func(t *testing.T) {
			t.Parallel()
			testenv.NeedRelease(t, r)
			sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{Release: r})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(sb.Stop)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if _, err := sb.NBCtl(ctx, "--wait=sb", "sync"); err != nil {
				t.Fatal(err)
			}
			raw, err := sb.NBCtl(ctx, "get", "NB_Global", ".", "options:northd_internal_version")
			if err != nil || !strings.HasPrefix(strings.Trim(strings.TrimSpace(raw), `"`), r.Name()+"-"+r.SBSchema+"-") {
				t.Fatalf("northd %s wrote northd_internal_version %q (%v)", r, raw, err)
			}
			got, err := nbschema.DetectRelease(ctx, nbschema.Options{Remotes: sb.NB})
			if err != nil || got != r {
				t.Fatalf("DetectRelease with northd running = %v, %v; want exactly %v", got, err, r)
			}
			if live := loadLive(t, sb.NB); live.Release != r {
				t.Errorf("LoadLive release %v, want %v", live.Release, r)
			}
			// Stop northd (it would write its version back) and try the
			// other forms.
			sb.StopNorthd()
			newest := release.OnBranch(r.Version)
			next := newest[len(newest)-1].Version
			next.Patch++
			for _, c := range []struct {
				value, want, err string
			}{
				{value: r.Name() + "-" + r.SBSchema + "-99.1-custom", want: r.Name()},
				{value: next.String() + "-" + r.SBSchema + "-99.1", err: "newer than " + newest[len(newest)-1].Name()},
				{value: "24.09.1-20.37.0-75.1", err: "no version of series 24.09"},
				{value: "nonsense", err: "want VERSION-SBSCHEMA"},
				{value: "", want: release.MustLookup(r.Series()).Name()},
			} {
				set := "options:northd_internal_version=" + strconv.Quote(c.value)
				args := []string{"set", "NB_Global", ".", set}
				if c.value == "" {
					args = []string{"remove", "NB_Global", ".", "options", "northd_internal_version"}
				}
				if _, err := sb.NBCtl(ctx, args...); err != nil {
					t.Fatal(err)
				}
				got, err := nbschema.DetectRelease(ctx, nbschema.Options{Remotes: sb.NB})
				if c.err != "" {
					if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "--ovn-version") {
						t.Errorf("northd_internal_version %q: %v, %v; want an error saying %q", c.value, got, err, c.err)
					}
					// --ovn-version still reads it.
					if o, err := nbschema.DetectRelease(ctx, nbschema.Options{Remotes: sb.NB, Release: r}); err != nil || o != r {
						t.Errorf("northd_internal_version %q with --ovn-version %s: %v, %v", c.value, r, o, err)
					}
					continue
				}
				if err != nil || got.Name() != c.want {
					t.Errorf("northd_internal_version %q: %v, %v; want %s", c.value, got, err, c.want)
				}
			}
		})
	}
}
