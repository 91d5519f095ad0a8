package nbschema

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbschema/nbdb/ovn2303"
	"github.com/aclc/aclc/nbschema/nbdb/ovn2403"
	"github.com/aclc/aclc/nbschema/nbdb/ovn2503"
	"github.com/aclc/aclc/nbschema/nbdb/ovn2509"
	"github.com/aclc/aclc/nbschema/nbdb/ovn2603"
	"github.com/aclc/aclc/release"
)

// Which release an NB belongs to, and how aclc speaks to it.
//
// In memory aclc has one model per NB table, package nbdb, generated from
// the newest supported release's schema; every older release's schema is a
// subset of it (OVN only adds tables and columns, or relaxes one: 7.19.0
// makes Network_Function.outport optional). libovsdb validates a client
// model against the server's schema and refuses columns the server lacks,
// so a libovsdb client of an older NB uses that schema's generated models
// (nbdb/ovn2303 ... nbdb/ovn2603), and rows are converted at the
// boundary: FromClient fills the columns the release lacks with their
// defaults, ToClient refuses a row that sets one of them (or leaves empty
// a column the older schema requires). The fast reader asks only for the
// columns the release has.
//
// The models are keyed by NB schema version (release.Release's NBSchema),
// not by release: patch releases of one series share a schema, and every
// release value of a schema finds its model.

// clientModels are the libovsdb client models of each NB schema version.
var clientModels = map[string]func() (model.ClientDBModel, error){
	"7.0.0":  ovn2303.FullDatabaseModel, // OVN 23.03
	"7.3.0":  ovn2403.FullDatabaseModel, // OVN 24.03
	"7.11.0": ovn2503.FullDatabaseModel, // OVN 25.03
	"7.12.0": ovn2509.FullDatabaseModel, // OVN 25.09
	"7.18.0": ovn2603.FullDatabaseModel, // OVN 26.03
	"7.19.0": nbdb.FullDatabaseModel,    // OVN 26.09: the in-memory model
}

// ClientModel is release r's libovsdb client model of the NB: that of its
// NB schema (ClientModelFor(r.NBSchema)).
func ClientModel(r *release.Release) (model.ClientDBModel, error) {
	if r == nil {
		return model.ClientDBModel{}, fmt.Errorf("no NB client model: no release")
	}
	return ClientModelFor(r.NBSchema)
}

// ClientModelFor is the libovsdb client model of NB schema version
// schemaVersion ("7.18.0").
func ClientModelFor(schemaVersion string) (model.ClientDBModel, error) {
	f, ok := clientModels[schemaVersion]
	if !ok {
		return model.ClientDBModel{}, fmt.Errorf("no NB client model for NB schema %s", schemaVersion)
	}
	return f()
}

// releaseColumns are, per NB schema version and table, the columns the
// schema has.
var releaseColumns = sync.OnceValues(func() (map[string]map[string]map[string]bool, error) {
	out := map[string]map[string]map[string]bool{}
	for v := range clientModels {
		m, err := ClientModelFor(v)
		if err != nil {
			return nil, err
		}
		cols := map[string]map[string]bool{}
		for table, typ := range m.Types() {
			cols[table] = map[string]bool{}
			for i := range typ.Elem().NumField() {
				if c := typ.Elem().Field(i).Tag.Get("ovsdb"); c != "" {
					cols[table][c] = true
				}
			}
		}
		out[v] = cols
	}
	return out, nil
})

// HasColumn reports whether release r's NB schema has table's column.
func HasColumn(r *release.Release, table, column string) bool {
	return r != nil && hasColumn(r.NBSchema, table, column)
}

// HasTable reports whether release r's NB schema has table.
func HasTable(r *release.Release, table string) bool { return r != nil && hasTable(r.NBSchema, table) }

func hasColumn(schema, table, column string) bool {
	cols, err := releaseColumns()
	if err != nil {
		return false
	}
	return cols[schema][table][column]
}

func hasTable(schema, table string) bool {
	cols, err := releaseColumns()
	if err != nil {
		return false
	}
	_, ok := cols[schema][table]
	return ok
}

// converter copies rows between two generated models of one table by
// column name.
type converter struct {
	from, to reflect.Type // struct types
	pairs    [][2]int     // field index in from, in to
	dropped  []int        // fields of from whose column to lacks
	// required are the fields of from that are optional (pointers) where
	// to's column is required (not a pointer), e.g. Network_Function
	// outport from 7.19.0 to 7.18.0.
	required []int
}

var converters sync.Map // [2]reflect.Type -> *converter

func converterFor(from, to reflect.Type) *converter {
	key := [2]reflect.Type{from, to}
	if c, ok := converters.Load(key); ok {
		return c.(*converter)
	}
	c := &converter{from: from, to: to}
	idx := map[string]int{}
	for i := range to.NumField() {
		if col := to.Field(i).Tag.Get("ovsdb"); col != "" {
			idx[col] = i
		}
	}
	for i := range from.NumField() {
		col := from.Field(i).Tag.Get("ovsdb")
		if col == "" {
			continue
		}
		if j, ok := idx[col]; ok {
			c.pairs = append(c.pairs, [2]int{i, j})
			if from.Field(i).Type.Kind() == reflect.Pointer && to.Field(j).Type.Kind() != reflect.Pointer {
				c.required = append(c.required, i)
			}
		} else {
			c.dropped = append(c.dropped, i)
		}
	}
	converters.Store(key, c)
	return c
}

// convert returns src, a pointer to a generated model, as a new row of
// model type to (a pointer type). A column src sets to a non-default value
// that to lacks is an error naming it (*ColumnError), and so is a column
// src leaves empty that to requires (*RequiredColumnError).
func convert(src model.Model, to reflect.Type) (model.Model, error) {
	sv := reflect.ValueOf(src)
	if sv.Type() == to {
		return src, nil
	}
	c := converterFor(sv.Type().Elem(), to.Elem())
	sv = sv.Elem()
	for _, i := range c.dropped {
		if !isEmpty(sv.Field(i)) {
			return nil, &ColumnError{Column: c.from.Field(i).Tag.Get("ovsdb")}
		}
	}
	for _, i := range c.required {
		if sv.Field(i).IsNil() {
			return nil, &RequiredColumnError{Column: c.from.Field(i).Tag.Get("ovsdb")}
		}
	}
	dv := reflect.New(to.Elem())
	for _, p := range c.pairs {
		assign(dv.Elem().Field(p[1]), sv.Field(p[0]))
	}
	return dv.Interface().(model.Model), nil
}

// isEmpty reports whether v is its column's default: zero, or an empty set
// or map.
func isEmpty(v reflect.Value) bool {
	if v.Kind() == reflect.Map || v.Kind() == reflect.Slice {
		return v.Len() == 0
	}
	return v.IsZero()
}

// ColumnError is a value in a column the target release's schema lacks.
type ColumnError struct{ Column string }

func (e *ColumnError) Error() string { return "column " + e.Column + " is not in this NB's schema" }

// RequiredColumnError is an empty optional column that the target
// release's schema requires (Network_Function outport before 7.19.0).
type RequiredColumnError struct{ Column string }

func (e *RequiredColumnError) Error() string {
	return "column " + e.Column + " is empty, and this NB's schema requires a value"
}

// assign sets dst from src, of the same shape but possibly other named
// (enum) types: scalars, pointers to scalars, slices and maps of them; or
// a scalar and a pointer to one (a required column that a later schema
// makes optional), either way: a nil pointer leaves dst zero.
func assign(dst, src reflect.Value) {
	switch {
	case src.Type().AssignableTo(dst.Type()):
		dst.Set(src)
	case src.Kind() == reflect.Pointer && dst.Kind() != reflect.Pointer:
		if !src.IsNil() {
			assign(dst, src.Elem())
		}
	case src.Kind() != reflect.Pointer && dst.Kind() == reflect.Pointer:
		p := reflect.New(dst.Type().Elem())
		assign(p.Elem(), src)
		dst.Set(p)
	case src.Kind() == reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(dst.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			assign(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case src.Kind() == reflect.Map:
		if src.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(dst.Type(), src.Len())
		it := src.MapRange()
		for it.Next() {
			k, v := reflect.New(dst.Type().Key()).Elem(), reflect.New(dst.Type().Elem()).Elem()
			assign(k, it.Key())
			assign(v, it.Value())
			m.SetMapIndex(k, v)
		}
		dst.Set(m)
	case src.Kind() == reflect.Pointer:
		if src.IsNil() {
			return
		}
		p := reflect.New(dst.Type().Elem())
		assign(p.Elem(), src.Elem())
		dst.Set(p)
	default:
		dst.Set(src.Convert(dst.Type()))
	}
}

// FromClient returns row, a libovsdb row of some release's client model
// for table, as aclc's in-memory model (package nbdb); row itself when it
// is one already. Columns the release lacks get their defaults.
func FromClient(table string, row model.Model) model.Model {
	t := tableIndex[table]
	if t == nil || row == nil {
		return row
	}
	m, err := convert(row, reflect.PointerTo(t.model))
	if err != nil {
		panic("nbschema: " + err.Error()) // nbdb has every column
	}
	return m
}

// toClient returns row, an in-memory model row of table, as a row of the
// client model dbModel has for table.
func toClient(dbModel model.DatabaseModel, table string, row model.Model) (model.Model, error) {
	typ, ok := dbModel.Types()[table]
	if !ok {
		return nil, fmt.Errorf("table %s is not in this NB's schema", table)
	}
	return convert(row, typ)
}
