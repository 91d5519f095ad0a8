package ovsdbconn

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"time"
)

// listDatabases asks the OVSDB server at remote which databases it serves
// (RFC 7047 list_dbs), to explain a connection to the wrong server.
func listDatabases(ctx context.Context, remote string, tlsCfg *tls.Config, timeout time.Duration) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	scheme, addr, _ := strings.Cut(remote, ":")
	var (
		c   net.Conn
		err error
	)
	switch scheme {
	case "unix":
		c, err = (&net.Dialer{}).DialContext(ctx, "unix", addr)
	case "tcp":
		c, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	case "ssl":
		if tlsCfg == nil {
			return nil, fmt.Errorf("no TLS configuration")
		}
		c, err = (&tls.Dialer{Config: tlsCfg}).DialContext(ctx, "tcp", addr)
	default:
		return nil, fmt.Errorf("unknown remote %q", remote)
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if err := json.NewEncoder(c).Encode(map[string]any{"method": "list_dbs", "params": []any{}, "id": 1}); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(c)
	for {
		var msg struct {
			ID     any             `json:"id"`
			Result []string        `json:"result"`
			Error  json.RawMessage `json:"error"`
			Method string          `json:"method"`
		}
		if err := dec.Decode(&msg); err != nil {
			return nil, err
		}
		if msg.Method != "" { // a request from the server (echo): ignore
			continue
		}
		if len(msg.Error) > 0 && string(msg.Error) != "null" {
			return nil, fmt.Errorf("list_dbs: %s", msg.Error)
		}
		return msg.Result, nil
	}
}
