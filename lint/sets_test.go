package lint

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

func mustSet(t *testing.T, m string, r expr.Resolver) *set {
	t.Helper()
	e, err := testDialect.Parse(m, r)
	if err != nil {
		t.Fatalf("parse %q: %v", m, err)
	}
	cv := &converter{d: testDialect, r: r, as: newASCache()}
	return cv.toSet(e.Root)
}

// contains reports whether b ⊆ a is proven.
func contains(a, b *set) bool {
	l := &linter{}
	in := &inst{a: &aclInfo{acl: &nbdb.ACL{}}, e: &expr.Expr{}, set: a}
	_, ok := l.covered(nil, b.over, math.MinInt, []*layer{l.newLayer(nil, []*inst{in})}, false)
	return ok
}

// TestSetReasoning pins containment and overlap on typical ACL matches.
func TestSetReasoning(t *testing.T) {
	r := expr.MapResolver{
		AddressSets: map[string][]string{"web": {"10.0.0.1", "10.0.0.2"}, "lan": {"10.0.0.0/8"}, "none": nil},
		PortGroups:  map[string][]string{"pg": {"p1", "p2"}},
	}
	tests := []struct {
		a, b       string
		aContainsB bool
		overlap    tri
	}{
		{"ip", "tcp", true, yes},
		{"tcp", "ip", false, yes},
		{"tcp", "udp", false, no},
		{"ip4 && tcp", "tcp.dst == 80", false, yes}, // tcp.dst may be IPv6
		{"ip4 && tcp", "ip4 && tcp.dst == 80", true, yes},
		{"ip4.src == $lan", "ip4.src == $web", true, yes},
		{"ip4.src == $web", "ip4.src == $lan", false, yes},
		{"ip4.src == $none", "ip4", false, no},
		{"inport == @pg", `inport == "p1" && ip`, true, yes},
		{`inport == "p3"`, "inport == @pg", false, no},
		{"tcp.dst >= 1000 && tcp.dst <= 2000", "1500 <= tcp.dst <= 1600", true, yes},
		{"1500 <= tcp.dst <= 1600", "tcp.dst >= 1000 && tcp.dst <= 2000", false, yes},
		{"tcp.dst < 1000", "tcp.dst > 999", false, no},
		{"tcp.dst != 80", "tcp && tcp.dst == 81", true, yes},
		{"tcp.dst != 80", "tcp.dst == 80", false, no},
		{"!(tcp.dst == 80)", "udp", false, no},                       // prerequisites are never negated
		{"ip4.src != 10.0.0.1", "ip4.src == 10.0.0.2", false, maybe}, // 32-bit != is approximated
		{"ct.est && !ct.rel", "ct.est && !ct.rel && ct.rpl", true, yes},
		{"1", "tcp && udp", true, no},
		// covered only by the union of cubes
		{"tcp.dst < 1024 || tcp.dst >= 1024", "tcp", true, yes},
		{"tcp.dst < 1024 || tcp.dst > 1024", "tcp", false, yes},
		{`inport == "p1" || inport == "p2"`, "inport == @pg && ip4", true, yes},
		{`(inport == "p1" && ip4) || ip6`, "inport == @pg && ip", false, yes},
	}
	for _, tc := range tests {
		a, b := mustSet(t, tc.a, r), mustSet(t, tc.b, r)
		if got := contains(a, b); got != tc.aContainsB {
			t.Errorf("%q ⊇ %q: got %v, want %v", tc.a, tc.b, got, tc.aContainsB)
		}
		if got := intersects(a, b); got != tc.overlap {
			t.Errorf("%q ∩ %q: got %v, want %v", tc.a, tc.b, got, tc.overlap)
		}
	}
}

// TestPrefixes checks the range-to-prefix split against brute force.
func TestPrefixes(t *testing.T) {
	for _, rg := range [][2]uint64{{0, 65535}, {1, 1}, {20, 25}, {1000, 2000}, {65535, 65535}, {3, 65534}} {
		var got []uint64
		for _, p := range prefixes(rg[0], rg[1], 16) {
			for v := uint64(0); v <= 65535; v++ {
				if v&p[1] == p[0] {
					got = append(got, v)
				}
			}
		}
		var want []uint64
		for v := rg[0]; v <= rg[1]; v++ {
			want = append(want, v)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("prefixes(%d, %d): (-want +got)\n%s", rg[0], rg[1], diff)
		}
	}
}

// TestLargeBucket checks the indexed same-priority search on a bucket
// of 64 ACLs: only the one overlapping pair is reported.
func TestLargeBucket(t *testing.T) {
	s := nbschema.NewSnapshot()
	port := &nbdb.LogicalSwitchPort{UUID: "port-p1", Name: "p1"}
	ls := &nbdb.LogicalSwitch{UUID: "ls-sw0", Name: "sw0", Ports: []string{port.UUID}}
	s.Ports[port.UUID], s.Switches[ls.UUID] = port, ls
	const n = 64
	for i := 0; i < n; i++ {
		action, dst := "allow-related", 1000+i
		if i%2 == 1 {
			action = "drop"
		}
		if i == n-1 {
			dst = 1000 // overlaps ACL 0
		}
		name := fmt.Sprintf("acl-%d", i)
		acl := &nbdb.ACL{UUID: fmt.Sprintf("acl-%02d", i), Name: &name, Direction: "from-lport", Priority: 100, Action: action,
			Match: fmt.Sprintf(`inport == "p1" && ip4 && tcp && tcp.dst == %d`, dst)}
		s.ACLs[acl.UUID] = acl
		ls.ACLs = append(ls.ACLs, acl.UUID)
	}
	r, err := Lint(s)
	if err != nil {
		t.Fatal(err)
	}
	want := []got{{Rule: RuleSamePriority, Severity: "warning", ACLs: []string{"acl-0", fmt.Sprintf("acl-%d", n-1)}, Switches: []string{"sw0"}, Offset: -1}}
	if diff := cmp.Diff(want, summarize(r)); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// testDialect is the match language the set tests parse with: the default
// version's, as Lint uses for an NB of that version.
var testDialect = compile.Dialect(release.Default())
