package compile_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// northdAlternatives returns what northd of release r may write for snap
// when compile reports KindNorthdUndecided (nil when it does not): for
// each such problem, aclc's compile of snap with each of the problem's
// port groups in turn holding the lowest UUID of the contest — the
// contest's UUIDs rotated among its groups, which keeps the set of
// UUIDs, so their hash buckets, and changes only which group aclc's
// guess puts first (no flow names a port group's UUID). Problems are
// varied one at a time, the others at aclc's guess.
func northdAlternatives(t *testing.T, snap *nbschema.Snapshot, r *release.Release) []*lflow.Listing {
	t.Helper()
	res := compile.CompileWith(snap, compile.Options{Release: r})
	var out []*lflow.Listing
	for _, p := range res.Problems {
		if p.Kind != compile.KindNorthdUndecided {
			continue
		}
		var ids []string
		for _, name := range p.PortGroups {
			for id, pg := range snap.PortGroups {
				if pg.Name == name {
					ids = append(ids, id)
				}
			}
		}
		slices.Sort(ids)
		for k := range ids {
			alt := cloneSnapshot(snap)
			for i, id := range ids {
				pg := *snap.PortGroups[id]
				pg.UUID = ids[(i+k)%len(ids)]
				alt.PortGroups[pg.UUID] = &pg
			}
			out = append(out, compile.CompileWith(alt, compile.Options{Release: r}).Flows)
		}
	}
	return out
}

// oneOf reports whether got equals one of the listings alts.
func oneOf(got *lflow.Listing, alts []*lflow.Listing) bool {
	for _, a := range alts {
		if len(lflow.Diff(got, a)) == 0 {
			return true
		}
	}
	return false
}

// TestUndecidedFixtures pins which fixtures compile reports as
// northd-undecided, for which release: tiers-fdp1154-undecided on every
// 24.03 (FDP-1154 never fixed there) and no other fixture, nor that one
// on releases with the fix.
func TestUndecidedFixtures(t *testing.T) {
	for name, path := range fixtures(t) {
		for _, r := range release.All() {
			snap, err := nbschema.LoadFixtureWith(path, nbschema.FixtureOptions{Release: r})
			if err != nil {
				continue // r cannot express it
			}
			got := compile.Undecided(compile.CompileWith(snap, compile.Options{Release: r}).Problems)
			want := name == "tiers-fdp1154-undecided" && !r.Has(release.ACLFlagsFullScan)
			if got != want {
				t.Errorf("%s on OVN %s: northd-undecided %v, want %v", name, r, got, want)
			}
			if got && len(northdAlternatives(t, snap, r)) != 2 {
				t.Errorf("%s on OVN %s: want 2 alternatives", name, r)
			}
		}
	}
}

// TestUndecidedNorthdHistory loads tiers-fdp1154-undecided into a fresh
// real northd of each 24.03 release twice, with its two port groups
// created in opposite orders (the first with the rest of the NB, the
// other in a later transaction), and checks that northd's own flows
// differ — what aclc's northd-undecided problem says — and that each is
// one of the outcomes aclc names.
//
// Why they differ: both groups are in bucket 0 of ls_pg->nb_pgs (mask 3),
// where they lie in the order en_port_group_run inserted them, which is
// its IDL's iteration order; in a fresh IDL with two Port_Group rows
// (one bucket of four too) that is the order they arrived in. So the group
// created first is scanned first: pg_stop first stops the scan (no
// tiers), pg_tier first lets it see tier 2.
func TestUndecidedNorthdHistory(t *testing.T) {
	const name = "tiers-fdp1154-undecided"
	path := fixtures(t)[name]
	for _, r := range fdp1154Live(t) {
		if !r.Has(release.ACLTier) || r.Has(release.ACLFlagsFullScan) { // the releases with FDP-1154
			continue
		}
		t.Run(r.Name(), func(t *testing.T) {
			testenv.NeedRelease(t, r)
			snap, err := nbschema.LoadFixtureWith(path, nbschema.FixtureOptions{Release: r})
			if err != nil {
				t.Fatal(err)
			}
			alts := northdAlternatives(t, snap, r)
			if len(alts) != 2 {
				t.Fatalf("compile gives %d alternatives, want 2 (not undecided?)", len(alts))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			var got []*lflow.Listing
			for _, first := range []string{"pg_stop", "pg_tier"} {
				l := historyFlows(t, ctx, r, snap, first)
				if !oneOf(l, alts) {
					var d bytes.Buffer
					lflow.WriteDiff(&d, "aclc's first outcome", "northd", lflow.Diff(alts[0], l))
					t.Errorf("%s created first: northd wrote neither of aclc's outcomes:\n%s", first, d.String())
				}
				t.Logf("%s created first: %d flows, %d with the tier register", first, l.NumFlows(), tierFlows(l))
				got = append(got, l)
			}
			if len(lflow.Diff(got[0], got[1])) == 0 {
				t.Errorf("northd %s wrote the same flows in both histories: the NB decides after all", r)
			}
		})
	}
}

// TestDecidedNorthdHistory is TestUndecidedNorthdHistory for
// tiers-fdp1154-decided, whose sw0 has its two port groups in different
// buckets of ls_pg->nb_pgs (1 and 2), in the order opposite to their
// UUIDs': whichever is created first, northd writes aclc's flows. (Groups
// in different buckets of nb_pgs are in different buckets of the IDL's
// larger table too, so the creation order does not even change the order
// en_port_group_run inserts them in; the bucket order decides.)
func TestDecidedNorthdHistory(t *testing.T) {
	path := fixtures(t)["tiers-fdp1154-decided"]
	for _, r := range fdp1154Live(t) {
		if !r.Has(release.ACLTier) || r.Has(release.ACLFlagsFullScan) { // the releases with FDP-1154
			continue
		}
		t.Run(r.Name(), func(t *testing.T) {
			testenv.NeedRelease(t, r)
			snap, err := nbschema.LoadFixtureWith(path, nbschema.FixtureOptions{Release: r})
			if err != nil {
				t.Fatal(err)
			}
			want := compile.CompileWith(snap, compile.Options{Release: r})
			if compile.Undecided(want.Problems) {
				t.Fatal("compile says northd-undecided")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			for _, first := range []string{"pg_first", "pg_second"} {
				l := historyFlows(t, ctx, r, snap, first)
				if ch := lflow.Diff(want.Flows, l); len(ch) > 0 {
					var d bytes.Buffer
					lflow.WriteDiff(&d, "aclc", "northd", ch)
					t.Errorf("%s created first: northd differs from aclc:\n%s", first, d.String())
				}
			}
		})
	}
}

// TestGrownTableNorthdHistory checks that the order that counts is the
// bucket order of ls_pg->nb_pgs (sized by the switch's own port groups),
// not the order of northd's IDL (sized by every Port_Group row). sw0 has
// two port groups: pgA (first 32 bits 0x00000005, an allow-related ACL at
// tier 0) and pgB (0x00000002, a tier-2 drop); six more groups on sw1
// make eight Port_Group rows, so the IDL's table has mask 7 and iterates
// pgB (bucket 2) before pgA (bucket 5), which is the order
// en_port_group_run inserts them in. sw0's nb_pgs has two entries, mask
// 3: pgA is in bucket 1, pgB in bucket 2, so the scan meets pgA first and
// northd writes no tiers, whichever group is created first — as aclc
// says (decided, no tiers). Had the IDL's order decided, tiers would show.
func TestGrownTableNorthdHistory(t *testing.T) {
	var b strings.Builder
	b.WriteString("switches:\n  - name: sw0\n    ports:\n      - {name: p0}\n      - {name: p1}\n  - name: sw1\n    ports:\n")
	for i := range 6 {
		fmt.Fprintf(&b, "      - {name: q%d}\n", i)
	}
	b.WriteString(`port_groups:
  - uuid: 00000005-0000-4000-8000-000000000001
    name: pgA
    ports: [p0]
    acls:
      - {direction: from-lport, priority: 1000, match: "inport == @pgA && tcp", action: allow-related}
  - uuid: 00000002-0000-4000-8000-000000000002
    name: pgB
    ports: [p1]
    acls:
      - {direction: to-lport, priority: 1000, match: "outport == @pgB && ip4", action: drop, tier: 2}
`)
	for i := range 6 {
		fmt.Fprintf(&b, "  - {uuid: 000000%d0-0000-4000-8000-000000000000, name: pg_sw1_%d, ports: [q%d]}\n", i+1, i, i)
	}
	for _, r := range fdp1154Live(t) {
		if !r.Has(release.ACLTier) || r.Has(release.ACLFlagsFullScan) { // the releases with FDP-1154
			continue
		}
		t.Run(r.Name(), func(t *testing.T) {
			testenv.NeedRelease(t, r)
			snap, err := nbschema.ParseFixtureWith("grown.yaml", []byte(b.String()), nbschema.FixtureOptions{Release: r})
			if err != nil {
				t.Fatal(err)
			}
			want := compile.CompileWith(snap, compile.Options{Release: r})
			if compile.Undecided(want.Problems) || tierFlows(want.Flows) != 0 {
				t.Fatalf("aclc: undecided %v, %d tier flows; want decided, none", compile.Undecided(want.Problems), tierFlows(want.Flows))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			for _, first := range []string{"pgA", "pgB"} {
				l := historyFlows(t, ctx, r, snap, first)
				if ch := lflow.Diff(want.Flows, l); len(ch) > 0 {
					var d bytes.Buffer
					lflow.WriteDiff(&d, "aclc", "northd", ch)
					t.Errorf("%s created first: northd differs from aclc:\n%s", first, d.String())
				}
			}
		})
	}
}

// historyFlows starts a fresh northd of release r, writes snap without
// its port groups other than first (and their ACLs), then, in a second
// transaction, the rest, and returns northd's ACL-stage flows.
func historyFlows(t *testing.T, ctx context.Context, r *release.Release, snap *nbschema.Snapshot, first string) *lflow.Listing {
	t.Helper()
	sb := startNorthd(t, r)
	partial := cloneSnapshot(snap)
	for id, pg := range snap.PortGroups {
		if pg.Name != first {
			delete(partial.PortGroups, id)
			for _, a := range pg.ACLs {
				delete(partial.ACLs, a)
			}
		}
	}
	loadAndSync(t, ctx, sb, partial)
	nb, err := nbschema.Connect(ctx, nbschema.Options{Remotes: sb.NB})
	if err != nil {
		t.Fatal(err)
	}
	full := cloneSnapshot(snap)
	full.Global = &nbdb.NBGlobal{}
	err = nbschema.Store(ctx, nb.Client, full, nbschema.StoreOptions{Replace: true})
	nb.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	l, err := sb.ACLStageFlows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// tierFlows counts the flows that read or write the tier register.
func tierFlows(l *lflow.Listing) int {
	n := 0
	for _, dp := range l.Datapaths {
		for _, f := range dp.Flows {
			if bytes.Contains([]byte(f.Match+f.Actions), []byte("reg8[30..31]")) {
				n++
			}
		}
	}
	return n
}

// fdp1154Live returns the versions with FDP-1154 (24.03.x) whose real
// northd runs here (source-built roots: a developer machine, or a CI
// machine that has them). Where none does — CI reaches no source host —
// the history tests have nothing to run and say so; the behaviour stays
// pinned by the versions' goldens of tiers-fdp1154-* (TestGolden) and by
// TestUndecidedFixtures.
func fdp1154Live(t *testing.T) []*release.Release {
	var out []*release.Release
	for _, r := range testenv.LiveReleases(t) {
		if r.Has(release.ACLTier) && !r.Has(release.ACLFlagsFullScan) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		t.Logf("no OVN 24.03 northd here (source-built roots only): FDP-1154 is checked against the goldens of tiers-fdp1154-* of every 24.03 version instead")
	}
	return out
}
