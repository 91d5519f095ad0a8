package compile

import (
	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/aclc/aclc/nbschema/nbdb"
)

// What the engine does with the inputs of releases after 23.03: the ACL
// columns and tables that tiers, sampling, persist-established and
// network functions add.

// fullRebuild reports whether a row change makes the engine recompile
// every switch.
func (e *Engine) fullRebuild(table string, old, cur model.Model) bool {
	r := &e.g.r
	switch table {
	case nbdb.SampleTable, nbdb.SampleCollectorTable, nbdb.SamplingAppTable:
		return r.sampling
	case nbdb.NetworkFunctionTable, nbdb.NetworkFunctionGroupTable, nbdb.NetworkFunctionHealthCheckTable:
		return r.nf
	case nbdb.LogicalSwitchPortTable:
		// A network function names its ports.
		return r.nf && len(e.g.s.NetworkFunctions) > 0
	case nbdb.ACLTable:
		// ACL ids go in UUID order over every persist-established ACL.
		if r.persist {
			o, _ := old.(*nbdb.ACL)
			n, _ := cur.(*nbdb.ACL)
			return (o != nil && persistsEstablished(o)) != (n != nil && persistsEstablished(n))
		}
	}
	return false
}

// aclNeedsRebuild reports whether a change of ACL a cannot be patched into
// its switches' flows: its samples' flows may be shared with other ACLs
// in ways the patch does not follow, and its network function group adds
// flows per group.
func (g *global) aclNeedsRebuild(a *nbdb.ACL) bool {
	if a == nil {
		return false
	}
	return (g.r.sampling && (a.SampleNew != nil || a.SampleEst != nil)) || (g.r.nf && a.NetworkFunctionGroup != nil)
}
