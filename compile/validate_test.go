package compile

import (
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
	for _, tc := range []struct {
		r    *release.Release
		want []string // the invalid matches' fields
	}{
		{release.OVN2303, []string{"ct_mark.allow_established"}},
		{release.OVN2503, []string{"ct_label.blocked"}},
		{release.OVN2603, []string{"ct_label.blocked"}},
	} {
		res := CompileWith(snap, Options{Release: tc.r})
		probs := ValidateMatchesFor(snap, res.Flows, tc.r)
		if len(probs) != len(tc.want) {
			t.Errorf("%s: %d problems, want %d: %v", tc.r, len(probs), len(tc.want), probs)
			continue
		}
		for i, p := range probs {
			if !strings.Contains(p.Message, "invalid match") || !strings.Contains(p.Message, "`"+tc.want[i]+"'") {
				t.Errorf("%s: problem %q, want an invalid match at %s", tc.r, p.Message, tc.want[i])
			}
		}
	}
}
