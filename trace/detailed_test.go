package trace_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/trace"
)

// TestDetailedTiersPassSampling: on each release with tiers and sampling,
// the result names the deciding ACL with its tier (a verdict the action
// stage carries out is the eval ACL's), the pass ACLs that handed the
// packet down, and each sampling point hit with the ACL it samples for
// and the observation point of that ACL's NB Sample (sample_new).
func TestDetailedTiersPassSampling(t *testing.T) {
	const fx = "testdata/tiers-sampling.yaml"
	from := func(src, dst, srcMAC, dstMAC, srcIP, dstIP, l4 string) string {
		return between(src, dst, srcMAC, dstMAC, srcIP, dstIP, l4)
	}
	c2a := func(l4 string) string {
		return from("c", "a", "00:00:00:00:20:03", "00:00:00:00:20:01", "10.20.0.3", "10.20.0.1", l4)
	}
	b2a := func(l4 string) string {
		return from("b", "a", "00:00:00:00:20:02", "00:00:00:00:20:01", "10.20.0.2", "10.20.0.1", l4)
	}
	type want struct {
		verdict  trace.Verdict
		decided  []string // "PIPELINE ACTION tier=N": the deciding ACL per pipeline
		passed   []string // matches of the pass ACLs
		samples  []string // "OBS_POINT/COLLECTOR_SET", in order
		sampleBy []string // the match of the ACL each sample is for
	}
	for _, c := range []struct {
		name, flow string
		want       want
	}{
		{"pass then tier-2 drop", c2a("tcp && tcp.dst == 22"), want{trace.VerdictDrop,
			[]string{"ingress drop tier=2"}, []string{"ip4.src == 10.20.0.3"},
			[]string{"4001/100", "4004/100"}, []string{"ip4.src == 10.20.0.3", "tcp.dst == 22"}}},
		{"tier-1 allow, tier-1 egress allow", b2a("tcp && tcp.dst == 80"), want{trace.VerdictOutput,
			[]string{"ingress allow-related tier=1", "egress allow-related tier=1"}, nil,
			[]string{"4002/200", "4002/100", "4006/100"}, []string{"tcp.dst == 80", "tcp.dst == 80", "outport == @pg_s && tcp"}}},
		{"pass then tier-2 stateless", c2a("udp && udp.dst == 53"), want{trace.VerdictDrop,
			[]string{"ingress allow-stateless tier=2", "egress drop tier=3"}, []string{"ip4.src == 10.20.0.3"},
			[]string{"4005/200", "4004/100"}, []string{"udp.dst == 53", "outport == @pg_s && ip4"}}},
	} {
		for _, r := range []*release.Release{release.MustLookup("25.03.0"), release.MustLookup("26.03.1")} {
			t.Run(r.Series()+"/"+c.name, func(t *testing.T) {
				snap, err := nbschema.LoadFixtureWith(fx, nbschema.FixtureOptions{Release: r})
				if err != nil {
					t.Fatal(err)
				}
				newCT, _ := trace.ParseCTState("new")
				res, err := trace.New(snap, nil).Trace(c.flow, trace.Options{CT: []trace.CTState{newCT, newCT, newCT, newCT}})
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict != c.want.verdict {
					t.Errorf("verdict %s, want %s", res.Verdict, c.want.verdict)
				}
				var decided, passed, samples, sampleBy []string
				for _, d := range res.Decisions {
					if d.Flow.ACL == nil {
						decided = append(decided, d.Pipeline+" "+d.Flow.Stage)
						continue
					}
					decided = append(decided, d.Pipeline+" "+d.Flow.ACL.Action+" tier="+strconv.Itoa(d.Flow.ACL.Tier))
				}
				for _, d := range res.Passed {
					passed = append(passed, d.Flow.ACL.Match)
				}
				for _, s := range res.Samples {
					samples = append(samples, s.ObsPoint+"/"+s.CollectorSet)
					by := ""
					if s.ACL != nil {
						by = s.ACL.Match
						// the observation point is the metadata of the
						// ACL's sample_new row (new connections)
						if a := snap.ACLs[s.ACL.UUID]; a.SampleNew == nil || snap.Samples[*a.SampleNew] == nil ||
							s.ObsPoint != strconv.Itoa(snap.Samples[*a.SampleNew].Metadata) {
							t.Errorf("sample obs_point %s is not the metadata of %s's sample_new", s.ObsPoint, s.ACL)
						}
					}
					sampleBy = append(sampleBy, by)
				}
				for _, cmp := range []struct {
					what      string
					got, want []string
				}{{"decided", decided, c.want.decided}, {"passed", passed, c.want.passed},
					{"samples", samples, c.want.samples}, {"sampled for", sampleBy, c.want.sampleBy}} {
					if !slices.Equal(cmp.got, cmp.want) {
						t.Errorf("%s: %q, want %q\n%s", cmp.what, cmp.got, cmp.want, res.Summary())
					}
				}
			})
		}
	}
}

// TestDetailedActionStageVerdicts: a reject or drop the action stage
// carries out (from the verdict bits an eval flow set) is decided by that
// eval flow's ACL, with its tier, after the pass ACLs that handed the
// packet down — also in the after-LB stages, on the DNATted packet.
func TestDetailedActionStageVerdicts(t *testing.T) {
	newCT, _ := trace.ParseCTState("new")
	for _, c := range []struct {
		name, fixture, flow, lbDst string
		verdict                    trace.Verdict
		decided, passed            string
	}{
		{"reject at tier 3 after a pass", "testdata/tiers-persist.yaml",
			between("c", "a", "00:00:00:00:21:03", "00:00:00:00:21:01", "10.21.0.3", "10.21.0.1", "tcp && tcp.dst == 22"), "",
			trace.VerdictReject, "reject tier=3 tcp.dst == 22", "ip4.src == 10.21.0.3"},
		{"persist allow at tier 2 after a pass", "testdata/tiers-persist.yaml",
			between("c", "a", "00:00:00:00:21:03", "00:00:00:00:21:01", "10.21.0.3", "10.21.0.1", "tcp && tcp.dst == 8080"), "",
			trace.VerdictOutput, "allow-related tier=2 tcp.dst == 8080 || tcp.dst == 80", "ip4.src == 10.21.0.3"},
		{"after-LB drop of the DNATted packet after an after-LB pass", "testdata/tiers-after-lb.yaml",
			between("cl", "", "00:00:00:00:22:01", "00:00:00:00:22:02", "10.22.0.1", "10.22.0.100", "tcp && tcp.dst == 80"), "10.22.0.3:8080",
			trace.VerdictDrop, "drop tier=2 ip4.dst == 10.22.0.3 && tcp", "ip4.dst == 10.22.0.3"},
	} {
		for _, r := range []*release.Release{release.MustLookup("25.03.0"), release.MustLookup("26.03.1")} {
			t.Run(r.Series()+"/"+c.name, func(t *testing.T) {
				snap, err := nbschema.LoadFixtureWith(c.fixture, nbschema.FixtureOptions{Release: r})
				if err != nil {
					t.Fatal(err)
				}
				res, err := trace.New(snap, nil).Trace(c.flow, trace.Options{CT: []trace.CTState{newCT, newCT, newCT, newCT}, LBDst: c.lbDst})
				if err != nil {
					t.Fatal(err)
				}
				if res.Verdict != c.verdict {
					t.Errorf("verdict %s, want %s", res.Verdict, c.verdict)
				}
				if len(res.Decisions) == 0 || res.Decisions[0].Flow.ACL == nil {
					t.Fatalf("no ACL decided the ingress pipeline: %s", res.Summary())
				}
				a := res.Decisions[0].Flow.ACL
				if got := a.Action + " tier=" + strconv.Itoa(a.Tier) + " " + a.Match; got != c.decided {
					t.Errorf("decided by %q, want %q\n%s", got, c.decided, res.Summary())
				}
				if len(res.Passed) != 1 || res.Passed[0].Flow.ACL.Match != c.passed {
					t.Errorf("passed: %v, want the pass ACL %q\n%s", res.Passed, c.passed, res.Summary())
				}
			})
		}
	}
}
