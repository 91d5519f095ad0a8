package expr

import "sync"

// refMemo is the resolver of one Parse: it resolves each $address_set and
// @port_group once for the parser and the checker, which read a
// reference's members several times (the parser's type checks, the
// empty-set warning, each fact solver's constraints); at 50k generated
// ACLs the repeated look-ups through a MemberCache were a fifth of the
// CPU of Parse. It lives for one Parse only: nothing may keep it.
type refMemo struct {
	r    Resolver
	ents []refEntry
	buf  [8]refEntry
}

type refEntry struct {
	port    bool
	name    string
	members []Const
	ok      bool
}

var refMemos = sync.Pool{New: func() any { return new(refMemo) }}

// memoize returns the memo over r, nil for a nil r; its resolver is
// used until release.
func memoize(r Resolver) *refMemo {
	if r == nil {
		return nil
	}
	m := refMemos.Get().(*refMemo)
	m.r, m.ents = r, m.buf[:0]
	return m
}

// resolver returns m as a Resolver: nil for a nil m.
func (m *refMemo) resolver() Resolver {
	if m == nil {
		return nil
	}
	return m
}

// release ends the use of m.
func (m *refMemo) release() {
	if m == nil {
		return
	}
	*m = refMemo{}
	refMemos.Put(m)
}

// AddressSet implements Resolver.
func (m *refMemo) AddressSet(name string) ([]string, bool) { return m.r.AddressSet(name) }

// PortGroup implements Resolver.
func (m *refMemo) PortGroup(name string) ([]string, bool) { return m.r.PortGroup(name) }

// AddressSetMembers implements MemberResolver.
func (m *refMemo) AddressSetMembers(name string) ([]Const, bool) { return m.members(false, name) }

// PortGroupMembers implements MemberResolver.
func (m *refMemo) PortGroupMembers(name string) ([]Const, bool) { return m.members(true, name) }

func (m *refMemo) members(port bool, name string) ([]Const, bool) {
	for i := range m.ents {
		if e := &m.ents[i]; e.port == port && e.name == name {
			return e.members, e.ok
		}
	}
	c := Const{Kind: AddressSetRef, Str: name}
	if port {
		c.Kind = PortGroupRef
	}
	ms, ok := resolveRef(m.r, c)
	m.ents = append(m.ents, refEntry{port, name, ms, ok})
	return ms, ok
}
