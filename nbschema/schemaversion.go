package nbschema

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aclc/aclc/internal/ovsdbconn"
)

// SchemaVersion returns the version of the NB schema that the live NB of
// opts serves ("7.18.0"): what tells the OVN release the NB belongs to
// (release.ByNBSchema).
func SchemaVersion(ctx context.Context, opts Options) (string, error) {
	conn, remote, err := ovsdbconn.DialRaw(ctx, nbTarget, opts.conn())
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(opts.readTimeout())); err != nil {
		return "", err
	}
	res, err := ovsdbconn.Call(conn, "get_schema", []any{nbTarget.DB})
	if err != nil {
		return "", fmt.Errorf("NB at %s: get_schema: %w", remote, err)
	}
	var s struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(res, &s); err != nil || s.Version == "" {
		return "", fmt.Errorf("NB at %s: get_schema: no schema version in the reply", remote)
	}
	return s.Version, nil
}
