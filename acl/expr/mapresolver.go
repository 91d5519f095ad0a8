package expr

import (
	"sync"
	"sync/atomic"
)

// MapResolver is a Resolver backed by maps: AddressSets maps a name to its
// addresses, PortGroups a name to its ports on the datapath in question (a
// group absent from PortGroups does not exist there).
type MapResolver struct {
	AddressSets map[string][]string // address set name → addresses
	PortGroups  map[string][]string // port group name → port names
	// Ports, when non-nil, lists the logical ports of the datapath; Eval
	// then treats other names as ovn-trace does (never equal, never
	// chassis-resident).
	Ports map[string]bool
	// Members, when non-nil, caches the address sets' and port groups'
	// members converted to constants (MemberResolver), so that the parser
	// and the checker convert each once, not at every reference. Share one
	// only between resolvers over the same AddressSets and PortGroups.
	Members *MemberCache
}

// MemberCache caches address set entries and port group ports converted
// to constants, by name; it is safe for concurrent use. Its first use
// indexes the resolver's AddressSets and PortGroups by name, so that a
// look-up is one read of a map no one writes; the members are converted
// at the first look-up of each.
type MemberCache struct {
	once        sync.Once
	sets, ports map[string]*memberEntry
}

// memberEntry is one address set or port group of a MemberCache: its
// entries as the resolver holds them and, once converted, as constants.
type memberEntry struct {
	names []string
	conv  atomic.Pointer[converted]
}

// converted is an entry's constants and their summary.
type converted struct {
	cs  []Const
	sum memberSummary
}

// NewMemberCache returns an empty cache.
func NewMemberCache() *MemberCache { return &MemberCache{} }

// AddressSetMembers implements MemberResolver.
func (m MapResolver) AddressSetMembers(name string) ([]Const, bool) { return m.members(false, name) }

// PortGroupMembers implements MemberResolver.
func (m MapResolver) PortGroupMembers(name string) ([]Const, bool) { return m.members(true, name) }

// members returns the constants of the address set (or port group) name,
// through the cache if there is one.
func (m MapResolver) members(port bool, name string) ([]Const, bool) {
	if m.Members != nil {
		return m.Members.get(m, port, name)
	}
	lists, conv := m.AddressSets, addressSetMembers
	if port {
		lists, conv = m.PortGroups, portGroupMembers
	}
	l, ok := lists[name]
	if !ok {
		return nil, false
	}
	return conv(l), true
}

// get returns the constants of the address set (or port group) name of
// m, converting them the first time.
func (c *MemberCache) get(m MapResolver, port bool, name string) ([]Const, bool) {
	c.once.Do(func() {
		c.sets, c.ports = index(m.AddressSets), index(m.PortGroups)
	})
	idx, conv := c.sets, addressSetMembers
	if port {
		idx, conv = c.ports, portGroupMembers
	}
	e := idx[name]
	if e == nil {
		return nil, false
	}
	if x := e.conv.Load(); x != nil {
		return x.cs, true
	}
	x := &converted{cs: conv(e.names)}
	x.sum = summarize(x.cs, port)
	e.conv.Store(x)
	return x.cs, true
}

// memberSummary implements memberSummarizer: the summary of a set the
// cache converted.
func (m MapResolver) memberSummary(port bool, name string) *memberSummary {
	if m.Members == nil {
		return nil
	}
	idx := m.Members.sets
	if port {
		idx = m.Members.ports
	}
	if e := idx[name]; e != nil {
		if x := e.conv.Load(); x != nil {
			return &x.sum
		}
	}
	return nil
}

// index returns an entry for each of the named lists.
func index(lists map[string][]string) map[string]*memberEntry {
	out := make(map[string]*memberEntry, len(lists))
	entries := make([]memberEntry, len(lists))
	i := 0
	for name, l := range lists {
		entries[i].names = l
		out[name] = &entries[i]
		i++
	}
	return out
}

// PortExists implements PortLookup: every name exists when Ports is nil.
func (m MapResolver) PortExists(name string) bool { return m.Ports == nil || m.Ports[name] }

// IsChassisResident implements ChassisResidency like ovn-trace, which
// treats every existing port as resident.
func (m MapResolver) IsChassisResident(port string) bool { return port == "" || m.PortExists(port) }

// AddressSet implements Resolver.
func (m MapResolver) AddressSet(name string) ([]string, bool) {
	a, ok := m.AddressSets[name]
	return a, ok
}

// PortGroup implements Resolver.
func (m MapResolver) PortGroup(name string) ([]string, bool) {
	p, ok := m.PortGroups[name]
	return p, ok
}

// IsMAC reports whether s is an Ethernet address as OVS's
// ovs_scan(ETH_ADDR_SCAN_FMT) reads one.
func IsMAC(s string) bool {
	_, ok := parseMAC(s)
	return ok
}
