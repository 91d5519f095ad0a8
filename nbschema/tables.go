package nbschema

import (
	"fmt"
	"iter"
	"maps"
	"reflect"
	"slices"
	"sort"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/aclc/aclc/nbschema/nbdb"
)

// The NB table registry: the one list of the NB tables aclc reads. The
// live monitor, the fast reader, Store, the incremental engine, set
// normalization and the fixture codec all derive their table lists from
// it. Adding a table is one entry here (plus its Snapshot field and its
// fixture keys); adding a column is one name in its entry's Columns.

// Table is one NB table aclc reads.
type Table struct {
	// Name is the OVSDB table name, e.g. "ACL".
	Name string
	// Columns are the columns aclc reads (monitor and fast reader); nil
	// means all of the model's columns.
	Columns []string
	// Noun names the table as an operator says it ("port group"), for
	// fixture messages.
	Noun string
	// UniqueNames: a fixture names the rows of this table uniquely (OVSDB
	// indexes them by name, or the fixture uses the name as the handle).
	UniqueNames bool
	// Owner, for a table whose rows a fixture writes only inside another
	// row, names the owner as an operator says it ("switch").
	Owner string
	// storeRank orders Store's operations: referenced tables first.
	storeRank int

	model reflect.Type // the nbdb model struct type
	// setFields are the field indexes of the set columns (slices), sorted
	// into OVSDB's order by SortSets; mapFields those of map columns.
	setFields, mapFields []int
	uuidField            int // field index of _uuid

	rows  func(s *Snapshot) iter.Seq2[string, model.Model]
	get   func(s *Snapshot, uuid string) (model.Model, bool)
	set   func(s *Snapshot, uuid string, row model.Model) // nil row: delete
	count func(s *Snapshot) int
	alloc func(s *Snapshot, n int) // a new, empty map for about n rows
}

// tables is the registry, in the order a Snapshot lists its tables.
var tables = []*Table{
	globalTable(&Table{Name: nbdb.NBGlobalTable, Noun: "NB_Global", storeRank: -1,
		Columns: []string{"name", "nb_cfg", "options", "external_ids"}}),
	rowsOf(&Table{Name: nbdb.LogicalSwitchTable, Noun: "switch", UniqueNames: true, storeRank: 10,
		Columns: []string{"name", "ports", "acls", "load_balancer", "load_balancer_group", "dns_records", "copp",
			"other_config", "external_ids"}},
		func(s *Snapshot) *map[string]*nbdb.LogicalSwitch { return &s.Switches }),
	// dynamic_addresses: northd fills it for "dynamic" addresses and uses
	// it like addresses.
	rowsOf(&Table{Name: nbdb.LogicalSwitchPortTable, Noun: "switch port", UniqueNames: true, Owner: "switch", storeRank: 9,
		Columns: []string{"name", "type", "addresses", "dynamic_addresses", "port_security", "options",
			"dhcpv4_options", "dhcpv6_options", "enabled", "parent_name", "tag_request", "tag", "peer", "mirror_rules", "external_ids"}},
		func(s *Snapshot) *map[string]*nbdb.LogicalSwitchPort { return &s.Ports }),
	rowsOf(&Table{Name: nbdb.PortGroupTable, Noun: "port group", UniqueNames: true, storeRank: 11,
		Columns: []string{"name", "ports", "acls", "external_ids"}},
		func(s *Snapshot) *map[string]*nbdb.PortGroup { return &s.PortGroups }),
	rowsOf(&Table{Name: nbdb.AddressSetTable, Noun: "address set", UniqueNames: true, storeRank: 7,
		Columns: []string{"name", "addresses", "external_ids"}},
		func(s *Snapshot) *map[string]*nbdb.AddressSet { return &s.AddressSets }),
	rowsOf(&Table{Name: nbdb.ACLTable, Noun: "ACL", Owner: "switch or port group", storeRank: 8},
		func(s *Snapshot) *map[string]*nbdb.ACL { return &s.ACLs }),
	rowsOf(&Table{Name: nbdb.LoadBalancerTable, Noun: "load balancer", storeRank: 5,
		Columns: []string{"name", "protocol", "vips", "options", "selection_fields", "ip_port_mappings", "external_ids"}},
		func(s *Snapshot) *map[string]*nbdb.LoadBalancer { return &s.LoadBalancers }),
	rowsOf(&Table{Name: nbdb.LoadBalancerGroupTable, Noun: "load balancer group", UniqueNames: true, storeRank: 6,
		Columns: []string{"name", "load_balancer"}},
		func(s *Snapshot) *map[string]*nbdb.LoadBalancerGroup { return &s.LBGroups }),
	rowsOf(&Table{Name: nbdb.MeterTable, Noun: "meter", UniqueNames: true, storeRank: 1},
		func(s *Snapshot) *map[string]*nbdb.Meter { return &s.Meters }),
	rowsOf(&Table{Name: nbdb.MeterBandTable, Noun: nbdb.MeterBandTable, Owner: "meter", storeRank: 0},
		func(s *Snapshot) *map[string]*nbdb.MeterBand { return &s.MeterBands }),
	rowsOf(&Table{Name: nbdb.CoppTable, Noun: "copp", UniqueNames: true, storeRank: 2},
		func(s *Snapshot) *map[string]*nbdb.Copp { return &s.Copps }),
	rowsOf(&Table{Name: nbdb.DHCPOptionsTable, Noun: "dhcp_options entry", UniqueNames: true, storeRank: 3},
		func(s *Snapshot) *map[string]*nbdb.DHCPOptions { return &s.DHCPOptions }),
	rowsOf(&Table{Name: nbdb.DNSTable, Noun: "dns entry", UniqueNames: true, storeRank: 4},
		func(s *Snapshot) *map[string]*nbdb.DNS { return &s.DNS }),
	rowsOf(&Table{Name: nbdb.LogicalRouterTable, Noun: "router", UniqueNames: true, storeRank: 13,
		Columns: []string{"name", "enabled", "options", "external_ids", "ports", "load_balancer",
			"load_balancer_group", "copp", "static_routes", "policies", "nat"}},
		func(s *Snapshot) *map[string]*nbdb.LogicalRouter { return &s.Routers }),
	rowsOf(&Table{Name: nbdb.LogicalRouterPortTable, Noun: "router port", UniqueNames: true, Owner: "router", storeRank: 12,
		Columns: []string{"name", "mac", "networks", "options", "peer", "enabled", "external_ids",
			"gateway_chassis", "ha_chassis_group", "ipv6_ra_configs", "ipv6_prefix"}},
		func(s *Snapshot) *map[string]*nbdb.LogicalRouterPort { return &s.RouterPorts }),
	// The routers' routes, policies and NAT, and the gateway chassis that
	// make a router port a gateway port: what aclc trace follows across
	// routers or names as not modelled.
	rowsOf(&Table{Name: nbdb.LogicalRouterStaticRouteTable, Noun: "static route", Owner: "router", storeRank: 11},
		func(s *Snapshot) *map[string]*nbdb.LogicalRouterStaticRoute { return &s.StaticRoutes }),
	rowsOf(&Table{Name: nbdb.LogicalRouterPolicyTable, Noun: "router policy", Owner: "router", storeRank: 11},
		func(s *Snapshot) *map[string]*nbdb.LogicalRouterPolicy { return &s.Policies }),
	rowsOf(&Table{Name: nbdb.NATTable, Noun: "NAT rule", Owner: "router", storeRank: 11},
		func(s *Snapshot) *map[string]*nbdb.NAT { return &s.NATs }),
	rowsOf(&Table{Name: nbdb.StaticMACBindingTable, Noun: "static MAC binding", storeRank: 11},
		func(s *Snapshot) *map[string]*nbdb.StaticMACBinding { return &s.StaticMACBindings }),
	rowsOf(&Table{Name: nbdb.GatewayChassisTable, Noun: "gateway chassis", UniqueNames: true, Owner: "router port", storeRank: 11},
		func(s *Snapshot) *map[string]*nbdb.GatewayChassis { return &s.GatewayChassis }),
	rowsOf(&Table{Name: nbdb.HAChassisGroupTable, Noun: "HA chassis group", UniqueNames: true, Owner: "router port", storeRank: 11},
		func(s *Snapshot) *map[string]*nbdb.HAChassisGroup { return &s.HAChassisGroups }),
	rowsOf(&Table{Name: nbdb.HAChassisTable, Noun: "HA chassis", Owner: "HA chassis group", storeRank: 10},
		func(s *Snapshot) *map[string]*nbdb.HAChassis { return &s.HAChassis }),
	// The port mirrors switch ports name; not their Mirror_Rule rows
	// (the mirror stages' matches, outside the ACL stages).
	rowsOf(&Table{Name: nbdb.MirrorTable, Noun: "mirror", UniqueNames: true, storeRank: 7,
		Columns: []string{"name", "type", "sink", "filter", "index", "external_ids"}},
		func(s *Snapshot) *map[string]*nbdb.Mirror { return &s.Mirrors }),
	// The rows ACL sampling (24.09+) and network functions (26.03+) read;
	// a release without them has no such tables (HasTable).
	rowsOf(&Table{Name: nbdb.SampleCollectorTable, Noun: "sample collector", UniqueNames: true, storeRank: 7},
		func(s *Snapshot) *map[string]*nbdb.SampleCollector { return &s.SampleCollectors }),
	rowsOf(&Table{Name: nbdb.SamplingAppTable, Noun: "sampling app", storeRank: 7},
		func(s *Snapshot) *map[string]*nbdb.SamplingApp { return &s.SamplingApps }),
	rowsOf(&Table{Name: nbdb.SampleTable, Noun: "sample", UniqueNames: true, storeRank: 7},
		func(s *Snapshot) *map[string]*nbdb.Sample { return &s.Samples }),
	rowsOf(&Table{Name: nbdb.NetworkFunctionHealthCheckTable, Noun: "network function health check", UniqueNames: true, storeRank: 7},
		func(s *Snapshot) *map[string]*nbdb.NetworkFunctionHealthCheck { return &s.NetworkFunctionHealths }),
	rowsOf(&Table{Name: nbdb.NetworkFunctionTable, Noun: "network function", UniqueNames: true, storeRank: 10},
		func(s *Snapshot) *map[string]*nbdb.NetworkFunction { return &s.NetworkFunctions }),
	rowsOf(&Table{Name: nbdb.NetworkFunctionGroupTable, Noun: "network function group", UniqueNames: true, storeRank: 10},
		func(s *Snapshot) *map[string]*nbdb.NetworkFunctionGroup { return &s.NetworkFunctionGroups }),
}

var tableIndex = func() map[string]*Table {
	m := map[string]*Table{}
	for _, t := range tables {
		t.indexFields()
		m[t.Name] = t
	}
	return m
}()

// Tables returns the registry, in the order a Snapshot lists its tables.
// Callers must not modify the entries.
func Tables() []*Table { return tables }

// TableByName returns the registry entry of an NB table, or nil for a
// table aclc does not read.
func TableByName(name string) *Table { return tableIndex[name] }

// Rows yields every row of t in s, in no order.
func (t *Table) Rows(s *Snapshot) iter.Seq2[string, model.Model] { return t.rows(s) }

// Row returns row uuid of t in s.
func (t *Table) Row(s *Snapshot, uuid string) (model.Model, bool) { return t.get(s, uuid) }

// Has reports whether s holds row uuid of t.
func (t *Table) Has(s *Snapshot, uuid string) bool {
	_, ok := t.get(s, uuid)
	return ok
}

// Set puts row into s as row uuid of t; a nil row deletes it. row must be
// a pointer to t's model.
func (t *Table) Set(s *Snapshot, uuid string, row model.Model) { t.set(s, uuid, row) }

// Len is the number of rows of t in s.
func (t *Table) Len(s *Snapshot) int { return t.count(s) }

// SortSets puts the set columns of row, a pointer to t's model, in the
// order OVSDB keeps sets in (strings and UUIDs ascending), the order
// ovn-northd sees them in, so that rows from a fixture, the fast reader
// and a libovsdb cache compare equal and compile the same.
func (t *Table) SortSets(row model.Model) {
	for f := range t.sets(row) {
		if l, ok := f.Interface().([]string); ok {
			sort.Strings(l)
			continue
		}
		sort.Slice(f.Interface(), func(a, b int) bool { return f.Index(a).String() < f.Index(b).String() })
	}
}

// sets yields the set columns of row, a pointer to t's model, that hold
// two elements or more.
func (t *Table) sets(row model.Model) iter.Seq[reflect.Value] {
	return func(yield func(reflect.Value) bool) {
		v := reflect.ValueOf(row).Elem()
		for _, i := range t.setFields {
			if f := v.Field(i); f.Len() >= 2 && !yield(f) {
				return
			}
		}
	}
}

// SetsSorted reports whether the set columns of row, a pointer to t's
// model, are already in the order SortSets puts them in.
func (t *Table) SetsSorted(row model.Model) bool {
	for f := range t.sets(row) {
		if l, ok := f.Interface().([]string); ok {
			if !sort.StringsAreSorted(l) {
				return false
			}
			continue
		}
		for j := 1; j < f.Len(); j++ {
			if f.Index(j).String() < f.Index(j-1).String() {
				return false
			}
		}
	}
	return true
}

// SetColumns and MapColumns name t's set and map columns.
func (t *Table) SetColumns() []string { return t.columnNames(t.setFields) }

// MapColumns names t's map columns.
func (t *Table) MapColumns() []string { return t.columnNames(t.mapFields) }

func (t *Table) columnNames(fields []int) []string {
	var out []string
	for _, i := range fields {
		out = append(out, t.model.Field(i).Tag.Get("ovsdb"))
	}
	return out
}

// uuidOf returns the _uuid of row, a pointer to t's model.
func (t *Table) uuidOf(row model.Model) string {
	return reflect.ValueOf(row).Elem().Field(t.uuidField).String()
}

// newModel returns a new, empty row of t's model.
func (t *Table) newModel() model.Model { return reflect.New(t.model).Interface().(model.Model) }

// monitorOption is t's part of the libovsdb monitor request, for a client
// with dbModel: t's columns that the client's release has; false when the
// release lacks the table.
func (t *Table) monitorOption(dbModel model.ClientDBModel) (client.MonitorOption, bool) {
	typ, ok := dbModel.Types()[t.Name]
	if !ok {
		return nil, false
	}
	m := reflect.New(typ.Elem()).Interface().(model.Model)
	if t.Columns == nil {
		return client.WithTable(m), true
	}
	v := reflect.ValueOf(m).Elem()
	var fields []any
	for _, col := range t.Columns {
		for i := range typ.Elem().NumField() {
			if typ.Elem().Field(i).Tag.Get("ovsdb") == col {
				fields = append(fields, v.Field(i).Addr().Interface())
			}
		}
	}
	return client.WithTable(m, fields...), true
}

func (t *Table) indexFields() {
	for i := range t.model.NumField() {
		f := t.model.Field(i)
		switch f.Tag.Get("ovsdb") {
		case "":
			continue
		case "_uuid":
			t.uuidField = i
			continue
		}
		switch f.Type.Kind() {
		case reflect.Slice:
			if f.Type.Elem().Kind() != reflect.String {
				panic(fmt.Sprintf("nbschema: %s column %s: set of %s", t.Name, f.Tag.Get("ovsdb"), f.Type.Elem()))
			}
			t.setFields = append(t.setFields, i)
		case reflect.Map:
			t.mapFields = append(t.mapFields, i)
		}
	}
}

// rowsOf fills in t's accessors for the Snapshot map field returns.
func rowsOf[T model.Model](t *Table, field func(*Snapshot) *map[string]T) *Table {
	t.model = reflect.TypeFor[T]().Elem()
	t.rows = func(s *Snapshot) iter.Seq2[string, model.Model] {
		return func(yield func(string, model.Model) bool) {
			for k, v := range *field(s) {
				if !yield(k, v) {
					return
				}
			}
		}
	}
	t.get = func(s *Snapshot, id string) (model.Model, bool) {
		v, ok := (*field(s))[id]
		if !ok {
			return nil, false
		}
		return v, true
	}
	t.set = func(s *Snapshot, id string, row model.Model) {
		if row == nil {
			delete(*field(s), id)
			return
		}
		(*field(s))[id] = row.(T)
	}
	t.count = func(s *Snapshot) int { return len(*field(s)) }
	t.alloc = func(s *Snapshot, n int) { *field(s) = make(map[string]T, n) }
	return t
}

// globalTable fills in the accessors of NB_Global, the one table a
// Snapshot holds as a single row.
func globalTable(t *Table) *Table {
	t.model = reflect.TypeFor[nbdb.NBGlobal]()
	t.rows = func(s *Snapshot) iter.Seq2[string, model.Model] {
		return func(yield func(string, model.Model) bool) {
			if s.Global != nil {
				yield(s.Global.UUID, s.Global)
			}
		}
	}
	t.get = func(s *Snapshot, id string) (model.Model, bool) {
		if s.Global == nil || s.Global.UUID != id {
			return nil, false
		}
		return s.Global, true
	}
	t.set = func(s *Snapshot, id string, row model.Model) {
		if row == nil {
			if s.Global != nil && s.Global.UUID == id {
				s.Global = nil
			}
			return
		}
		s.Global = row.(*nbdb.NBGlobal)
	}
	t.count = func(s *Snapshot) int {
		if s.Global == nil {
			return 0
		}
		return 1
	}
	t.alloc = func(*Snapshot, int) {}
	return t
}

// storeOrder is the registry without NB_Global, referenced tables first:
// the order of Store's operations.
func storeOrder() []*Table {
	var out []*Table
	for _, t := range tables {
		if t.storeRank >= 0 {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b *Table) int { return a.storeRank - b.storeRank })
	return out
}

// uuids returns the UUIDs of t's rows in s, ascending.
func (t *Table) uuids(s *Snapshot) []string {
	return slices.Sorted(maps.Keys(maps.Collect(t.rows(s))))
}
