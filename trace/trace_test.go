package trace_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/trace"
)

func TestParseCTState(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    string
		wantErr bool
	}{
		{"new", "new|trk", false},
		{"trk,new", "new|trk", false},
		{"est,rpl", "est|rpl|trk", false},
		{"inv", "inv|trk", false},
		{"rel,dnat", "rel|trk|dnat", false},
		{"", "trk", false},
		{"bogus", "", true},
		{"+est+rpl", "", true},
		{"est|rpl", "", true},
	} {
		st, err := trace.ParseCTState(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseCTState(%q) error = %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if err == nil && st.String() != tc.want {
			t.Errorf("ParseCTState(%q) = %s, want %s", tc.in, st, tc.want)
		}
	}
}

func load(t *testing.T, path string) *trace.Tracer {
	t.Helper()
	snap, err := loadFixture(path)
	if err != nil {
		t.Fatal(err)
	}
	return trace.New(snap, nil)
}

func cts(t *testing.T, ss ...string) []trace.CTState {
	var out []trace.CTState
	for _, s := range ss {
		st, err := trace.ParseCTState(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, st)
	}
	return out
}

// TestSeedTraces checks the seed's expectations (shared/seeds/003, "ACL
// allow-stateless omit conntrack", Logical_Switch and Port_Group
// variants) offline; the differential test checks them against the real
// ovn-trace. The load balancer steps are written as OVN 23.03 prints them
// (ct_lb_mark, chk_lb_hairpin implemented), not as the 2021 seed did.
func TestSeedTraces(t *testing.T) {
	const (
		eth = `eth.src == 00:00:00:00:00:01 && eth.dst == 00:00:00:00:00:02`
		ip  = `ip.ttl==64 && ip4.src == 42.42.42.1 && ip4.dst == 66.66.66.66`
		tcp = `inport == "lsp1" && ` + eth + ` && ` + ip + ` && tcp && tcp.dst == 80`
		udp = `inport == "lsp1" && ` + eth + ` && ` + ip + ` && udp && udp.dst == 80`
	)
	twoCT := "ct_next(ct_state=new|trk) {\n    ct_next(ct_state=new|trk) {\n        output(\"lsp2\");\n    };\n};\n"
	lb := "ct_lb_mark {\n    ct_lb_mark {\n        reg0[6] = 0;\n        reg0[12] = 0;\n        ct_lb_mark /* default (use --ct to customize) */ {\n            output(\"lsp2\");\n        };\n    };\n};\n"
	for _, tc := range []struct {
		fixture string
		flow    string
		ct      []string
		minimal string
		ops     []string
	}{
		{"../testdata/fixtures/seed-stateful-only.yaml", tcp, []string{"new", "new"}, twoCT, []string{"ct_next", "ct_commit", "ct_next", "ct_commit"}},
		{"../testdata/fixtures/seed-stateful-only.yaml", udp, []string{"new", "new"}, twoCT, []string{"ct_next", "ct_commit", "ct_next", "ct_commit"}},
		{"../testdata/fixtures/seed-stateless.yaml", tcp, nil, "output(\"lsp2\");\n", nil},
		{"../testdata/fixtures/seed-stateless.yaml", udp, []string{"new", "new"}, twoCT, []string{"ct_next", "ct_commit", "ct_next", "ct_commit"}},
		{"testdata/seed-stateful-pg.yaml", tcp, []string{"new", "new"}, twoCT, []string{"ct_next", "ct_commit", "ct_next", "ct_commit"}},
		{"../testdata/fixtures/seed-stateless-pg.yaml", tcp, nil, "output(\"lsp2\");\n", nil},
		{"../testdata/fixtures/seed-stateless-pg.yaml", udp, []string{"new", "new"}, twoCT, []string{"ct_next", "ct_commit", "ct_next", "ct_commit"}},
		{"testdata/seed-lb-noacl.yaml", tcp, []string{"new", "new"}, lb, []string{"ct_lb_mark", "ct_lb_mark", "ct_lb_mark"}},
		// 23.03: allow-stateless traffic to the VIP is not load balanced.
		{"../testdata/fixtures/lb-vip-stateless.yaml", tcp, []string{"new", "new"}, "output(\"lsp2\");\n", nil},
		{"../testdata/fixtures/lb-vip-stateless.yaml", udp, []string{"new", "new"}, lb, []string{"ct_lb_mark", "ct_lb_mark", "ct_lb_mark"}},
		{"testdata/seed-lb-stateless-pg.yaml", tcp, []string{"new", "new"}, "output(\"lsp2\");\n", nil},
	} {
		name := tc.fixture[strings.LastIndexByte(tc.fixture, '/')+1:] + "/" + tc.flow[strings.LastIndex(tc.flow, "&& ")+3:]
		t.Run(name, func(t *testing.T) {
			res, err := load(t, tc.fixture).Trace(tc.flow, trace.Options{CT: cts(t, tc.ct...)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.minimal, res.Minimal()); diff != "" {
				t.Errorf("minimal (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.ops, res.CTOps, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("ct ops (-want +got):\n%s", diff)
			}
			if res.Verdict != trace.VerdictOutput {
				t.Errorf("verdict %s, want output", res.Verdict)
			}
		})
	}
}

func TestVerdictsAndDecisions(t *testing.T) {
	tr := load(t, "testdata/mixed.yaml")
	flow := func(l4 string) string {
		return `inport == "p1" && eth.src == 00:00:00:00:00:01 && eth.dst == 00:00:00:00:00:02 && ip4.src == 10.0.0.1 && ip4.dst == 10.0.0.2 && ` + l4
	}
	for _, tc := range []struct {
		name    string
		flow    string
		ct      []string
		verdict trace.Verdict
		summary string
	}{
		{"stateless", flow("tcp && tcp.dst == 80"), nil, trace.VerdictOutput,
			`no conntrack => output("p2"); decided by ingress: ACL switch "sw0" from-lport priority 1000 match="ip4 && (tcp || udp)" action=allow-stateless`},
		{"reject-over-stateless", flow("tcp && tcp.dst == 22"), nil, trace.VerdictReject,
			`no conntrack => reject; decided by ingress: ACL switch "sw0" from-lport priority 2000 match="ip4 && tcp && tcp.dst == 22" action=reject`},
		{"drop-over-stateless", flow("udp && udp.dst == 53"), nil, trace.VerdictDrop,
			`no conntrack => drop; decided by ingress: ACL switch "sw0" from-lport priority 1900 match="ip4 && udp && udp.dst == 53" action=drop`},
		{"stateful-new", flow("icmp4"), []string{"new", "new"}, trace.VerdictOutput,
			`ct_next ct_commit ct_next ct_commit => output("p2"); decided by ingress: ACL switch "sw0" from-lport priority 900 match="ip4 && icmp4" action=allow-related`},
		{"invalid", flow("icmp4"), []string{"inv"}, trace.VerdictDrop,
			`ct_next => drop; decided by ingress: ls_in_acl priority 65532`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := tr.Trace(tc.flow, trace.Options{CT: cts(t, tc.ct...)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s", res.Verdict, tc.verdict)
			}
			if got := res.Summary(); !strings.HasPrefix(got, tc.summary) {
				t.Errorf("summary\n got %s\nwant prefix %s", got, tc.summary)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	tr := load(t, "testdata/mixed.yaml")
	const ok = `inport == "p1" && eth.dst == 00:00:00:00:00:02 && ip4 && tcp`
	for _, tc := range []struct {
		name, datapath, flow, lbDst, want string
	}{
		{"unknown datapath", "nope", ok, "", `unknown datapath "nope"`},
		{"syntax", "", `inport == "p1" && ip4 &&`, "", "syntax error at offset 24"},
		{"no inport", "", `ip4 && tcp`, "", "does not match on inport"},
		{"unknown port", "", `inport == "zz" && ip4`, "", `unknown port "zz"`},
		{"ambiguous", "", `inport == "p1" && eth.dst == 00:00:00:00:00:02 && tcp.dst == 80`, "", "ambiguous"},
		{"no eth.dst", "", `inport == "p1" && ip4 && tcp`, "", "eth.dst is not set"},
		{"bad lb-dst", "", ok, "x:y:z", "--lb-dst"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tr.Trace(tc.flow, trace.Options{Datapath: tc.datapath, LBDst: tc.lbDst})
			var ie *trace.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("error %v, want an InputError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestRecirculationBound checks that a trace stops, and says so, once
// the recirculation bound is hit.
func TestRecirculationBound(t *testing.T) {
	tr := load(t, "testdata/stateless-drop-reject.yaml")
	flow := `inport == "b" && eth.src == 00:00:00:00:0a:02 && eth.dst == 00:00:00:00:0a:01 && ip4.src == 10.1.0.2 && ip4.dst == 10.1.0.1 && tcp && tcp.dst == 8080`
	res, err := tr.Trace(flow, trace.Options{MaxRecirculations: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || !strings.Contains(res.Minimal(), "trace stopped: more than 2 recirculations") {
		t.Errorf("truncated=%v, minimal:\n%s", res.Truncated, res.Minimal())
	}
	res, err = tr.Trace(flow, trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Truncated || res.Verdict != trace.VerdictReject {
		t.Errorf("truncated=%v verdict=%s, want a complete reject", res.Truncated, res.Verdict)
	}
}

// TestLocalnetARPNotTraced: an ARP request from a localnet port meets
// responder rules that differ from version to version (northd skipped the
// responder for localnet-inport packets before 24.03.9/25.09.4/26.03.2,
// 26.03.0-26.03.1 check such requests in port security, and since those
// versions the responder answers them only for resident ports), which aclc
// does not generate: the trace ends "not traced" instead of answering — on
// the versions with the resident-port rule only for the addresses the
// responder answers (the others pass the stage, as in ovn-trace).
func TestLocalnetARPNotTraced(t *testing.T) {
	const ipToUnknown = `inport == "p1" && eth.src == 00:00:5e:00:00:01 && eth.dst == 00:00:5e:00:ff:ff && ip4.src == 10.0.0.1 && ip4.dst == 10.0.0.9 && ip.ttl == 64 && tcp && tcp.dst == 80`
	const arp = `inport == "ln-acl" && eth.src == 00:00:00:00:00:09 && eth.dst == ff:ff:ff:ff:ff:ff && arp.op == 1 && arp.sha == 00:00:00:00:00:09 && arp.spa == 10.0.0.9 && arp.tpa == 10.0.0.1`
	for _, r := range release.Distinct() {
		snap, err := nbschema.LoadFixtureWith("../testdata/fixtures/localnet.yaml", nbschema.FixtureOptions{Release: r})
		if err != nil {
			t.Fatal(err)
		}
		res, err := trace.New(snap, compile.Compile(snap).Flows).Trace(arp, trace.Options{})
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		if r.Has(release.LocalnetARPResponder) {
			// p1 has no address the responder answers: the request
			// is flooded
			if res.Verdict != trace.VerdictOutput {
				t.Errorf("%s: ARP for an address no port has: verdict %s (%s), want output", r, res.Verdict, res.NotTraced)
			}
			for _, p := range snap.Ports {
				if p.Name == "p1" {
					p.Addresses = []string{"00:00:5e:00:00:01 10.0.0.1"}
				}
			}
			if res, err = trace.New(snap, compile.Compile(snap).Flows).Trace(arp, trace.Options{}); err != nil {
				t.Fatalf("%s: %v", r, err)
			}
		}
		if res.Verdict != trace.VerdictNotTraced || !strings.Contains(res.NotTraced, "localnet port ln-acl") {
			t.Errorf("%s: verdict %s (%s), want not traced naming the localnet port", r, res.Verdict, res.NotTraced)
		}
		// The stage's other packets pass it: IP from a VIF to an unknown
		// MAC is flooded to the localnet port, not dropped in
		// ls_in_arp_rsp for want of its priority-0 flow.
		res, err = trace.New(snap, compile.Compile(snap).Flows).Trace(ipToUnknown, trace.Options{})
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		if res.Verdict != trace.VerdictOutput {
			t.Errorf("%s: IP from p1 to an unknown MAC: verdict %s (%s), want output to ln-acl", r, res.Verdict, res.NotTraced)
		}
	}
}
