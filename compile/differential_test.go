package compile_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/internal/ovnroot"
	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/ovsdbconn"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/sbschema"
)

// startNorthd starts a real NB + SB + ovn-northd of release r for the test.
func startNorthd(t *testing.T, r *release.Release) *ovnsandbox.Sandbox {
	t.Helper()
	if ovnroot.OnHost(r) {
		testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovn-northd", "ovn-nbctl", "ovn-sbctl", "ovn-trace")
	}
	testenv.NeedRelease(t, r)
	sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{Release: r})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Stop)
	return sb
}

// loadAndSync writes snap into the sandbox NB (replacing what was there),
// waits for northd and returns the SB's ACL-stage flows.
func loadAndSync(t *testing.T, ctx context.Context, sb *ovnsandbox.Sandbox, snap *nbschema.Snapshot) *lflow.Listing {
	t.Helper()
	if err := sb.Load(ctx, snap); err != nil {
		t.Fatal(err)
	}
	l, err := sb.ACLStageFlows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestDifferentialNorthd loads every fixture into a real NB of every
// release, lets that release's real ovn-northd compute the SB, and compares
// its ACL-stage flows with `aclc compile --nb` on that same live NB: they
// must be identical, flow for flow (datapaths matched by name), with the
// persist-established ACL ids read from the live SB. The releases run in
// parallel, each with its own northd.
func TestDifferentialNorthd(t *testing.T) {
	for _, r := range testenv.LiveReleases(t) {
		t.Run(r.Name(), func(t *testing.T) {
			t.Parallel()
			sb := startNorthd(t, r)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			for name, path := range fixtures(t) {
				t.Run(name, func(t *testing.T) {
					snap, ok := loadFor(t, path, r)
					if !ok {
						return // r cannot express the fixture
					}
					northd := loadAndSync(t, ctx, sb, snap)
					live, err := nbschema.LoadLive(ctx, nbschema.Options{Remotes: sb.NB})
					if err != nil {
						t.Fatal(err)
					}
					opts := compile.Options{Release: r}
					if r.Has(release.PersistEstablished) {
						// The ids northd allocated, as `aclc compile --nb --sb`.
						if opts.ACLIDs, err = sbschema.LoadACLIDs(ctx, ovsdbconn.Options{Remotes: sb.SB}); err != nil {
							t.Fatal(err)
						}
					}
					res := compile.CompileWith(live, opts)
					aclc := res.Flows
					if compile.Undecided(res.Problems) && oneOf(northd, northdAlternatives(t, live, r)) {
						return // northd wrote one of the outcomes aclc names
					}
					if changes := lflow.Diff(northd, aclc); len(changes) > 0 {
						var d bytes.Buffer
						lflow.WriteDiff(&d, "northd "+r.Name(), "aclc compile --nb", changes)
						t.Errorf("aclc differs from the live northd %s:\n%s", r, d.String())
					}
					if n, a := northd.NumFlows(), aclc.NumFlows(); n != a {
						t.Errorf("northd %s wrote %d ACL-stage flows, aclc %d", r, n, a)
					}
				})
			}
		})
	}
}

// TestSeedStatelessTrace is the seed's "ACL allow-stateless omit conntrack"
// check, for the Logical_Switch and the Port_Group variants, run on every
// release with that release's own ovn-trace against the flows its northd
// wrote for the fixture (the differential test proves aclc writes the same
// flows): tcp goes straight to output, udp goes through conntrack twice.
func TestSeedStatelessTrace(t *testing.T) {
	const (
		eth = `eth.src == 00:00:00:00:00:01 && eth.dst == 00:00:00:00:00:02`
		ip  = `ip.ttl==64 && ip4.src == 42.42.42.1 && ip4.dst == 66.66.66.66`
	)
	for _, r := range testenv.LiveReleases(t) {
		t.Run(r.Name(), func(t *testing.T) {
			t.Parallel()
			sb := startNorthd(t, r)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			for _, fx := range []string{"seed-stateless", "seed-stateless-pg"} {
				t.Run(fx, func(t *testing.T) {
					snap, err := nbschema.LoadFixture("../testdata/fixtures/" + fx + ".yaml")
					if err != nil {
						t.Fatal(err)
					}
					loadAndSync(t, ctx, sb, snap)
					trace := func(l4 string, ct ...string) string {
						var args []string
						for _, c := range ct {
							args = append(args, "--ct", c)
						}
						args = append(args, "--minimal", "ls", `inport == "lsp1" && `+eth+" && "+ip+" && "+l4)
						out, err := sb.Trace(ctx, args...)
						if err != nil {
							t.Fatal(err)
						}
						// Drop the "#" line and the microflow line, keep the actions.
						var keep []string
						for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
							if strings.HasPrefix(l, "#") || strings.Contains(l, "dl_src=") {
								continue
							}
							keep = append(keep, l)
						}
						return strings.Join(keep, "\n")
					}
					if got, want := trace("tcp && tcp.dst == 80"), `output("lsp2");`; got != want {
						t.Errorf("tcp: ovn-trace %s --minimal =\n%s\nwant\n%s", r, got, want)
					}
					wantUDP := "ct_next(ct_state=new|trk) {\n    ct_next(ct_state=new|trk) {\n        output(\"lsp2\");\n    };\n};"
					if got := trace("udp && udp.dst == 80", "new", "new"); got != wantUDP {
						t.Errorf("udp: ovn-trace %s --minimal =\n%s\nwant\n%s", r, got, wantUDP)
					}
				})
			}
		})
	}
}
