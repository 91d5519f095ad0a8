package compile

import (
	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/release"
)

// Dialect is the match language of release r, the one its ovn-controller
// parses ACL matches and the flows northd builds around them with: the
// acl/expr changes whose release facts (release.DialectFact) r has.
func Dialect(r *release.Release) *expr.Dialect {
	return expr.NewDialect(r.Name(), func(c expr.Change) bool {
		f := release.DialectFact(string(c))
		return f != nil && r.Has(f)
	})
}
