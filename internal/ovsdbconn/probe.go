package ovsdbconn

import (
	"context"
	"crypto/tls"
	"time"
)

// listDatabases asks the OVSDB server at remote which databases it serves
// (RFC 7047 list_dbs), to explain a connection to the wrong server.
func listDatabases(ctx context.Context, remote string, tlsCfg *tls.Config, timeout time.Duration) ([]string, error) {
	c, dbs, err := dialList(ctx, remote, tlsCfg, timeout)
	if err != nil {
		return nil, err
	}
	c.Close()
	return dbs, nil
}
