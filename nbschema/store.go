package nbschema

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"

	"github.com/aclc/aclc/internal/ovsdbconn"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/aclc/aclc/nbschema/nbdb"
)

// StoreOptions tunes Store.
type StoreOptions struct {
	// Replace deletes every existing row of the snapshot's tables (switches
	// with their ports and ACLs, port groups, address sets, load balancers
	// and groups, meters, copps, DHCP options, DNS, routers with their
	// ports, NAT, routes and policies) in the same
	// transaction. Without it Store refuses an NB that has any.
	Replace bool
}

// ErrNotEmpty is returned (wrapped) by Store when the NB already holds rows
// and StoreOptions.Replace is not set.
var ErrNotEmpty = errors.New("NB is not empty")

// Store writes snap into the NB behind c in one transaction, every row
// with the snapshot's UUID. Without StoreOptions.Replace the NB must hold
// no rows of the snapshot's tables. With it, existing rows that the
// snapshot also has (same UUID) are updated in place, since OVSDB does not
// let one transaction delete a UUID and insert it again, and the other
// existing rows are deleted. When the NB already has an NB_Global row, its
// name, options and external_ids are updated in place (keeping its UUID,
// connections and ssl); otherwise snap.Global is inserted. A nil
// snap.Global leaves NB_Global alone.
//
// The rows are written with the client's models (ClientModel of the NB's
// release): a row that sets a column the NB's schema lacks, or a row of a
// table it lacks, is an error naming the row, and nothing is written.
func Store(ctx context.Context, c client.Client, snap *Snapshot, opt StoreOptions) error {
	dbm := c.Cache().DatabaseModel()
	var names []string
	for _, t := range tables {
		if _, ok := dbm.Types()[t.Name]; ok {
			names = append(names, t.Name)
		}
	}
	existing, err := countRows(ctx, c, names)
	if err != nil {
		return err
	}
	var nonEmpty []string
	for _, t := range tables {
		if n := len(existing[t.Name]); n > 0 && t.Name != nbdb.NBGlobalTable {
			nonEmpty = append(nonEmpty, fmt.Sprintf("%d %s", n, t.Name))
		}
	}
	if len(nonEmpty) > 0 && !opt.Replace {
		return fmt.Errorf("%w: it has %s rows (replace them with --replace)", ErrNotEmpty, ovsdbconn.JoinAnd(nonEmpty))
	}
	var ops []ovsdb.Operation
	if g := snap.Global; g != nil {
		switch old := existing[nbdb.NBGlobalTable]; len(old) {
		case 0:
			cg, err := clientRow(dbm, snap, nbdb.NBGlobalTable, g.UUID, g)
			if err != nil {
				return err
			}
			op, err := insertOp(c, nbdb.NBGlobalTable, g.UUID, cg)
			if err != nil {
				return err
			}
			ops = append(ops, op)
		default:
			row := ovsdb.Row{"name": g.Name}
			for col, m := range map[string]map[string]string{"options": g.Options, "external_ids": g.ExternalIDs} {
				om, err := ovsdb.NewOvsMap(nonNil(m))
				if err != nil {
					return fmt.Errorf("NB_Global %s: %w", col, err)
				}
				row[col] = om
			}
			ops = append(ops, ovsdb.Operation{Op: ovsdb.OperationUpdate, Table: nbdb.NBGlobalTable, Row: row,
				Where: []ovsdb.Condition{uuidIs(old[0])}})
		}
	}
	rows, err := rowOps(c, snap, existing)
	if err != nil {
		return err
	}
	ops = append(ops, rows...)
	results, err := c.Transact(ctx, ops...)
	if err != nil {
		return fmt.Errorf("NB transaction: %w", err)
	}
	return resultError(snap, ops, results)
}

func uuidIs(u string) ovsdb.Condition {
	return ovsdb.NewCondition("_uuid", ovsdb.ConditionEqual, ovsdb.UUID{GoUUID: u})
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// rowOps returns, in a stable order, an insert for every snapshot row the
// NB lacks, an update for every one it has (same UUID), and a delete for
// every existing row the snapshot lacks.
func rowOps(c client.Client, snap *Snapshot, existing map[string][]string) ([]ovsdb.Operation, error) {
	var ops []ovsdb.Operation
	dbm := c.Cache().DatabaseModel()
	for _, t := range storeOrder() {
		if _, ok := dbm.Types()[t.Name]; !ok {
			for u := range t.rows(snap) {
				return nil, fmt.Errorf("%s %s%s: this NB's schema has no table %s", t.Name, u, originSuffix(snap, u), t.Name)
			}
			continue
		}
		have := map[string]bool{}
		for _, u := range existing[t.Name] {
			have[u] = true
		}
		want := map[string]bool{}
		for _, k := range t.uuids(snap) {
			want[k] = true
			m, _ := t.get(snap, k)
			m, err := clientRow(dbm, snap, t.Name, k, m)
			if err != nil {
				return nil, err
			}
			if have[k] {
				op, err := updateOp(c, t.Name, k, m)
				if err != nil {
					return nil, err
				}
				ops = append(ops, op)
				continue
			}
			op, err := insertOp(c, t.Name, k, m)
			if err != nil {
				return nil, err
			}
			ops = append(ops, op)
		}
		for _, u := range existing[t.Name] {
			if !want[u] {
				ops = append(ops, ovsdb.Operation{Op: ovsdb.OperationDelete, Table: t.Name,
					Where: []ovsdb.Condition{uuidIs(u)}})
			}
		}
	}
	return ops, nil
}

// clientRow returns row uuid of table as a row of the client's model.
func clientRow(dbm model.DatabaseModel, snap *Snapshot, table, uuid string, row model.Model) (model.Model, error) {
	m, err := toClient(dbm, table, row)
	var ce *ColumnError
	if errors.As(err, &ce) {
		return nil, fmt.Errorf("%s %s%s: %s: this NB's schema has no column %s", table, uuid, originSuffix(snap, uuid), ce.Column, ce.Column)
	}
	if err != nil {
		return nil, fmt.Errorf("%s %s%s: %w", table, uuid, originSuffix(snap, uuid), err)
	}
	return m, nil
}

// originSuffix is " (where)" for a row whose Origin is known.
func originSuffix(snap *Snapshot, uuid string) string {
	if o := snap.Origin[uuid]; o != "" {
		return " (" + o + ")"
	}
	return ""
}

// insertOp inserts the model with its UUID. client.Create leaves out
// columns with default values; a row whose columns are all default would
// then have no "row" member at all, which ovsdb-server rejects, so such a
// row spells out every column.
func insertOp(c client.Client, table, uuid string, m model.Model) (ovsdb.Operation, error) {
	ops, err := c.Create(m)
	if err != nil {
		return ovsdb.Operation{}, fmt.Errorf("encode %s %s: %w", table, uuid, err)
	}
	if len(ops) != 1 {
		return ovsdb.Operation{}, fmt.Errorf("encode %s %s: %d operations", table, uuid, len(ops))
	}
	op := ops[0]
	if len(op.Row) == 0 {
		row, err := fullRow(c, table, uuid, m)
		if err != nil {
			return ovsdb.Operation{}, err
		}
		op.Row = row
	}
	return op, nil
}

// updateOp sets every column of the existing row uuid to the model's values,
// empty ones included, so that the row ends up as if freshly inserted.
func updateOp(c client.Client, table, uuid string, m model.Model) (ovsdb.Operation, error) {
	row, err := fullRow(c, table, uuid, m)
	if err != nil {
		return ovsdb.Operation{}, err
	}
	return ovsdb.Operation{Op: ovsdb.OperationUpdate, Table: table, Row: row,
		Where: []ovsdb.Condition{uuidIs(uuid)}}, nil
}

// fullRow returns every column of the model but _uuid, default values
// included.
func fullRow(c client.Client, table, uuid string, m model.Model) (ovsdb.Row, error) {
	info, err := c.Cache().DatabaseModel().NewModelInfo(m)
	if err != nil {
		return nil, fmt.Errorf("encode %s %s: %w", table, uuid, err)
	}
	var fields []any
	v := reflect.ValueOf(m).Elem()
	for i := 0; i < v.NumField(); i++ {
		if tag := v.Type().Field(i).Tag.Get("ovsdb"); tag != "" && tag != "_uuid" {
			fields = append(fields, v.Field(i).Addr().Interface())
		}
	}
	row, err := c.Cache().Mapper().NewRow(info, fields...)
	if err != nil {
		return nil, fmt.Errorf("encode %s %s: %w", table, uuid, err)
	}
	delete(row, "_uuid")
	return row, nil
}

// countRows returns the UUIDs of the rows of each table, in one read-only
// transaction.
func countRows(ctx context.Context, c client.Client, tables []string) (map[string][]string, error) {
	ops := make([]ovsdb.Operation, len(tables))
	for i, t := range tables {
		ops[i] = ovsdb.Operation{Op: ovsdb.OperationSelect, Table: t, Columns: []string{"_uuid"}}
	}
	results, err := c.Transact(ctx, ops...)
	if err != nil {
		return nil, fmt.Errorf("read NB: %w", err)
	}
	if len(results) < len(ops) {
		return nil, fmt.Errorf("read NB: %d results for %d operations", len(results), len(ops))
	}
	out := map[string][]string{}
	for i, r := range results {
		if i >= len(tables) {
			break
		}
		if r.Error != "" {
			return nil, fmt.Errorf("read NB %s: %s: %s", tables[i], r.Error, r.Details)
		}
		for _, row := range r.Rows {
			if u, ok := row["_uuid"].(ovsdb.UUID); ok {
				out[tables[i]] = append(out[tables[i]], u.GoUUID)
			}
		}
	}
	return out, nil
}

var uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// resultError reports the first failed operation of a transaction, naming
// the fixture rows involved.
func resultError(snap *Snapshot, ops []ovsdb.Operation, results []ovsdb.OperationResult) error {
	for i, r := range results {
		if r.Error == "" {
			continue
		}
		msg := r.Error
		if r.Details != "" {
			msg += ": " + r.Details
		}
		if i < len(ops) {
			op := ops[i]
			what := op.Op + " " + op.Table
			if op.UUID != "" {
				what += " " + op.UUID
			}
			msg = what + ": " + msg
		}
		return fmt.Errorf("NB transaction failed, nothing written: %s%s", msg, origins(snap, msg))
	}
	if len(results) < len(ops) {
		return fmt.Errorf("NB transaction: %d results for %d operations", len(results), len(ops))
	}
	return nil
}

// origins names where the snapshot rows whose UUIDs occur in msg came from.
func origins(snap *Snapshot, msg string) string {
	var out []string
	seen := map[string]bool{}
	for _, u := range uuidRE.FindAllString(msg, -1) {
		if o, ok := snap.Origin[u]; ok && !seen[u] {
			seen[u] = true
			out = append(out, u+" from "+o)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " (" + strings.Join(out, "; ") + ")"
}
