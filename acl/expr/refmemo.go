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
	sum     *memberSummary // once asked for (asked)
	asked   bool
}

// memberSummary is what the checks of a set's members need to know of an
// address set's members as a whole, computed once when a MemberCache
// converts them (the cluster shape's $cluster_ip4 has 5,000 members,
// read for every ACL that names it): the widest member and whether any
// has host bits. It describes the n constants from first on.
type memberSummary struct {
	first    *Const
	n        int
	maxWidth int  // -1: unknown (port groups: strings)
	hostBits bool // a masked member has 1-bits outside its mask
}

// summarize returns the summary of a set's constants.
func summarize(cs []Const, port bool) memberSummary {
	s := memberSummary{n: len(cs), maxWidth: -1}
	if len(cs) > 0 {
		s.first = &cs[0]
	}
	if port {
		return s
	}
	s.maxWidth = 0
	for i := range cs {
		s.maxWidth = max(s.maxWidth, cs[i].Width())
		if cs[i].Kind == MaskedConst && cs[i].HostBits {
			s.hostBits = true
		}
	}
	return s
}

// of reports whether s describes the constants ms.
func (s *memberSummary) of(ms []Const) bool {
	return s != nil && s.n == len(ms) && (len(ms) == 0 || s.first == &ms[0])
}

// memberSummarizer is a resolver that summarizes the members it
// converted (a MapResolver with a MemberCache); nil when it has none.
type memberSummarizer interface {
	memberSummary(port bool, name string) *memberSummary
}

// summaryOf returns the summary of the members ms of reference c through
// r, nil when r has none for exactly ms.
func summaryOf(r Resolver, c Const, ms []Const) *memberSummary {
	var s *memberSummary
	switch r := r.(type) {
	case *refMemo:
		s = r.summary(c.Kind == PortGroupRef, c.Str)
	case memberSummarizer:
		s = r.memberSummary(c.Kind == PortGroupRef, c.Str)
	}
	if !s.of(ms) {
		return nil
	}
	return s
}

// summary returns the inner resolver's summary of a reference resolved
// through m, nil if none.
func (m *refMemo) summary(port bool, name string) *memberSummary {
	for i := range m.ents {
		e := &m.ents[i]
		if e.port != port || e.name != name {
			continue
		}
		if !e.asked {
			e.asked = true
			if ms, ok := m.r.(memberSummarizer); ok {
				e.sum = ms.memberSummary(port, name)
			}
		}
		return e.sum
	}
	return nil
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
	m.ents = append(m.ents, refEntry{port: port, name: name, members: ms, ok: ok})
	return ms, ok
}
