package reach

import (
	"errors"
	"testing"

	"github.com/aclc/aclc/nbschema"
)

func engine(t *testing.T, fixture string) *Engine {
	t.Helper()
	return engineAt(t, "../testdata/fixtures/"+fixture)
}

// engineAt is the engine of the fixture at path.
func engineAt(t *testing.T, path string) *Engine {
	t.Helper()
	snap, err := nbschema.LoadFixture(path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// partFor returns the part holding the packet mf of r.
func partFor(t *testing.T, e *Engine, r *Result, mf string) *Part {
	t.Helper()
	p := e.partOf(t, r, mf)
	if p == nil {
		t.Fatalf("%s: in no part", mf)
	}
	return p
}

// TestSeedStateless checks the seed's facts (README, docs/stateless-acls.md):
// with allow-stateless tcp in both directions, tcp from lsp1 to lsp2 is
// allowed without conntrack, udp is allowed through conntrack and
// committed (allow-related), and other IP traffic is dropped by an ACL.
func TestSeedStateless(t *testing.T) {
	e := engine(t, "seed-stateless.yaml")
	r, err := e.Reach("lsp1", "lsp2", Options{})
	if err != nil {
		t.Fatal(err)
	}
	const pkt = `inport == "lsp1" && eth.src == 00:00:00:00:00:01 && eth.dst == 00:00:00:00:00:02 && ip4.src == 42.42.42.1 && ip4.dst == 66.66.66.66 && ip.ttl == 64 && `
	for _, tc := range []struct {
		l4      string
		verdict Verdict
		ct      bool
		commit  bool
	}{
		{"tcp && tcp.dst == 80", Allow, false, false},
		{"udp && udp.dst == 80", Allow, true, true},
		{"icmp4 && icmp4.type == 8", Drop, true, false},
	} {
		p := partFor(t, e, r, pkt+tc.l4)
		if p.Verdict != tc.verdict || p.Conntrack != tc.ct || p.Committed != tc.commit {
			t.Errorf("%s: %s, want %s conntrack=%v committed=%v", tc.l4, p, tc.verdict, tc.ct, tc.commit)
		}
		if p.Ingress == Default || p.Ingress == "" {
			t.Errorf("%s: no deciding ACL: %s", tc.l4, p)
		}
	}
}

func TestInputErrors(t *testing.T) {
	e := engine(t, "pg-multi-switch.yaml")
	for _, pair := range [][2]string{{"a1", "nope"}, {"nope", "a1"}, {"a1", "a1"}, {"a1", "b1"}} {
		_, err := e.Reach(pair[0], pair[1], Options{})
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("%v: error %v, want an InputError", pair, err)
		}
	}
}

func TestParseAction(t *testing.T) {
	for _, tc := range []struct {
		text string
		kind actKind
	}{
		{"next", aNext}, {"next(pipeline=egress, table=3)", aNext}, {"next(5)", aNext},
		{"drop", aDrop}, {"reg0[7] = 1", aLoad}, {"reg0[1] = ct_label.nf", aLoad},
		{"xxreg1 = fd00::1", aLoad}, {"ct_next", aCTNext}, {"ct_lb_mark", aCTLB},
		{"ct_lb_mark(backends=10.0.0.1)", aUnknown}, {"ct_commit { ct_mark.blocked = 0; }", aCTCommit},
		{"ct_commit_nat", aCTCommitNAT}, {"ct_clear", aCTClear}, {`log(name="a", verdict=allow)`, aNoop},
		{"reject { outport <-> inport; next(pipeline=egress,table=7); }", aReject},
		{"outport <-> inport", aUnknown}, {"reg0[6] = chk_lb_hairpin()", aUnknown}, {"clone { igmp; }", aUnknown},
		{"reg0 == 1", aUnknown},
	} {
		if a := parseAction(tc.text); a.kind != tc.kind {
			t.Errorf("%q: kind %d, want %d", tc.text, a.kind, tc.kind)
		}
	}
	acts, pre, err := parseActions("reg0[1] = 1; /* drop */ ct_next;")
	if err != nil || len(acts) != 2 || len(pre) != 1 || pre[0] != "ip" {
		t.Errorf("parseActions: %v %v %v", acts, pre, err)
	}
	if _, _, err := parseActions("reject { next;"); err == nil {
		t.Error("unbalanced braces parse")
	}
}
