package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"time"
)

// rawTables are the NB tables aclc reads (nbschema's monitor), all columns.
var rawTables = []string{"NB_Global", "Logical_Switch", "Logical_Switch_Port", "Port_Group", "Address_Set", "ACL",
	"Load_Balancer", "Load_Balancer_Group", "Meter", "Meter_Band", "Copp", "DHCP_Options", "DNS",
	"Logical_Router", "Logical_Router_Port"}

// rawMonitor sends one OVSDB monitor request for rawTables over the unix
// socket of remote and waits for the whole reply, which it only scans as
// JSON. It is the floor of any NB client's initial read: ovsdb-server
// serializing the rows plus the transfer, without building any objects.
func rawMonitor(ctx context.Context, remote string) (time.Duration, int, error) {
	path, ok := strings.CutPrefix(remote, "unix:")
	if !ok {
		return 0, 0, fmt.Errorf("raw monitor: %s is not a unix: remote", remote)
	}
	t0 := time.Now()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", path)
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	reqs := map[string]any{}
	for _, t := range rawTables {
		reqs[t] = map[string]any{}
	}
	req := map[string]any{"id": 1, "method": "monitor", "params": []any{"OVN_Northbound", nil, reqs}}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return 0, 0, err
	}
	cr := &countingReader{r: conn}
	dec := json.NewDecoder(cr)
	for {
		var msg struct {
			ID     any             `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
			Error  any             `json:"error"`
		}
		if err := dec.Decode(&msg); err != nil {
			return 0, 0, fmt.Errorf("raw monitor: %w", err)
		}
		if msg.Method != "" { // a notification or an echo: not our reply
			continue
		}
		if msg.Error != nil {
			return 0, 0, fmt.Errorf("raw monitor: %v", msg.Error)
		}
		return time.Since(t0), cr.n, nil
	}
}

type countingReader struct {
	r interface{ Read([]byte) (int, error) }
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}
