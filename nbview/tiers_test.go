package nbview_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// tierNB is a switch sw0 with one port per port group and the port groups
// given as (UUID prefix, ACL) pairs; an empty ACL gives a group without
// ACLs. own are sw0's own ACLs.
func tierNB(t *testing.T, r string, own []string, pgs ...[2]string) *nbschema.Snapshot {
	t.Helper()
	var b strings.Builder
	b.WriteString("switches:\n  - name: sw0\n    ports:\n")
	for i := range pgs {
		fmt.Fprintf(&b, "      - {name: p%d}\n", i)
	}
	if len(own) > 0 {
		b.WriteString("    acls:\n")
		for _, a := range own {
			b.WriteString("      - " + a + "\n")
		}
	}
	b.WriteString("port_groups:\n")
	for i, pg := range pgs {
		fmt.Fprintf(&b, "  - uuid: %s-4000-8000-%012d\n    name: pg%d\n    ports: [p%d]\n", pg[0], i, i, i)
		if pg[1] != "" {
			b.WriteString("    acls:\n      - " + pg[1] + "\n")
		}
	}
	s, err := nbschema.ParseFixtureWith("tiers.yaml", []byte(b.String()), nbschema.FixtureOptions{Release: release.MustLookup(r)})
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	return s
}

const (
	stopACL  = `{direction: from-lport, priority: 100, match: "ip4", action: allow-related}`
	tierACL  = `{direction: to-lport, priority: 100, match: "ip4", action: drop, tier: 2}`
	plainACL = `{direction: to-lport, priority: 100, match: "ip6", action: drop}`
)

// switchOf returns the view's sw0.
func switchOf(t *testing.T, s *nbschema.Snapshot) *nbview.Switch {
	t.Helper()
	for id, ls := range s.Switches {
		if ls.Name == "sw0" {
			return nbview.New(s).SwitchFlags(id)
		}
	}
	t.Fatal("no sw0")
	return nil
}

// TestTierScan pins nbview's model of northd's ls_stateful_record_set_acl_flags
// on 24.03 (FDP-1154, one max_acl_tier per switch) and on 25.03 (fixed,
// per stage); tiers-fdp1154-* check it against the real northd.
func TestTierScan(t *testing.T) {
	pgNames := func(s *nbschema.Snapshot, ids []string) []string {
		var out []string
		for _, id := range ids {
			out = append(out, s.PortGroups[id].Name)
		}
		return out
	}
	cases := []struct {
		name    string
		rel     string
		own     []string
		pgs     [][2]string
		max     nbview.Tiers
		contest []string
		stop    bool
	}{
		{"same bucket, different outcomes", "24.03.9", nil,
			[][2]string{{"00000000-0000", stopACL}, {"00000004-0000", tierACL}}, nbview.Tiers{}, []string{"pg0", "pg1"}, true},
		{"same bucket, same outcome; a tier later", "24.03.9", nil,
			[][2]string{{"00000000-0000", stopACL}, {"00000004-0000", stopACL}, {"00000001-0000", tierACL}}, nbview.Tiers{}, nil, true},
		{"bucket order, not UUID order", "24.03.9", nil,
			[][2]string{{"00000002-0000", tierACL}, {"10000001-0000", stopACL}}, nbview.Tiers{}, nil, true},
		{"eight groups: mask 7 splits bucket 0", "24.03.9", nil,
			[][2]string{{"00000000-0000", stopACL}, {"00000004-0000", tierACL}, {"00000011-0000", ""}, {"00000012-0000", ""},
				{"00000013-0000", ""}, {"00000015-0000", ""}, {"00000016-0000", ""}, {"00000017-0000", ""}}, nbview.Tiers{}, nil, true},
		{"neutral group first", "24.03.9", nil,
			[][2]string{{"00000000-0000", plainACL}, {"00000001-0000", tierACL}, {"00000002-0000", stopACL}}, nbview.Tiers{2, 2, 2}, nil, false},
		{"own ACLs first", "24.03.9", []string{tierACL},
			[][2]string{{"00000000-0000", stopACL}}, nbview.Tiers{2, 2, 2}, nil, false},
		{"own stop", "24.03.9", []string{stopACL},
			[][2]string{{"00000000-0000", tierACL}}, nbview.Tiers{}, nil, true},
		{"no allow-related: one max for all stages", "24.03.9", nil,
			[][2]string{{"00000000-0000", tierACL}}, nbview.Tiers{2, 2, 2}, nil, false},
		{"fixed: per stage, no contest", "25.03.0", nil,
			[][2]string{{"00000000-0000", stopACL}, {"00000004-0000", tierACL}}, nbview.Tiers{0, 0, 2}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := tierNB(t, c.rel, c.own, c.pgs...)
			sw := switchOf(t, s)
			if sw.MaxTier != c.max {
				t.Errorf("MaxTier %v, want %v", sw.MaxTier, c.max)
			}
			if got := pgNames(s, sw.TierContest); !slices.Equal(got, c.contest) {
				t.Errorf("TierContest %v, want %v", got, c.contest)
			}
			if (sw.TierStop != nil) != c.stop {
				t.Errorf("TierStop %v, want stop %v", sw.TierStop, c.stop)
			}
		})
	}
}
