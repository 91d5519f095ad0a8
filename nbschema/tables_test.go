package nbschema_test

import (
	"reflect"
	"testing"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// TestRegistryCoversSnapshot checks that every table map of Snapshot has
// its registry entry: NewSnapshot allocates every map through the
// registry, so a map without an entry stays nil.
func TestRegistryCoversSnapshot(t *testing.T) {
	s := nbschema.NewSnapshot()
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() == reflect.Map && f.IsNil() {
			t.Errorf("Snapshot.%s has no entry in the table registry", v.Type().Field(i).Name)
		}
	}
	seen := map[string]bool{}
	for _, tb := range nbschema.Tables() {
		if seen[tb.Name] {
			t.Errorf("table %s registered twice", tb.Name)
		}
		seen[tb.Name] = true
		if nbschema.TableByName(tb.Name) != tb {
			t.Errorf("TableByName(%q) is not its entry", tb.Name)
		}
		if tb.Noun == "" {
			t.Errorf("table %s has no noun", tb.Name)
		}
	}
}

// TestSetColumns pins which columns are sets (sorted) for the tables the
// compiler reads most.
func TestSetColumns(t *testing.T) {
	want := map[string][]string{
		"Logical_Switch":      {"acls", "dns_records", "forwarding_groups", "load_balancer", "load_balancer_group", "ports", "qos_rules"},
		"Logical_Switch_Port": {"addresses", "health_checks", "mirror_rules", "port_security"},
		"Port_Group":          {"acls", "ports"},
		"Address_Set":         {"addresses"},
		"ACL":                 nil,
	}
	for name, cols := range want {
		if got := nbschema.TableByName(name).SetColumns(); !reflect.DeepEqual(got, cols) {
			t.Errorf("%s set columns %v, want %v", name, got, cols)
		}
	}
}

// TestSetsSorted checks SetsSorted against SortSets: a row with a set out
// of order is not sorted until SortSets has put it in order.
func TestSetsSorted(t *testing.T) {
	tb := nbschema.TableByName(nbdb.LogicalSwitchTable)
	ls := &nbdb.LogicalSwitch{UUID: "u", Ports: []string{"b", "a", "c"}, ACLs: []string{"x"}}
	if tb.SetsSorted(ls) {
		t.Fatalf("ports %v reported sorted", ls.Ports)
	}
	tb.SortSets(ls)
	if !tb.SetsSorted(ls) || !reflect.DeepEqual(ls.Ports, []string{"a", "b", "c"}) {
		t.Fatalf("after SortSets: ports %v, SetsSorted %v", ls.Ports, tb.SetsSorted(ls))
	}
}
