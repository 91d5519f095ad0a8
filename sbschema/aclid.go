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
	c, remote, err := ovsdbconn.DialRaw(ctx, sbTarget, opts)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(max(6*opts.TimeoutOrDefault(), 60e9)))
	res, err := ovsdbconn.Call(c, "transact", []any{"OVN_Southbound",
		map[string]any{"op": "select", "table": "ACL_ID", "where": []any{}, "columns": []string{"_uuid", "id"}}})
	if err != nil {
		return nil, fmt.Errorf("SB %s: ACL_ID: %w", remote, err)
	}
	var reply []struct {
		Rows []struct {
			UUID [2]string `json:"_uuid"`
			ID   int       `json:"id"`
		} `json:"rows"`
		Error   string `json:"error"`
		Details string `json:"details"`
	}
	if err := json.Unmarshal(res, &reply); err != nil {
		return nil, fmt.Errorf("SB %s: ACL_ID reply: %w", remote, err)
	}
	if len(reply) != 1 {
		return nil, fmt.Errorf("SB %s: ACL_ID: %d results to one operation", remote, len(reply))
	}
	if reply[0].Error != "" {
		return nil, fmt.Errorf("SB %s: ACL_ID: %s: %s (an SB older than OVN 25.03 has no ACL_ID table)", remote, reply[0].Error, reply[0].Details)
	}
	ids := make(map[string]int, len(reply[0].Rows))
	for _, r := range reply[0].Rows {
		ids[r.UUID[1]] = r.ID
	}
	return ids, nil
}
