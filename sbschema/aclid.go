package sbschema

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aclc/aclc/internal/ovsdbconn"
)

// LoadACLIDs reads the SB ACL_ID table (25.03+): the id northd allocated
// to each persist-established ACL, by ACL UUID (the row's UUID is the
// ACL's). An SB without the table (23.03) is an error naming it.
func LoadACLIDs(ctx context.Context, opts ovsdbconn.Options) (map[string]int, error) {
	var rows []struct {
		UUID [2]string `json:"_uuid"`
		ID   int       `json:"id"`
	}
	if err := selectAll(ctx, opts, "ACL_ID", []string{"_uuid", "id"}, &rows, " (an SB older than OVN 25.03 has no ACL_ID table)"); err != nil {
		return nil, err
	}
	ids := make(map[string]int, len(rows))
	for _, r := range rows {
		ids[r.UUID[1]] = r.ID
	}
	return ids, nil
}

// selectAll reads columns of every row of an SB table into rows (a
// pointer to a slice of structs with json tags), in one raw OVSDB select.
// hint is added to a server error.
func selectAll(ctx context.Context, opts ovsdbconn.Options, table string, columns []string, rows any, hint string) error {
	c, remote, err := ovsdbconn.DialRaw(ctx, sbTarget, opts)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(max(6*opts.TimeoutOrDefault(), 60e9)))
	res, err := ovsdbconn.Call(c, "transact", []any{"OVN_Southbound",
		map[string]any{"op": "select", "table": table, "where": []any{}, "columns": columns}})
	if err != nil {
		return fmt.Errorf("SB %s: %s: %w", remote, table, err)
	}
	var reply []struct {
		Rows    json.RawMessage `json:"rows"`
		Error   string          `json:"error"`
		Details string          `json:"details"`
	}
	if err := json.Unmarshal(res, &reply); err != nil {
		return fmt.Errorf("SB %s: %s reply: %w", remote, table, err)
	}
	if len(reply) != 1 {
		return fmt.Errorf("SB %s: %s: %d results to one operation", remote, table, len(reply))
	}
	if reply[0].Error != "" {
		return fmt.Errorf("SB %s: %s: %s: %s%s", remote, table, reply[0].Error, reply[0].Details, hint)
	}
	if err := json.Unmarshal(reply[0].Rows, rows); err != nil {
		return fmt.Errorf("SB %s: %s rows: %w", remote, table, err)
	}
	return nil
}
