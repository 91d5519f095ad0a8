package nbschema

import "sort"

// sortSets puts every set column of every row in the order OVSDB keeps
// sets in (strings and UUIDs ascending), the order ovn-northd sees them
// in, so that a fixture and a live NB holding the same rows give the same
// Snapshot, down to slice order.
func (s *Snapshot) sortSets() {
	for _, r := range s.Switches {
		sortAll(r.Ports, r.ACLs, r.LoadBalancer, r.LoadBalancerGroup, r.DNSRecords, r.QOSRules, r.ForwardingGroups)
	}
	for _, r := range s.Ports {
		sortAll(r.Addresses, r.PortSecurity, r.MirrorRules)
	}
	for _, r := range s.PortGroups {
		sortAll(r.Ports, r.ACLs)
	}
	for _, r := range s.AddressSets {
		sortAll(r.Addresses)
	}
	for _, r := range s.LoadBalancers {
		sortAll(r.SelectionFields, r.HealthCheck)
	}
	for _, r := range s.LBGroups {
		sortAll(r.LoadBalancer)
	}
	for _, r := range s.Meters {
		sortAll(r.Bands)
	}
	for _, r := range s.Routers {
		sortAll(r.Ports, r.LoadBalancer, r.LoadBalancerGroup, r.Nat, r.Policies, r.StaticRoutes)
	}
	for _, r := range s.RouterPorts {
		sortAll(r.Networks, r.GatewayChassis, r.Ipv6Prefix)
	}
}

func sortAll(lists ...[]string) {
	for _, l := range lists {
		sort.Strings(l)
	}
}
