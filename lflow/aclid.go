package lflow

import (
	"strconv"
	"strings"
)

// aclIDLoad is how the ACL stages load a persist-established ACL's SB
// ACL_ID (REG_ACL_ID).
const aclIDLoad = "reg2[16..31] = "

// RenumberACLIDs returns a copy of l in which the ACL ids that
// persist-established ACLs load (`reg2[16..31] = N;`) are renumbered
// 1, 2, ... in the order they first appear. northd allocates them in its
// hash order, aclc (without a live SB) in ACL UUID order: two listings of
// the same NB are equal up to a consistent renaming of those ids exactly
// when their renumbered copies are equal. l must be sorted.
func RenumberACLIDs(l *Listing) *Listing {
	ren := map[string]string{}
	out := &Listing{Datapaths: make([]*Datapath, len(l.Datapaths))}
	for i, d := range l.Datapaths {
		nd := *d
		nd.Flows = append([]Flow(nil), d.Flows...)
		for j := range nd.Flows {
			nd.Flows[j].Actions = renumber(nd.Flows[j].Actions, ren)
		}
		out.Datapaths[i] = &nd
	}
	return out
}

func renumber(a string, ren map[string]string) string {
	if !strings.Contains(a, aclIDLoad) {
		return a
	}
	var b strings.Builder
	for {
		i := strings.Index(a, aclIDLoad)
		if i < 0 {
			b.WriteString(a)
			return b.String()
		}
		i += len(aclIDLoad)
		b.WriteString(a[:i])
		a = a[i:]
		n := 0
		for n < len(a) && a[n] >= '0' && a[n] <= '9' {
			n++
		}
		id := a[:n]
		if n > 0 {
			if _, ok := ren[id]; !ok {
				ren[id] = strconv.Itoa(len(ren) + 1)
			}
			id = ren[id]
		}
		b.WriteString(id)
		a = a[n:]
	}
}
