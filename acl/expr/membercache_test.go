package expr

import (
	"fmt"
	"maps"
	"testing"

	"github.com/aclc/aclc/release"
)

// TestMemberCacheAgrees checks that a MapResolver with a MemberCache (the
// converted members shared, a set's summary standing in for reading its
// members in the width checks and the host-bits warning) gives the errors,
// trees and warnings of a resolver that converts every reference anew, on
// every corpus expression in every release's dialect and on sets whose
// members have host bits or are too wide, with the cache cold and warm.
func TestMemberCacheAgrees(t *testing.T) {
	sets := maps.Clone(corpusAddressSets)
	sets["as_hb"] = []string{"10.0.0.0/24", "10.0.1.1/24", "10.0.2.0/24"}
	sets["as_wide"] = []string{"10.0.0.1", "fe80::1", "10.0.0.2"}
	sets["as_small"] = []string{"1", "3", "0x7"}
	sets["as_masked"] = []string{"0x4/0x4", "0x1/0xff"}
	exprs := corpusExprs(t)
	for _, s := range []string{
		"ip4 && ip4.src == $as_hb", "ip4 && ip4.src == {$as1, $as_hb}", "ip4 && ip4.src == {10.0.0.1, $as_hb, 10.0.0.1/8}",
		"ip4 && ip4.src == $as_wide", "ip4 && ip4.src == {$as1, $as_wide}", "ip6 && ip6.src == $as_wide",
		"reg0[0..1] == $as_small", "reg0[0..2] == $as_small", "reg0[0..3] == {$as_small, 0xff}", "tcp && tcp.dst == $as_small",
		"reg0 == $as_masked", "reg0[0..3] == $as_masked", "reg0 < $as_small", "reg0 > $as_masked", "tcp.dst == $as_v6",
		"ip4 && ip4.src == $as_empty && ip4.dst == $as_hb", "outport == @pg1 && ip4.dst == $pg1_ip4", "ip4.src == $nosuch",
	} {
		exprs = append(exprs, s)
	}
	for _, r := range release.Distinct() {
		d := dialectOf(t, r)
		cached := MapResolver{AddressSets: sets, PortGroups: corpusPortGroups, Members: NewMemberCache()}
		plain := MapResolver{AddressSets: sets, PortGroups: corpusPortGroups}
		for _, pass := range []string{"cold", "warm"} {
			for _, s := range exprs {
				want, got := parseResult(d, s, plain), parseResult(d, s, &cached)
				if got != want {
					t.Errorf("%s %s cache: %q:\n got %s\nwant %s", r.Name(), pass, s, got, want)
				}
			}
		}
	}
}

// parseResult is what Parse says of s: its error, or the tree printed
// and the warnings.
func parseResult(d *Dialect, s string, r Resolver) string {
	e, err := d.Parse(s, r)
	if err != nil {
		return "error " + err.Error()
	}
	return fmt.Sprintf("%s %v", e, e.Warnings)
}
