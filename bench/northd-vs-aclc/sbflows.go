package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"

	"github.com/aclc/aclc/lflow"
)

// sbACLFlows reads the ACL-stage flows northd wrote into the SB with one
// OVSDB transaction of selects (one per ACL-stage table, plus the
// datapath groups and bindings) over the unix socket of remote, and
// expands them per logical switch as `ovn-sbctl lflow-list` prints them: a
// Logical_Flow row shared through a Logical_DP_Group is one flow on each
// of its datapaths. Router datapaths are left out. It is much cheaper than
// lflow-list, which reads and prints every flow of every stage.
func sbACLFlows(ctx context.Context, remote string, lay *lflow.Layout) (l *lflow.Listing, rows int, err error) {
	path, ok := strings.CutPrefix(remote, "unix:")
	if !ok {
		return nil, 0, fmt.Errorf("SB select: %s is not a unix: remote", remote)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return nil, 0, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	ops := []any{
		map[string]any{"op": "select", "table": "Datapath_Binding", "where": []any{}, "columns": []string{"_uuid", "external_ids"}},
		map[string]any{"op": "select", "table": "Logical_DP_Group", "where": []any{}, "columns": []string{"_uuid", "datapaths"}},
	}
	for _, st := range lay.ACLStages() {
		ops = append(ops, map[string]any{"op": "select", "table": "Logical_Flow",
			"where": []any{
				[]any{"pipeline", "==", st.Pipeline().String()},
				[]any{"table_id", "==", st.Table()},
			},
			"columns": []string{"_uuid", "logical_datapath", "logical_dp_group", "priority", "match", "actions"}})
	}
	req := map[string]any{"id": 1, "method": "transact", "params": append([]any{"OVN_Southbound"}, ops...)}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return nil, 0, err
	}
	type row map[string]json.RawMessage
	var reply struct {
		Method string `json:"method"`
		Result []struct {
			Rows  []row  `json:"rows"`
			Error string `json:"error"`
		} `json:"result"`
		Error any `json:"error"`
	}
	dec := json.NewDecoder(conn)
	for {
		reply.Method = ""
		if err := dec.Decode(&reply); err != nil {
			return nil, 0, fmt.Errorf("SB select: %w", err)
		}
		if reply.Method == "" {
			break
		}
	}
	if reply.Error != nil {
		return nil, 0, fmt.Errorf("SB select: %v", reply.Error)
	}
	if len(reply.Result) != len(ops) {
		return nil, 0, fmt.Errorf("SB select: %d results for %d operations", len(reply.Result), len(ops))
	}
	for _, r := range reply.Result {
		if r.Error != "" {
			return nil, 0, fmt.Errorf("SB select: %s", r.Error)
		}
	}

	// Logical switches by Datapath_Binding UUID.
	dps := map[string]*lflow.Datapath{}
	for _, r := range reply.Result[0].Rows {
		ids, err := ovsMap(r["external_ids"])
		if err != nil {
			return nil, 0, err
		}
		if ids["logical-switch"] == "" {
			continue
		}
		u, err := ovsUUID(r["_uuid"])
		if err != nil {
			return nil, 0, err
		}
		dps[u] = &lflow.Datapath{Name: ids["name"], Name2: ids["name2"], UUID: u}
	}
	groups := map[string][]string{}
	for _, r := range reply.Result[1].Rows {
		u, err := ovsUUID(r["_uuid"])
		if err != nil {
			return nil, 0, err
		}
		if groups[u], err = ovsUUIDSet(r["datapaths"]); err != nil {
			return nil, 0, err
		}
	}
	for i, st := range lay.ACLStages() {
		for _, r := range reply.Result[2+i].Rows {
			rows++
			var f lflow.Flow
			f.Stage = st
			if err := json.Unmarshal(r["priority"], &f.Priority); err != nil {
				return nil, 0, err
			}
			if err := json.Unmarshal(r["match"], &f.Match); err != nil {
				return nil, 0, err
			}
			if err := json.Unmarshal(r["actions"], &f.Actions); err != nil {
				return nil, 0, err
			}
			on, err := ovsUUIDSet(r["logical_datapath"])
			if err != nil {
				return nil, 0, err
			}
			grp, err := ovsUUIDSet(r["logical_dp_group"])
			if err != nil {
				return nil, 0, err
			}
			for _, g := range grp {
				on = append(on, groups[g]...)
			}
			for _, u := range on {
				if d := dps[u]; d != nil {
					d.Flows = append(d.Flows, f)
				}
			}
		}
	}
	l = &lflow.Listing{}
	for _, d := range dps {
		if len(d.Flows) > 0 {
			l.Datapaths = append(l.Datapaths, d)
		}
	}
	l.Sort()
	return l, rows, nil
}

// ovsUUID decodes ["uuid", "..."].
func ovsUUID(raw json.RawMessage) (string, error) {
	var v []string
	if err := json.Unmarshal(raw, &v); err != nil || len(v) != 2 || v[0] != "uuid" {
		return "", fmt.Errorf("SB select: not a uuid: %s", raw)
	}
	return v[1], nil
}

// ovsUUIDSet decodes a set of UUIDs: ["uuid", "..."] or ["set", [...]].
func ovsUUIDSet(raw json.RawMessage) ([]string, error) {
	var v []json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil || len(v) != 2 {
		return nil, fmt.Errorf("SB select: not a set: %s", raw)
	}
	var kind string
	json.Unmarshal(v[0], &kind)
	if kind == "uuid" {
		u, err := ovsUUID(raw)
		return []string{u}, err
	}
	var elems []json.RawMessage
	if kind != "set" || json.Unmarshal(v[1], &elems) != nil {
		return nil, fmt.Errorf("SB select: not a set: %s", raw)
	}
	out := make([]string, 0, len(elems))
	for _, e := range elems {
		u, err := ovsUUID(e)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}

// ovsMap decodes ["map", [[k, v], ...]] with string keys and values.
func ovsMap(raw json.RawMessage) (map[string]string, error) {
	var v []json.RawMessage
	var kind string
	var pairs [][2]string
	if json.Unmarshal(raw, &v) != nil || len(v) != 2 || json.Unmarshal(v[0], &kind) != nil || kind != "map" ||
		json.Unmarshal(v[1], &pairs) != nil {
		return nil, fmt.Errorf("SB select: not a string map: %s", raw)
	}
	m := make(map[string]string, len(pairs))
	for _, p := range pairs {
		m[p[0]] = p[1]
	}
	return m, nil
}
