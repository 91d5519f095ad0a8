package expr

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
