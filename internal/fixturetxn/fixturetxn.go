// Package fixturetxn renders an NB Snapshot (a fixture) as the OVSDB
// "transact" request that writes it into an empty NB, for the golden
// script: testdata/regen.sh applies it with the oracle version's own
// ovsdb-client, so that nothing of aclc but the fixture reader stands
// between a fixture and the real northd's flows, and the version's own
// ovsdb-server judges whether its schema can hold the fixture.
//
// The request is RFC 7047 JSON: one insert per row, with the row's UUID
// (ovsdb-server's "uuid" extension), columns at their default left out
// (so a fixture that does not use a column a version lacks loads there),
// references as ["uuid", ...] and NB_Global updated in place (the script
// creates it with ovn-nbctl init). Only libovsdb's model tags are read,
// and the version's schema file, for which string columns are UUIDs.
package fixturetxn

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// Schema is what the renderer needs of an OVSDB schema file: the tables,
// and for each column whether its (key, value) type is a UUID.
type Schema struct {
	Name    string
	Version string
	Tables  map[string]*schemaTable
}

type schemaTable struct {
	Columns map[string]*schemaColumn `json:"columns"`
	IsRoot  bool                     `json:"isRoot"`
}

type schemaColumn struct {
	Type json.RawMessage `json:"type"`
	key  string          // atomic type of the key
	val  string          // atomic type of the value, "" for a set or scalar
}

// ParseSchema parses an .ovsschema file.
func ParseSchema(b []byte) (*Schema, error) {
	var s Schema
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	for tn, t := range s.Tables {
		for cn, c := range t.Columns {
			k, v, err := atomicTypes(c.Type)
			if err != nil {
				return nil, fmt.Errorf("schema: %s.%s: %w", tn, cn, err)
			}
			c.key, c.val = k, v
		}
	}
	return &s, nil
}

// atomicTypes reads a column type: "string", {"key": "uuid", ...},
// {"key": {"type": "uuid", "refTable": ...}, "value": ...}.
func atomicTypes(raw json.RawMessage) (key, val string, err error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, "", nil
	}
	var t struct {
		Key   json.RawMessage `json:"key"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return "", "", err
	}
	base := func(r json.RawMessage) (string, error) {
		if len(r) == 0 {
			return "", nil
		}
		var s string
		if json.Unmarshal(r, &s) == nil {
			return s, nil
		}
		var b struct {
			Type string `json:"type"`
		}
		err := json.Unmarshal(r, &b)
		return b.Type, err
	}
	if key, err = base(t.Key); err != nil {
		return "", "", err
	}
	val, err = base(t.Value)
	return key, val, err
}

// Op is one operation of a transact request.
type Op map[string]any

// Empty returns the operations that delete every row of every table but
// NB_Global (and Connection/SSL, which a fixture never has): nothing left
// refers to a deleted row, so the transaction keeps referential integrity
// whatever the fixture held.
func Empty(sc *Schema) []Op {
	var names []string
	for n := range sc.Tables {
		if n != "NB_Global" && n != "Connection" && n != "SSL" {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var ops []Op
	for _, n := range names {
		ops = append(ops, Op{"op": "delete", "table": n, "where": []any{}})
	}
	return ops
}

// Rows returns the operations that write snap's rows: an update of the one
// NB_Global row (name, options, external_ids; empty when the fixture has
// none), then an insert per row of
// every other table, tables in registry order and rows in UUID order.
// A column the schema lacks is written as it is, and ovsdb-server refuses
// it ("unknown column"): the version cannot express the fixture.
func Rows(sc *Schema, snap *nbschema.Snapshot) ([]Op, error) {
	// NB_Global is updated whether or not the fixture has one, so that
	// no option of the previous fixture stays behind.
	g := snap.Global
	if g == nil {
		g = &nbdb.NBGlobal{}
	}
	ops := []Op{{"op": "update", "table": "NB_Global", "where": []any{}, "row": map[string]any{
		"name": g.Name, "options": ovsMap(g.Options), "external_ids": ovsMap(g.ExternalIDs)}}}
	for _, t := range nbschema.Tables() {
		if t.Name == "NB_Global" {
			continue
		}
		var uuids []string
		rows := map[string]any{}
		for u, m := range t.Rows(snap) {
			uuids = append(uuids, u)
			rows[u] = m
		}
		slices.Sort(uuids)
		for _, u := range uuids {
			row, err := render(sc, t.Name, rows[u])
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", t.Name, snap.Where(t.Name, u), err)
			}
			ops = append(ops, Op{"op": "insert", "table": t.Name, "uuid": u, "row": row})
		}
	}
	return ops, nil
}

// Request is the transact request for ops on database db.
func Request(db string, ops []Op) ([]byte, error) {
	params := append([]any{db}, anySlice(ops)...)
	return json.Marshal(params)
}

func anySlice(ops []Op) []any {
	out := make([]any, len(ops))
	for i, o := range ops {
		out[i] = o
	}
	return out
}

func ovsMap(m map[string]string) []any {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	pairs := []any{}
	for _, k := range keys {
		pairs = append(pairs, []any{k, m[k]})
	}
	return []any{"map", pairs}
}

// render is the row's non-default columns as OVSDB JSON values.
func render(sc *Schema, table string, m any) (map[string]any, error) {
	var cols map[string]*schemaColumn
	if t := sc.Tables[table]; t != nil {
		cols = t.Columns
	}
	v := reflect.ValueOf(m).Elem()
	row := map[string]any{}
	for i := range v.NumField() {
		col := v.Type().Field(i).Tag.Get("ovsdb")
		if col == "" || col == "_uuid" {
			continue
		}
		f := v.Field(i)
		if f.IsZero() || (f.Kind() == reflect.Slice || f.Kind() == reflect.Map) && f.Len() == 0 {
			continue // the column's default
		}
		c := cols[col] // nil: the schema lacks the column; written anyway
		val, err := value(f, c)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", col, err)
		}
		row[col] = val
	}
	return row, nil
}

func value(f reflect.Value, c *schemaColumn) (any, error) {
	key, val := "", ""
	if c != nil {
		key, val = c.key, c.val
	}
	switch f.Kind() {
	case reflect.Pointer:
		return atom(f.Elem(), key)
	case reflect.Slice:
		set := []any{}
		for i := range f.Len() {
			a, err := atom(f.Index(i), key)
			if err != nil {
				return nil, err
			}
			set = append(set, a)
		}
		return []any{"set", set}, nil
	case reflect.Map:
		keys := f.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return compare(a, b) })
		pairs := []any{}
		for _, k := range keys {
			ka, err := atom(k, key)
			if err != nil {
				return nil, err
			}
			va, err := atom(f.MapIndex(k), val)
			if err != nil {
				return nil, err
			}
			pairs = append(pairs, []any{ka, va})
		}
		return []any{"map", pairs}, nil
	default:
		return atom(f, key)
	}
}

func compare(a, b reflect.Value) int {
	if a.Kind() == reflect.String {
		switch x, y := a.String(), b.String(); {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	switch x, y := a.Int(), b.Int(); {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func atom(v reflect.Value, typ string) (any, error) {
	switch v.Kind() {
	case reflect.String:
		if typ == "uuid" {
			return []any{"uuid", v.String()}, nil
		}
		return v.String(), nil
	case reflect.Int, reflect.Int64, reflect.Int32:
		return v.Int(), nil
	case reflect.Bool:
		return v.Bool(), nil
	case reflect.Float64:
		return v.Float(), nil
	}
	return nil, fmt.Errorf("unsupported value kind %s", v.Kind())
}
