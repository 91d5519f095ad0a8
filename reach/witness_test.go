package reach

import (
	"strings"
	"testing"

	"github.com/aclc/aclc/nbschema"
)

// TestWitnessL2 checks the witnesses of testdata/witness-l2.yaml: every
// one is in its part and names no outport; each carries a's MAC and
// addresses and the to port's, as far as the part allows: b's MAC (or,
// for the part whose ACL pins eth.dst elsewhere, that MAC, and the part
// is undelivered), an unknown MAC for u (which takes them: the pinned
// part is delivered too), broadcast for n (which has no MAC: the parts
// that exclude multicast, conntrack's, are undelivered). The from-lport
// ACL on outport decides nothing: outport is not set before the L2
// lookup. TestReplayWitnesses replays them with ovn-trace.
func TestWitnessL2(t *testing.T) {
	snap, err := nbschema.LoadFixture("testdata/witness-l2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(snap, nil)
	if err != nil {
		t.Fatal(err)
	}
	aclOf := map[string]string{}
	for id, a := range snap.ACLs {
		aclOf[a.Match] = id
	}
	outportACL, pinACL := aclOf[`outport == "b"`], aclOf["eth.dst == 00:00:00:00:23:99 && udp"]
	for _, tc := range []struct {
		to, dst string // to's eth.dst where the part allows it
		ip4dst  string
		// undelivered: which parts the L2 lookup sends elsewhere
		undelivered func(*Part) bool
	}{
		{"b", "00:00:00:00:23:02", "10.23.0.2", func(p *Part) bool { return p.Ingress == pinACL }},
		{"u", "0a:00:00:00:00:01", "", func(*Part) bool { return false }},
		{"n", "ff:ff:ff:ff:ff:ff", "", func(p *Part) bool { return p.Conntrack || p.Ingress == pinACL }},
	} {
		r, err := e.Reach("a", tc.to, Options{})
		if err != nil {
			t.Fatal(err)
		}
		withDst := 0
		for _, p := range r.Parts {
			w := p.Witness
			if got := partFor(t, e, r, w); got != p {
				t.Errorf("a -> %s: witness %s is in part %s, not its own %s", tc.to, w, got, p)
			}
			if strings.Contains(w, "outport") {
				t.Errorf("a -> %s: witness %s names an outport", tc.to, w)
			}
			if p.Ingress == outportACL {
				t.Errorf("a -> %s: the ACL on outport decides part %s", tc.to, p)
			}
			if !strings.Contains(w, "eth.src == 00:00:00:00:23:01") {
				t.Errorf("a -> %s: witness %s is not from a's MAC", tc.to, w)
			}
			if strings.Contains(w, "eth.type == 0x800 ") && !strings.Contains(w, "ip4.src == 10.23.0.1") ||
				strings.Contains(w, "eth.type == 0x86dd ") && !strings.Contains(w, "ip6.src == fd23::1") {
				t.Errorf("a -> %s: witness %s is not from a's address", tc.to, w)
			}
			if tc.ip4dst != "" && strings.Contains(w, "eth.type == 0x800 ") && !strings.Contains(w, "ip4.dst == "+tc.ip4dst) {
				t.Errorf("a -> %s: witness %s is not to %s's address", tc.to, w, tc.to)
			}
			if strings.Contains(w, "eth.dst == "+tc.dst) {
				withDst++
			}
			switch want := tc.undelivered(p); {
			case want && p.Undelivered == "":
				t.Errorf("a -> %s: part %s is delivered, want undelivered", tc.to, p)
			case !want && p.Undelivered != "":
				t.Errorf("a -> %s: part %s is undelivered: %s", tc.to, p, p.Undelivered)
			case p.Ingress == pinACL && !strings.Contains(w, "eth.dst == 00:00:00:00:23:99"):
				t.Errorf("a -> %s: witness %s of the pinned part", tc.to, w)
			}
		}
		if withDst < len(r.Parts)/2 {
			t.Errorf("a -> %s: only %d of %d witnesses have eth.dst %s", tc.to, withDst, len(r.Parts), tc.dst)
		}
	}
}
