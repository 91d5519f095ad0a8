package trace_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/trace"
)

func routerTracer(t *testing.T, fixture string) *trace.Tracer {
	t.Helper()
	snap, err := loadFixture("../testdata/routers/" + fixture)
	if err != nil {
		t.Fatal(err)
	}
	return trace.New(snap, nil)
}

// TestRouterHops: a packet across two routers records every datapath it
// entered, the deciding ACL of each switch pipeline, and JSON carries
// both.
func TestRouterHops(t *testing.T) {
	tr := routerTracer(t, "two-routers-chain.yaml")
	res, err := tr.Trace(routed("l1", "00:00:00:00:1e:01", "00:00:00:01:00:01", "192.168.1.10", "192.168.2.10", "udp && udp.dst == 53", 64), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != trace.VerdictDrop {
		t.Fatalf("verdict %s, want drop (to-lport drop of udp on sw-right)", res.Verdict)
	}
	var hops []string
	for _, h := range res.Hops {
		hops = append(hops, h.Type+" "+h.Datapath+" "+h.Inport)
	}
	want := []string{"router lr-left lrp-left", "switch join join-left", "router lr-right lrp-join-right", "switch sw-right right-lr"}
	if diff := cmp.Diff(want, hops); diff != "" {
		t.Errorf("hops (-want +got):\n%s", diff)
	}
	last := res.Decisions[len(res.Decisions)-1]
	if last.Datapath != "sw-right" || last.Pipeline != "egress" || last.Flow.ACL == nil || last.Flow.ACL.Action != "drop" {
		t.Errorf("last decision %+v, want sw-right's to-lport drop", last)
	}
	if s := res.Summary(); !strings.Contains(s, `then sw-right egress: ACL switch "sw-right" to-lport priority 1001 match="ip4 && udp" action=drop`) {
		t.Errorf("summary does not name sw-right's drop: %s", s)
	}
	var b strings.Builder
	if err := res.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var j struct {
		Hops []struct{ Datapath, Type, Inport string }
	}
	if err := json.Unmarshal([]byte(b.String()), &j); err != nil || len(j.Hops) != 4 || j.Hops[2].Datapath != "lr-right" {
		t.Errorf("JSON hops %+v (%v)", j.Hops, err)
	}
}

// TestRouterDecision: a packet a router drops (policy, discard route) is
// decided by that router flow, which names its NB row.
func TestRouterDecision(t *testing.T) {
	for _, tc := range []struct{ fixture, flow, want string }{
		{"policies.yaml", routed("pb", "00:00:00:00:41:02", "00:00:00:00:4f:01", "10.40.1.2", "10.40.2.1", "tcp && tcp.dst == 80", 64),
			`lr-pol ingress: lr_in_policy priority 100 match=(ip4.src == 10.40.1.2) (router policy priority 100 match="ip4.src == 10.40.1.2" action=drop`},
		{"static-routes.yaml", routed("vm1", "00:00:00:00:31:01", "00:00:00:00:3f:01", "10.30.1.1", "198.51.100.7", "tcp && tcp.dst == 443", 64),
			`lr-static ingress: lr_in_ip_routing priority 73 match=(reg7 == 0 && ip4.dst == 198.51.100.0/24) (static route 198.51.100.0/24 nexthop discard`},
		{"two-switches.yaml", routed("p1", "00:00:00:00:00:01", "00:00:00:00:ff:01", "10.0.0.1", "10.99.0.1", "tcp && tcp.dst == 80", 64),
			`lr0 ingress: lr_in_ip_routing priority 0 match=(1)`},
	} {
		res, err := routerTracer(t, tc.fixture).Trace(tc.flow, trace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != trace.VerdictDrop || !strings.Contains(res.Summary(), tc.want) {
			t.Errorf("%s: %s\nwant drop decided by %s", tc.fixture, res.Summary(), tc.want)
		}
	}
}

// TestRouterNotTraced: NAT (here on a router with a gateway port) ends the trace with the
// not-traced verdict, whatever the output format.
func TestRouterNotTraced(t *testing.T) {
	tr := routerTracer(t, "nat-gateway.yaml")
	res, err := tr.Trace(routed("g1", "00:00:00:00:83:01", "00:00:00:00:8f:11", "10.83.1.1", "172.31.1.10", "tcp && tcp.dst == 80", 64), trace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "lr-gw NAT (lr_in_dnat)"
	if res.Verdict != trace.VerdictNotTraced || res.NotTraced != want || len(res.Outputs) != 0 {
		t.Errorf("verdict %s %q outputs %v, want not traced: %s", res.Verdict, res.NotTraced, res.Outputs, want)
	}
	if !strings.Contains(res.Minimal(), "*** not traced: "+want) || !strings.Contains(res.Summary(), "=> not traced: "+want) {
		t.Errorf("minimal/summary do not say not traced:\n%s\n%s", res.Minimal(), res.Summary())
	}
}

// TestTruncatedNotTraced: a trace cut short by a bound claims no verdict.
func TestTruncatedNotTraced(t *testing.T) {
	tr := routerTracer(t, "two-routers-chain.yaml")
	res, err := tr.Trace(routed("l1", "00:00:00:00:1e:01", "00:00:00:01:00:01", "192.168.1.10", "192.168.2.10", "tcp && tcp.dst == 80", 64),
		trace.Options{MaxRecirculations: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.Verdict != trace.VerdictNotTraced || len(res.Outputs) != 0 {
		t.Errorf("truncated %v verdict %s outputs %v, want a truncated trace with no verdict", res.Truncated, res.Verdict, res.Outputs)
	}
}

// loadFixture reads a fixture for OVN 23.03.1, the release trace follows
// (a fixture without an ovn: key is otherwise the newest LTS's).
func loadFixture(path string) (*nbschema.Snapshot, error) {
	return nbschema.LoadFixtureWith(path, nbschema.FixtureOptions{Release: release.MustLookup("23.03.1")})
}
