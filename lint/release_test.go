package lint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
)

// lintFor lints a fixture as release r reads it (--ovn-version).
func lintFor(t *testing.T, name string, r *release.Release) *Report {
	t.Helper()
	s, err := nbschema.LoadFixtureWith(filepath.Join("testdata", name), nbschema.FixtureOptions{Release: r})
	if err != nil {
		t.Fatalf("loading %s for %s: %v", name, r, err)
	}
	rep, err := Lint(s)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestRulesPerRelease: the rules whose answer depends on the release.
func TestRulesPerRelease(t *testing.T) {
	prereqs := []got{
		{Rule: "missing-prereq", Severity: "info", ACLs: []string{"reject-telnet"}, Switches: []string{"sw0"}, Offset: 0},
		{Rule: "missing-prereq", Severity: "info", ACLs: []string{"reject-telnet-1"}, Switches: []string{"sw1"}, Offset: 0},
	}
	tests := []struct {
		fixture string
		r       *release.Release
		want    []got
	}{
		// From 23.06 northd parenthesizes the match of a reject flow.
		{"reject-or-discarded.yaml", release.MustLookup("25.03.0"), prereqs},
		{"reject-or-discarded.yaml", release.MustLookup("26.03.1"), prereqs},
		// 25.03 does not read enable-stateless-acl-with-lb (25.09+).
		{"stateless-lb-vip-mode.yaml", release.MustLookup("25.03.0"), []got{
			{Rule: "stateless-lb-vip", Severity: "warning", ACLs: []string{"fast-tcp"}, Switches: []string{"sw-mode"}, Offset: -1},
			{Rule: "stateless-lb-vip", Severity: "warning", ACLs: []string{"fast-tcp-2"}, Switches: []string{"sw-plain"}, Offset: -1},
		}},
		// A group's load balancer is in the mode from 26.09 only.
		{"stateless-lb-vip-mode-group.yaml", release.MustLookup("26.03.1"), []got{
			{Rule: "stateless-lb-vip", Severity: "warning", ACLs: []string{"fast-tcp"}, Switches: []string{"sw-mode"}, Offset: -1},
		}},
		{"stateless-lb-vip-mode-group.yaml", release.MustLookup("26.09.0"), nil},
		// 25.03's sw2 does not run in the stateless-ACL-with-LB mode.
		{"stateless-mark-ignores-tiers.yaml", release.MustLookup("25.03.0"), []got{
			{Rule: "stateless-mark-ignores-tiers", Severity: "warning", ACLs: []string{"np-fast-tcp", "anp-allow-web", "anp-drop-ssh"}, Switches: []string{"sw0"}, Offset: -1},
			{Rule: "shadowed", Severity: "warning", ACLs: []string{"np-allow-web", "anp-fast-tcp"}, Switches: []string{"sw1"}, Offset: -1},
			{Rule: "stateless-mark-ignores-tiers", Severity: "info", ACLs: []string{"np-fast-tcp-2", "anp-allow-web-2"}, Switches: []string{"sw2"}, Offset: -1},
			{Rule: "stateless-mark-ignores-tiers", Severity: "info", ACLs: []string{"np-fast-tcp-3", "anp-allow-web-3"}, Switches: []string{"sw3"}, Offset: -1},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.fixture+"@"+tc.r.Series(), func(t *testing.T) {
			if diff := cmp.Diff(tc.want, summarize(lintFor(t, tc.fixture, tc.r))); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
	// The other tier fixtures read the same on 25.03 as on 26.03 (tiers
	// and pass are 23.06's).
	for _, tc := range ruleCases {
		if !strings.Contains(tc.fixture, "tier") && !strings.Contains(tc.fixture, "pass") || tc.fixture == "stateless-mark-ignores-tiers.yaml" {
			continue
		}
		t.Run(tc.fixture+"@25.03", func(t *testing.T) {
			if diff := cmp.Diff(tc.want, summarize(lintFor(t, tc.fixture, release.MustLookup("25.03.0")))); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDefaultRelease: a fixture that names no release is linted for
// 26.03, as aclc compile compiles it: reject-or-discarded without its ovn:
// key has no 23.03 reject finding.
func TestDefaultRelease(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "reject-or-discarded.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(data), "ovn: \"23.03\"\n", "", 1)
	if text == string(data) {
		t.Fatal("fixture has no ovn: \"23.03\" line")
	}
	s, err := nbschema.ParseFixture("no-release.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	if s.Release != release.Default() || !strings.HasPrefix(s.ReleaseFrom, "the default") {
		t.Fatalf("fixture without ovn: is for %v (%s), want the default %v", s.Release, s.ReleaseFrom, release.Default())
	}
	rep, err := Lint(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Findings {
		if f.Rule == RuleRejectOr {
			t.Errorf("a fixture without ovn: is linted as 23.03: %s", f.Message)
		}
	}
	if release.Default().Series() != "26.03" {
		t.Errorf("default release %v, this test expects 26.03.x", release.Default())
	}
}

// TestDialectPredicates: lint reasons with the NB's version's own match
// language, predicates and prerequisites included. On 26.03.1
// from_evpn_vtep is __inport[31]: a drop of `ip4 && from_evpn_vtep` does
// not shadow a later `ip4 && tcp` allow (read with 23.03's table the
// predicate would vanish and the allow look shadowed); 23.03.1 has no such
// predicate, so the drop's match is invalid there.
func TestDialectPredicates(t *testing.T) {
	const fx = "switches:\n  - name: sw0\n    ports: [{name: p1}]\n    acls:\n" +
		"      - {direction: to-lport, priority: 200, match: \"ip4 && from_evpn_vtep\", action: drop, name: evpn-drop}\n" +
		"      - {direction: to-lport, priority: 100, match: \"ip4 && tcp\", action: allow-related, name: web}\n"
	for _, c := range []struct {
		version string
		rule    string // the finding wanted on evpn-drop or web, "" none
	}{
		{"26.03.1", ""},
		{"26.03.0", RuleInvalidMatch},
		{"23.03.1", RuleInvalidMatch},
	} {
		r := release.MustLookup(c.version)
		s, err := nbschema.ParseFixtureWith("evpn.yaml", []byte(fx), nbschema.FixtureOptions{Release: r})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Lint(s)
		if err != nil {
			t.Fatal(err)
		}
		var rules []string
		for _, f := range rep.Findings {
			if f.Rule == RuleShadowed || f.Rule == RuleInvalidMatch {
				rules = append(rules, f.Rule)
			}
		}
		if want := []string{c.rule}; c.rule == "" && len(rules) > 0 || c.rule != "" && !cmp.Equal(rules, want) {
			t.Errorf("OVN %s: findings %v, want %v", c.version, rules, c.rule)
		}
	}
}

// TestTiersIgnoredFlat: where OVN 24.03's northd ignores a switch's tiers
// (FDP-1154: its scan stops at the allow-related ACL at tier 0, whose UUID
// comes first), lint analyses the switch's ACLs as one tier: the tier-1
// drop at priority 1000 is not shadowed by the tier-0 allow at priority
// 100 — it wins, as in northd's flows — and tiers-ignored names the ACL.
// With the fix (25.03) the tiers count and the drop is shadowed.
func TestTiersIgnoredFlat(t *testing.T) {
	const nb = `switches:
  - name: sw0
    ports:
      - {name: p1}
    acls:
      - {uuid: 00000001-0000-4000-8000-000000000001, direction: from-lport, priority: 100, match: "ip4", action: allow-related}
      - {uuid: 00000002-0000-4000-8000-000000000002, direction: from-lport, priority: 1000, match: "ip4 && tcp", action: drop, tier: 1}
`
	for _, c := range []struct {
		rel  string
		want []string
	}{
		{"24.03.9", []string{RuleTiersIgnored}},
		{"25.03.0", []string{RuleShadowed}},
	} {
		s, err := nbschema.ParseFixtureWith("flat.yaml", []byte(nb), nbschema.FixtureOptions{Release: release.MustLookup(c.rel)})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := Lint(s)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range rep.Findings {
			got = append(got, f.Rule)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("OVN %s: findings %v, want %v", c.rel, got, c.want)
		}
	}
}
