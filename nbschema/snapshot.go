// Package nbschema loads an OVN Northbound database into a Snapshot, from a
// YAML fixture or from a live NB over OVSDB, and writes a Snapshot back to
// either. The row types are the libovsdb models generated into nbschema/nbdb.
//
// Data flows one way: a source fills a Snapshot, the compiler reads it.
package nbschema

import (
	"maps"
	"slices"

	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// Snapshot is one consistent view of the NB rows the ACL compiler needs;
// each map is the rows of one table of the registry (tables.go).
// Every map is keyed by the row's UUID. References between rows (a switch's
// ports, acls, load_balancer, ...) hold UUIDs, exactly as in OVSDB.
type Snapshot struct {
	Global        *nbdb.NBGlobal // nil when the NB has no NB_Global row
	Switches      map[string]*nbdb.LogicalSwitch
	Ports         map[string]*nbdb.LogicalSwitchPort
	PortGroups    map[string]*nbdb.PortGroup
	AddressSets   map[string]*nbdb.AddressSet
	ACLs          map[string]*nbdb.ACL
	LoadBalancers map[string]*nbdb.LoadBalancer
	LBGroups      map[string]*nbdb.LoadBalancerGroup
	Meters        map[string]*nbdb.Meter
	MeterBands    map[string]*nbdb.MeterBand
	Copps         map[string]*nbdb.Copp
	DHCPOptions   map[string]*nbdb.DHCPOptions
	DNS           map[string]*nbdb.DNS
	// Routers and RouterPorts matter to the ACL stages only through
	// switch ports of type "router": northd adds the conntrack skip flows
	// for such a port only when options:router-port names an existing
	// Logical_Router_Port.
	Routers     map[string]*nbdb.LogicalRouter
	RouterPorts map[string]*nbdb.LogicalRouterPort
	// StaticRoutes, Policies and NATs are the routers' rows that trace
	// follows across routers (or names as what it does not model).
	StaticRoutes map[string]*nbdb.LogicalRouterStaticRoute
	Policies     map[string]*nbdb.LogicalRouterPolicy
	NATs         map[string]*nbdb.NAT
	// StaticMACBindings: northd writes no router flows for them and
	// ovn-trace ignores them; trace names them when it stops at an
	// unresolved next hop.
	StaticMACBindings map[string]*nbdb.StaticMACBinding
	// GatewayChassis makes a router port a distributed gateway port; so
	// does an HA chassis group (its HA_Chassis rows in HAChassis).
	GatewayChassis  map[string]*nbdb.GatewayChassis
	HAChassisGroups map[string]*nbdb.HAChassisGroup
	HAChassis       map[string]*nbdb.HAChassis
	// Mirrors are the port mirrors switch ports name (mirror_rules);
	// only type "lport" ones (25.09+) touch the ACL stages. Their
	// Mirror_Rule rows only feed the mirror stages, which aclc does not
	// compile.
	Mirrors map[string]*nbdb.Mirror
	// ACL sampling (24.09+): the samples ACLs name (sample_new,
	// sample_est), their collectors, and the sampling apps.
	Samples          map[string]*nbdb.Sample
	SampleCollectors map[string]*nbdb.SampleCollector
	SamplingApps     map[string]*nbdb.SamplingApp
	// Network functions (26.03+): the groups ACLs name
	// (network_function_group), their functions and health checks.
	NetworkFunctions       map[string]*nbdb.NetworkFunction
	NetworkFunctionGroups  map[string]*nbdb.NetworkFunctionGroup
	NetworkFunctionHealths map[string]*nbdb.NetworkFunctionHealthCheck

	// Origin says where a row came from, for error messages: "file.yaml:12:5"
	// for a fixture row, "NB ACL 7c1e..." for a live one. Keyed by UUID.
	Origin map[string]string
	// Positions holds, for a fixture row, where it was written (Origin is
	// its String); live rows have none. Keyed by UUID.
	Positions map[string]Position

	// Release is the OVN release the rows are of, never nil: a live NB's
	// (detected from NB_Global options:northd_internal_version and its
	// schema version, or Options.Release), a fixture's (its `ovn:` key or
	// FixtureOptions.Release, else release.Default()); NewSnapshot's is
	// release.Default().
	Release *release.Release
	// ReleaseFrom says where Release came from, for messages ("its ovn:
	// key", "--ovn-version", "the default; ...").
	ReleaseFrom string
}

// NewSnapshot returns an empty Snapshot with every map allocated.
func NewSnapshot() *Snapshot {
	s := &Snapshot{Origin: map[string]string{}, Positions: map[string]Position{},
		Release: release.Default(), ReleaseFrom: "the default"}
	for _, t := range tables {
		t.alloc(s, 0)
	}
	return s
}

// Where names the origin of the row with uuid for an error message, falling
// back to "<table> <uuid>".
func (s *Snapshot) Where(table, uuid string) string {
	if o, ok := s.Origin[uuid]; ok && o != "" {
		return o
	}
	return table + " " + uuid
}

// GlobalOption returns NB_Global options:key, or "" when unset.
func (s *Snapshot) GlobalOption(key string) string {
	if s.Global == nil {
		return ""
	}
	return s.Global.Options[key]
}

// SortedKeys returns the keys of m in ascending order; used wherever output
// order must not depend on map iteration.
func SortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
