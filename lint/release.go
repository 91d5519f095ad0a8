package lint

import (
	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// setRelease makes lint judge the NB as release r's northd and
// ovn-controller treat it: r's match language, and the release rules
// compile states (tiers and pass from 23.06, the unparenthesized reject
// flow of 23.03, the stateless-ACL-with-LB mode from 25.09). A snapshot
// that names no release (a fixture without `ovn:`) is judged for
// release.Default(), the newest LTS, as aclc compile compiles it (the
// fixture reader settles that; no source leaves a Snapshot without one).
func (l *linter) setRelease(r *release.Release) {
	if r == nil {
		panic("lint: Snapshot without a release (nbschema sets one when a source is loaded)")
	}
	l.rel = r
	l.dialect = compile.Dialect(r)
	l.tiers = compile.HasTiers(r)
	l.rejectHints = compile.RejectPrefixesFor(r)
	l.lbModeKnown = compile.LBStatelessMode(r, &nbdb.LogicalSwitch{OtherConfig: map[string]string{lbModeKey: "true"}})
}

// lbModeKey is the LS other_config key of the stateless-ACL-with-LB mode.
const lbModeKey = "enable-stateless-acl-with-lb"
