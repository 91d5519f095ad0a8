package compile

import "github.com/aclc/aclc/nbschema/nbdb"

// touch reads each ACL (all three cache lines of the row) and its match
// before the ACLs are looked at one by one. In a compile at scale the rows
// are no longer in the cache when a pass reaches them; these loads,
// independent of each other, overlap their misses, where a loop doing
// real work on each ACL waits for each in turn. It returns a value made of
// them, so that they stay.
func touch(acls []*nbdb.ACL) uintptr {
	var x uintptr
	for _, acl := range acls {
		x += uintptr(len(acl.Action)) + uintptr(len(acl.Match)) + uintptr(acl.Tier)
		if m := acl.Match; m != "" {
			x += uintptr(m[0]) + uintptr(m[len(m)/2]) + uintptr(m[len(m)-1])
		}
	}
	return x
}

// touchBatch is how many ACLs a pass touches ahead.
const touchBatch = 32

// eachTouched calls fn on each of acls in order, touching them a batch at
// a time first.
func eachTouched(acls []*nbdb.ACL, fn func(*nbdb.ACL)) {
	var x uintptr
	for len(acls) > 0 {
		b := acls[:min(touchBatch, len(acls))]
		x += touch(b)
		for _, acl := range b {
			fn(acl)
		}
		acls = acls[len(b):]
	}
	keep(x)
}

// eachACL calls fn on every ACL of acls (a snapshot's table, in map
// order), touching them a batch at a time first.
func eachACL(acls map[string]*nbdb.ACL, fn func(id string, acl *nbdb.ACL)) {
	var ids [touchBatch]string
	var rows [touchBatch]*nbdb.ACL
	var x uintptr
	n := 0
	flush := func() {
		x += touch(rows[:n])
		for i := range n {
			fn(ids[i], rows[i])
		}
		n = 0
	}
	for id, acl := range acls {
		ids[n], rows[n] = id, acl
		if n++; n == touchBatch {
			flush()
		}
	}
	flush()
	keep(x)
}

// keep is where touch's values go.
//
//go:noinline
func keep(uintptr) {}
