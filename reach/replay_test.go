package reach

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/trace"
)

// TestReplayWitnesses is the proof of the witnesses: on every release
// aclc verifies live, every bundled fixture (and this package's
// testdata/*.yaml: the L2 cases of witness-l2.yaml, docs/reach.md's
// worked examples docFixtures) the release can express whose
// ACLs use a tier, pass, a stateless or stateful verb, a port group or
// an address set is loaded into that release's NB (its northd writing
// the SB), reach runs on the live NB for every ordered pair of ports, and
// every exact part's witness is replayed with the release's own
// ovn-trace, given only the microflow and one --ct new,trk per
// recirculation (the JSON witness's ct list): ovn-trace's outcome for
// the to port (output to it, dropped, rejected) must be the part's
// verdict. A part the L2 lookup sends elsewhere (Part.Undelivered) is
// replayed too: an ingress verdict must be ovn-trace's, and ovn-trace
// must not output it to to. At least 1,000 delivered witnesses over the
// releases, every feature among them.
func TestReplayWitnesses(t *testing.T) {
	files, err := filepath.Glob("../testdata/fixtures/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	own, _ := filepath.Glob("testdata/*.yaml") // the L2 cases, the docs' examples
	files = append(files, own...)
	total, selected := 0, true
	features := map[string]int{}
	for _, r := range testenv.LiveReleases(t) {
		ran := false
		t.Run(r.Name(), func(t *testing.T) {
			ran = true
			testenv.NeedRelease(t, r)
			sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{Release: r})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(sb.Stop)
			start := time.Now()
			st := replayRelease(t, sb, r, files)
			selected = selected && st.selected
			total += st.delivered
			for f, n := range st.features {
				features[f] += n
			}
			t.Logf("OVN %s: %d witnesses replayed with ovn-trace over %d fixtures (%d pairs): %d delivered to their to port, %d undelivered (ingress verdict checked), verdicts %v; %d fixtures without these ACLs, %d the release cannot express; %v",
				r, st.delivered+st.undelivered, st.fixtures, st.pairs, st.delivered, st.undelivered, st.verdicts, st.plain, st.lacking, time.Since(start).Round(time.Millisecond))
		})
		selected = selected && ran
	}
	t.Logf("%d delivered witnesses replayed over the live releases; by the features of their fixtures: %v", total, features)
	if t.Failed() || !selected || testing.Short() {
		return // a -run selection or -short: the totals are for the whole set
	}
	if total < 1000 {
		t.Errorf("only %d witnesses replayed, want ≥ 1,000", total)
	}
	for _, f := range fixtureFeatures {
		if features[f.name] == 0 {
			t.Errorf("no replayed witness comes from a fixture with %s", f.name)
		}
	}
}

// fixtureFeatures are the ACL features a fixture must use for the replay.
var fixtureFeatures = []struct {
	name string
	has  func(*nbschema.Snapshot, *nbdb.ACL) bool
}{
	{"tiers", func(_ *nbschema.Snapshot, a *nbdb.ACL) bool { return a.Tier > 0 }},
	{"pass", func(_ *nbschema.Snapshot, a *nbdb.ACL) bool { return a.Action == nbdb.ACLActionPass }},
	{"allow-stateless", func(_ *nbschema.Snapshot, a *nbdb.ACL) bool { return a.Action == nbdb.ACLActionAllowStateless }},
	{"allow-related", func(_ *nbschema.Snapshot, a *nbdb.ACL) bool { return a.Action == nbdb.ACLActionAllowRelated }},
	{"port groups", func(s *nbschema.Snapshot, a *nbdb.ACL) bool {
		return strings.Contains(a.Match, "@") || onPortGroup(s, a)
	}},
	{"address sets", func(_ *nbschema.Snapshot, a *nbdb.ACL) bool { return strings.Contains(a.Match, "$") }},
}

// onPortGroup reports whether ACL a belongs to a port group.
func onPortGroup(s *nbschema.Snapshot, a *nbdb.ACL) bool {
	for _, pg := range s.PortGroups {
		for _, id := range pg.ACLs {
			if id == a.UUID {
				return true
			}
		}
	}
	return false
}

// featuresOf returns the fixtureFeatures snap's ACLs use.
func featuresOf(snap *nbschema.Snapshot) []string {
	var out []string
	for _, f := range fixtureFeatures {
		for _, a := range snap.ACLs {
			if f.has(snap, a) {
				out = append(out, f.name)
				break
			}
		}
	}
	return out
}

type replayStats struct {
	selected                                                bool // every fixture ran (no -run selection)
	fixtures, pairs, delivered, undelivered, plain, lacking int
	verdicts                                                map[string]int
	features                                                map[string]int
}

// replayRelease replays the witnesses of files on release r's sandbox.
func replayRelease(t *testing.T, sb *ovnsandbox.Sandbox, r *release.Release, files []string) replayStats {
	st := replayStats{selected: true, verdicts: map[string]int{}, features: map[string]int{}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, fx := range files {
		snap, err := nbschema.LoadFixtureWith(fx, nbschema.FixtureOptions{Release: r})
		if err != nil {
			if loadsOnAnother(fx, r) {
				st.lacking++
				continue
			}
			t.Fatalf("%s: a bundled fixture does not load: %v", fx, err)
		}
		feats := featuresOf(snap)
		if len(feats) == 0 {
			st.plain++
			continue
		}
		ran := false
		t.Run(strings.TrimSuffix(filepath.Base(fx), ".yaml"), func(t *testing.T) {
			ran = true
			if err := sb.Load(ctx, snap); err != nil {
				t.Fatal(err)
			}
			// a full recompute, as the trace package's live tests do
			if _, err := sb.Run(ctx, "ovn-appctl", "-t", filepath.Join(sb.Dir, "northd.ctl"), "inc-engine/recompute"); err != nil {
				t.Fatal(err)
			}
			if err := sb.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			live, err := nbschema.LoadLive(ctx, nbschema.Options{Remotes: sb.NB})
			if err != nil {
				t.Fatal(err)
			}
			if live.Release != r {
				t.Fatalf("live NB detected as OVN %v, want %s", live.Release, r)
			}
			e, err := New(live, nil)
			if err != nil {
				t.Fatal(err)
			}
			st.fixtures++
			var jobs []replayJob
			ports := e.Ports()
			for _, sw := range mapsKeys(ports) {
				for _, pr := range replayPairs(ports[sw]) {
					from, to := pr[0], pr[1]
					res, err := e.Reach(from, to, Options{})
					if ne := (*NotExactError)(nil); errors.As(err, &ne) {
						continue
					}
					if err != nil {
						t.Fatalf("%s -> %s: %v", from, to, err)
					}
					st.pairs++
					for _, p := range res.Parts {
						if p.Verdict != NotExact {
							jobs = append(jobs, replayJob{from: from, to: to, toName: toName(live, to), part: p})
						}
					}
				}
			}
			replayAll(ctx, sb, jobs)
			for _, j := range jobs {
				if j.err != nil {
					t.Fatalf("%s -> %s: %v", j.from, j.to, j.err)
				}
				if why := j.mismatch(); why != "" {
					t.Errorf("%s -> %s: witness %s (--ct ×%d): %s; the part: %s\novn-trace --summary:\n%s", j.from, j.to, j.part.Witness, j.part.Recirculations, why, j.part, j.summary)
					continue
				}
				if j.part.Undelivered != "" {
					st.undelivered++
					continue
				}
				st.delivered++
				st.verdicts[string(j.part.Verdict)]++
				for _, f := range feats {
					st.features[f]++
				}
			}
		})
		st.selected = st.selected && ran
	}
	return st
}

// replayPairs returns the ordered pairs of a switch's ports (in name
// order) whose witnesses are replayed: with ACLC_REACH_REPLAY=full every
// pair; else each port with the first, both ways, so that every port
// sends and receives (2(n-1) pairs of n(n-1): the test stays within a
// minute a release); in -short mode the first port's to the others.
func replayPairs(ports []string) [][2]string {
	var out [][2]string
	for i, from := range ports {
		for j, to := range ports {
			switch {
			case i == j:
			case os.Getenv("ACLC_REACH_REPLAY") == "full",
				i == 0, j == 0 && !testing.Short():
				out = append(out, [2]string{from, to})
			}
		}
	}
	return out
}

// replayJob is one witness to replay and, once replayed, ovn-trace's
// outcome for it.
type replayJob struct {
	from, to string
	toName   string // the to port's name in ovn-trace's output
	part     *Part
	summary  string
	outcome  string
	err      error
}

// replayAll runs ovn-trace on every job, a few at a time (each run is
// mostly waiting for the SB).
func replayAll(ctx context.Context, sb *ovnsandbox.Sandbox, jobs []replayJob) {
	const workers = 4
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := &jobs[i]
				args := []string{"--summary"}
				for range j.part.Recirculations {
					args = append(args, "--ct", "new,trk")
				}
				j.summary, j.err = sb.Trace(ctx, append(args, j.part.Witness)...)
				if j.err == nil {
					j.outcome = outcomeFor(j.summary, j.toName)
				}
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
}

// mismatch says how ovn-trace's outcome contradicts the part ("" when it
// does not).
func (j *replayJob) mismatch() string {
	p := j.part
	if p.Undelivered != "" {
		if j.outcome == outcomeAllow {
			return "ovn-trace outputs the packet to " + j.to + ", yet the part says the L2 lookup sends none there"
		}
		if p.Egress == "" && j.outcome != string(p.Verdict) {
			return fmt.Sprintf("ovn-trace: %s in ingress, the part: %s", j.outcome, p.Verdict)
		}
		return ""
	}
	if j.outcome != string(p.Verdict) {
		return fmt.Sprintf("ovn-trace: %s, the part: %s", j.outcome, p.Verdict)
	}
	return ""
}

// toName is the name ovn-trace prints for port name of snap.
func toName(snap *nbschema.Snapshot, name string) string {
	for _, p := range snap.Ports {
		if p.Name == name {
			return trace.FriendlyPort(p)
		}
	}
	return name
}

// loadsOnAnother reports whether fixture fx loads on a verified release
// other than r: then its failure to load on r is r lacking what it uses.
func loadsOnAnother(fx string, r *release.Release) bool {
	for _, o := range release.All() {
		if o == r {
			continue
		}
		if _, err := nbschema.LoadFixtureWith(fx, nbschema.FixtureOptions{Release: o}); err == nil {
			return true
		}
	}
	return false
}
