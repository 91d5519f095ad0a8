package expr

import "sync"

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
// to constants, by name; it is safe for concurrent use.
type MemberCache struct{ sets, ports sync.Map }

// NewMemberCache returns an empty cache.
func NewMemberCache() *MemberCache { return &MemberCache{} }

// AddressSetMembers implements MemberResolver.
func (m MapResolver) AddressSetMembers(name string) ([]Const, bool) {
	addrs, ok := m.AddressSets[name]
	if !ok {
		return nil, false
	}
	return m.Members.get(false, name, func() []Const { return addressSetMembers(addrs) }), true
}

// PortGroupMembers implements MemberResolver.
func (m MapResolver) PortGroupMembers(name string) ([]Const, bool) {
	ports, ok := m.PortGroups[name]
	if !ok {
		return nil, false
	}
	return m.Members.get(true, name, func() []Const { return portGroupMembers(ports) }), true
}

// get returns the cached constants of the address set (or port group)
// name, converting them with conv the first time; with no cache, always.
func (c *MemberCache) get(port bool, name string, conv func() []Const) []Const {
	if c == nil {
		return conv()
	}
	m := &c.sets
	if port {
		m = &c.ports
	}
	if x, ok := m.Load(name); ok {
		return x.([]Const)
	}
	cs := conv()
	m.Store(name, cs)
	return cs
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
