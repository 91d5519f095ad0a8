package lint

// This file is what lint asks an ACL index (index.go) when it looks for
// the ACLs that may meet an ACL's cubes: their hull, and the names of
// inport or outport they all admit.

// qbuf is room for a query cube on the stack.
type qbuf [16]fc

// queryOf returns the cube to ask an index for the ACLs whose cubes may
// meet cs (h is hull(cs)): h with the string constraints (inport,
// outport) every cube of cs states alike. hull keeps no names, so without
// them an ACL of a port group is a candidate for every ACL of its stage
// on the switch, not only for those that name one of the ports it does:
// on nbgen's random-span shape, a port group on 2–8 switches has one port
// on each, and most of a switch's ACLs name another. The query is built
// in buf when there are names to add.
func queryOf(buf *qbuf, cs []cube, h cube) cube {
	if len(cs) == 0 {
		return h
	}
	q := cube(nil)
	for _, f := range cs[0] {
		if f.str == nil || f.str.in == nil {
			continue // no names: the index does not narrow by it
		}
		same := true // every cube holds this very constraint (a product's cubes share it)
		for _, c := range cs[1:] {
			if g, ok := c.field(f.id); !ok || g.str != f.str {
				same = false
				break
			}
		}
		if !same {
			continue
		}
		if q == nil {
			q = append(buf[:0], h...)
		}
		q = append(q, f)
	}
	if q == nil {
		return h
	}
	return q
}

// queryOf is queryOf for an instance's cubes from above on the switch.
func (l *linter) queryOf(buf *qbuf, v *swView, in *inst) cube {
	return queryOf(buf, l.setOf(v, in).over, in.hull)
}
