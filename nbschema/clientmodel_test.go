package nbschema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// committedSchemas reads the ovn-nb.ovsschema beside each generated model
// package (nbdb and its sub-packages), by schema version.
func committedSchemas(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("nbdb/ovn-nb.ovsschema")
	if err != nil {
		t.Fatal(err)
	}
	sub, err := filepath.Glob("nbdb/*/ovn-nb.ovsschema")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range append(files, sub...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Version string `json:"version"`
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if prev, ok := out[s.Version]; ok {
			t.Errorf("%s and %s both have schema %s", prev, f, s.Version)
		}
		out[s.Version] = f
	}
	return out
}

func readSchema(t *testing.T, file string) ovsdb.DatabaseSchema {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var s ovsdb.DatabaseSchema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return s
}

// TestClientModelsMatchSchemas: every committed schema has a client model
// under its version, and that model is exactly the schema's (libovsdb
// accepts it, and it has every table and column of the schema and no
// other): a version keyed to another release's package fails here even
// when libovsdb would accept it (an older schema's model validates against
// a newer schema).
func TestClientModelsMatchSchemas(t *testing.T) {
	schemas := committedSchemas(t)
	if got, want := slices.Sorted(func(yield func(string) bool) {
		for v := range clientModels {
			if !yield(v) {
				return
			}
		}
	}), slices.Sorted(func(yield func(string) bool) {
		for v := range schemas {
			if !yield(v) {
				return
			}
		}
	}); !slices.Equal(got, want) {
		t.Fatalf("clientModels has schemas %v, the committed schema files %v", got, want)
	}
	for v, file := range schemas {
		cm, err := ClientModelFor(v)
		if err != nil {
			t.Fatal(err)
		}
		schema := readSchema(t, file)
		if _, errs := model.NewDatabaseModel(schema, cm); len(errs) > 0 {
			t.Errorf("%s (%s): libovsdb refuses the model: %v", v, file, errs)
		}
		types := cm.Types()
		for table, ts := range schema.Tables {
			typ, ok := types[table]
			if !ok {
				t.Errorf("%s: model lacks table %s", v, table)
				continue
			}
			var cols []string
			for i := range typ.Elem().NumField() {
				if c := typ.Elem().Field(i).Tag.Get("ovsdb"); c != "" && c != "_uuid" {
					cols = append(cols, c)
				}
			}
			var want []string
			for c := range ts.Columns {
				want = append(want, c)
			}
			slices.Sort(cols)
			slices.Sort(want)
			if !slices.Equal(cols, want) {
				t.Errorf("%s table %s: model columns %v, schema %v", v, table, cols, want)
			}
		}
		if len(types) != len(schema.Tables) {
			t.Errorf("%s: model has %d tables, schema %d", v, len(types), len(schema.Tables))
		}
	}
}

// TestInMemoryModelIsSuperset: package nbdb has every table and column of
// every schema's client model, with a field type rows convert to and from
// (convert's assign: the same shape, or a scalar and a pointer to one).
func TestInMemoryModelIsSuperset(t *testing.T) {
	mem, err := nbdb.FullDatabaseModel()
	if err != nil {
		t.Fatal(err)
	}
	memTypes := mem.Types()
	for v := range clientModels {
		cm, err := ClientModelFor(v)
		if err != nil {
			t.Fatal(err)
		}
		for table, typ := range cm.Types() {
			mt, ok := memTypes[table]
			if !ok {
				t.Errorf("nbdb lacks table %s of schema %s", table, v)
				continue
			}
			fields := map[string]reflect.Type{}
			for i := range mt.Elem().NumField() {
				fields[mt.Elem().Field(i).Tag.Get("ovsdb")] = mt.Elem().Field(i).Type
			}
			for i := range typ.Elem().NumField() {
				f := typ.Elem().Field(i)
				col := f.Tag.Get("ovsdb")
				m, ok := fields[col]
				if !ok {
					t.Errorf("nbdb lacks %s column %s of schema %s", table, col, v)
					continue
				}
				if !convertible(f.Type, m) {
					t.Errorf("%s column %s: schema %s's %s does not convert to nbdb's %s", table, col, v, f.Type, m)
				}
			}
		}
	}
}

func convertible(a, b reflect.Type) bool {
	if a.Kind() == reflect.Pointer && b.Kind() != reflect.Pointer {
		a = a.Elem()
	}
	if b.Kind() == reflect.Pointer && a.Kind() != reflect.Pointer {
		b = b.Elem()
	}
	switch {
	case a.Kind() != b.Kind():
		return false
	case a.Kind() == reflect.Pointer || a.Kind() == reflect.Slice:
		return convertible(a.Elem(), b.Elem())
	case a.Kind() == reflect.Map:
		return convertible(a.Key(), b.Key()) && convertible(a.Elem(), b.Elem())
	}
	return a.ConvertibleTo(b)
}

// TestClientModelBySchema: a release is served by its NB schema's model,
// whichever *release.Release value carries it.
func TestClientModelBySchema(t *testing.T) {
	for _, r := range release.All() {
		if _, err := ClientModel(r); err != nil {
			t.Errorf("%v: %v", r, err)
		}
		other := *r // another value of the same schema (a patch release)
		other.Version.Patch += 7
		for _, tc := range []struct{ table, column string }{
			{nbdb.ACLTable, "match"}, {nbdb.ACLTable, "tier"}, {nbdb.ACLTable, "sample_new"},
			{nbdb.NetworkFunctionTable, "outport"}, {nbdb.AddressSetTable, "options"},
		} {
			if HasColumn(r, tc.table, tc.column) != HasColumn(&other, tc.table, tc.column) ||
				HasTable(r, tc.table) != HasTable(&other, tc.table) {
				t.Errorf("%v and %v (both NB schema %s) disagree on %s.%s", r, &other, r.NBSchema, tc.table, tc.column)
			}
		}
	}
	cases := []struct {
		schema, table, column string
		has                   bool
	}{
		{"7.0.0", nbdb.ACLTable, "tier", false},
		{"7.3.0", nbdb.ACLTable, "tier", true},
		{"7.3.0", nbdb.ACLTable, "sample_new", false},
		{"7.11.0", nbdb.ACLTable, "sample_new", true},
		{"7.11.0", nbdb.MirrorRuleTable, "", false},
		{"7.12.0", nbdb.MirrorRuleTable, "", true},
		{"7.12.0", nbdb.NetworkFunctionTable, "", false},
		{"7.18.0", nbdb.NetworkFunctionTable, "outport", true},
		{"7.18.0", nbdb.AddressSetTable, "options", false},
		{"7.19.0", nbdb.AddressSetTable, "options", true},
	}
	for _, c := range cases {
		r := &release.Release{NBSchema: c.schema}
		got := HasTable(r, c.table)
		if c.column != "" {
			got = HasColumn(r, c.table, c.column)
		}
		if got != c.has {
			t.Errorf("schema %s: %s %s: has = %v, want %v", c.schema, c.table, c.column, got, c.has)
		}
	}
	if _, err := ClientModelFor("7.99.0"); err == nil {
		t.Error("ClientModelFor(7.99.0): no error")
	}
	if HasTable(&release.Release{NBSchema: "7.99.0"}, nbdb.ACLTable) || HasTable(nil, nbdb.ACLTable) {
		t.Error("HasTable of an unknown schema or no release: true")
	}
}

// TestConvertOptionalOutport: Network_Function outport, required before
// 7.19.0 (a string in those models), optional since (*string in nbdb).
func TestConvertOptionalOutport(t *testing.T) {
	old, err := ClientModelFor("7.18.0")
	if err != nil {
		t.Fatal(err)
	}
	oldType := old.Types()[nbdb.NetworkFunctionTable]
	row := reflect.New(oldType.Elem())
	row.Elem().FieldByName("UUID").SetString("u1")
	row.Elem().FieldByName("Outport").SetString("p2")
	mem := FromClient(nbdb.NetworkFunctionTable, row.Interface().(model.Model)).(*nbdb.NetworkFunction)
	if mem.UUID != "u1" || mem.Outport == nil || *mem.Outport != "p2" {
		t.Fatalf("FromClient: %+v", mem)
	}
	dbm, errs := model.NewDatabaseModel(readSchema(t, "nbdb/ovn2603/ovn-nb.ovsschema"), old)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	back, err := toClient(dbm, nbdb.NetworkFunctionTable, mem)
	if err != nil {
		t.Fatal(err)
	}
	if got := reflect.ValueOf(back).Elem().FieldByName("Outport").String(); got != "p2" {
		t.Errorf("toClient outport = %q", got)
	}
	mem.Outport = nil
	_, err = toClient(dbm, nbdb.NetworkFunctionTable, mem)
	if re, ok := err.(*RequiredColumnError); !ok || re.Column != "outport" {
		t.Errorf("toClient without outport: %v, want a RequiredColumnError for outport", err)
	}
}
