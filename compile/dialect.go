package compile

import (
	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/release"
)

// Dialect is the match language of release r (nil: 23.03.1), the one its
// ovn-controller parses ACL matches and the flows northd builds around them
// with.
func Dialect(r *release.Release) *expr.Dialect {
	if r == nil {
		return expr.OVN2303()
	}
	d, err := expr.DialectOf(r.Version.Major, r.Version.Minor, r.Version.Patch)
	if err != nil {
		panic(err) // every supported release is 23.03 or newer
	}
	return d
}
