package compile

import (
	"reflect"
	"strings"
	"testing"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
)

// TestValidateMatchesPerRelease checks that match validation speaks the
// target release's language: a field only newer releases have is invalid
// on 23.03, one that 24.09 removed is invalid on 25.03 and 26.03.
func TestValidateMatchesPerRelease(t *testing.T) {
	snap, err := nbschema.ParseFixture("validate.yaml", []byte(`
switches:
  - name: sw0
    ports:
      - {name: p1, addresses: ["00:00:00:00:00:01 10.0.0.1"]}
    acls:
      - {direction: to-lport, priority: 1001, match: "ct.est && ct_mark.allow_established == 1", action: allow-related}
      - {direction: to-lport, priority: 1002, match: "ct.est && ct_label.blocked == 0", action: allow-related}
      - {direction: to-lport, priority: 1003, match: "ip4 && tcp.dst == 80", action: allow-related}
`))
	if err != nil {
		t.Fatal(err)
	}
	checkProblems(t, snap, []problemsCase{
		{release.MustLookup("23.03.1"), []string{"invalid match, OVN will discard its flows: offset 10 (at \"ct_mark.allow_establ...\"): Syntax error at `ct_mark.allow_established'"}},
		{release.MustLookup("25.03.0"), []string{"invalid match, OVN will discard its flows: offset 10 (at \"ct_label.blocked == ...\"): Syntax error at `ct_label.blocked'"}},
		{release.MustLookup("26.03.1"), []string{"Syntax error at `ct_label.blocked'"}},
	})
}

type problemsCase struct {
	r    *release.Release
	want []string // one substring per problem, in order
}

// checkProblems compiles snap for each case's release and checks the
// problems ValidateMatchesFor reports, and that ValidateMatchesWith
// reports the same with every other match parsed ahead by a MatchParser
// (of the case's release, or of another one, which it must ignore).
func checkProblems(t *testing.T, snap *nbschema.Snapshot, cases []problemsCase) {
	t.Helper()
	for _, tc := range cases {
		res := CompileWith(snap, Options{Release: tc.r})
		probs := ValidateMatchesFor(snap, res.Flows, tc.r)
		for _, pr := range []*release.Release{tc.r, release.MustLookup("23.03.1"), release.MustLookup("26.03.1")} {
			pre := NewMatchParser(pr)
			for i, id := range nbschema.SortedKeys(snap.ACLs) {
				if i%2 == 0 {
					pre.Add(snap.ACLs[id])
				}
			}
			if got := ValidateMatchesWith(snap, res.Flows, tc.r, pre); !reflect.DeepEqual(got, probs) {
				t.Errorf("%s, matches parsed ahead for %s: %v, want %v", tc.r, pr, got, probs)
			}
		}
		if len(probs) != len(tc.want) {
			t.Errorf("%s: %d problems, want %d: %v", tc.r, len(probs), len(tc.want), probs)
			continue
		}
		for i, p := range probs {
			if !strings.Contains(p.Message, tc.want[i]) {
				t.Errorf("%s: problem %q, want %q", tc.r, p.Message, tc.want[i])
			}
		}
	}
}

// TestValidateMatchesWrapped checks that matches are judged as northd puts
// them into flows: an unbalanced match that pairs up with northd's
// parentheses is accepted where every flow wraps it (a stateful ACL), and
// partly where only some do (a stateless ACL on 25.03+, whose pre_acl
// filter has it as written); 23.03's unparenthesized reject flow rejects
// `A || B', 25.03's does not.
func TestValidateMatchesWrapped(t *testing.T) {
	snap, err := nbschema.ParseFixture("wrapped.yaml", []byte(`
switches:
  - name: sw0
    ports:
      - {name: p1, addresses: ["00:00:00:00:00:01 10.0.0.1"]}
    acls:
      - {direction: to-lport, priority: 1001, match: "ip4) && (tcp", action: allow-related}
      - {direction: from-lport, priority: 1002, match: "ip4) && (udp", action: allow-stateless}
      - {direction: to-lport, priority: 1003, match: "tcp.dst == 22 || tcp.dst == 23", action: reject}
`))
	if err != nil {
		t.Fatal(err)
	}
	checkProblems(t, snap, []problemsCase{
		{release.MustLookup("23.03.1"), []string{
			"invalid match, OVN will discard its flows",
			"OVN 23.03 wraps this reject ACL's match as \"(reg0[10] == 1) && tcp.dst == 22 || tcp.dst == 23\"",
			"OVN 23.03 wraps this reject ACL's match as \"(reg0[9] == 1) && tcp.dst == 22 || tcp.dst == 23\"",
		}},
		{release.MustLookup("25.03.0"), []string{"invalid match: OVN 25.03 discards 1 of the 2 flows northd builds from it (e.g. \"ip4) && (udp\""}},
		{release.MustLookup("26.03.1"), []string{"invalid match: OVN 26.03 discards 1 of the 2 flows"}},
	})
}
