package nbschema

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/aclc/aclc/internal/ovsdbconn"
	"github.com/aclc/aclc/release"
)

// Which release a live NB belongs to. northd writes its exact version into
// NB_Global options:northd_internal_version on every run; an NB no northd
// has run on only tells its schema version, which names the series.
// release.Detect decides; what it assumed or found odd goes to the log
// (stderr), a version aclc cannot vouch for is an error naming the nearest
// supported ones and --ovn-version.

// schemaVersion asks the NB on conn for its schema version (get_schema).
func schemaVersion(conn net.Conn, timeout time.Duration) (string, error) {
	conn.SetDeadline(time.Now().Add(timeout))
	defer conn.SetDeadline(time.Time{})
	res, err := ovsdbconn.Call(conn, "get_schema", []any{nbTarget.DB})
	if err != nil {
		return "", fmt.Errorf("get_schema: %w", err)
	}
	var s struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(res, &s); err != nil {
		return "", fmt.Errorf("get_schema reply: %w", err)
	}
	return s.Version, nil
}

// northdVersion reads NB_Global options:northd_internal_version on conn,
// "" when the NB has no NB_Global row or the option is unset.
func northdVersion(conn net.Conn, timeout time.Duration) (string, error) {
	conn.SetDeadline(time.Now().Add(timeout))
	defer conn.SetDeadline(time.Time{})
	res, err := ovsdbconn.Call(conn, "transact", []any{nbTarget.DB,
		map[string]any{"op": "select", "table": "NB_Global", "where": []any{}, "columns": []string{"options"}}})
	if err != nil {
		return "", fmt.Errorf("read NB_Global: %w", err)
	}
	var reply []struct {
		Rows []struct {
			Options json.RawMessage `json:"options"`
		} `json:"rows"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(res, &reply); err != nil || len(reply) != 1 {
		return "", fmt.Errorf("read NB_Global: unexpected reply %.200s", res)
	}
	if reply[0].Error != "" {
		return "", fmt.Errorf("read NB_Global: %s", reply[0].Error)
	}
	if len(reply[0].Rows) == 0 {
		return "", nil
	}
	opts, err := decodeOVSMap(reply[0].Rows[0].Options)
	if err != nil {
		return "", fmt.Errorf("read NB_Global options: %w", err)
	}
	return opts[release.NorthdVersionKey], nil
}

// decodeOVSMap decodes an OVSDB string map ["map", [[k, v], ...]].
func decodeOVSMap(raw json.RawMessage) (map[string]string, error) {
	var m []json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || len(m) != 2 {
		return nil, fmt.Errorf("not a map: %.100s", raw)
	}
	var pairs [][2]string
	if err := json.Unmarshal(m[1], &pairs); err != nil {
		return nil, fmt.Errorf("not a string map: %.100s", raw)
	}
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		out[p[0]] = p[1]
	}
	return out, nil
}

// detection is what detectOn settled.
type detection struct {
	release *release.Release
	how     string // where the version came from (release.Detection.How)
	schema  string // the schema whose model reads the NB
}

// detectOn settles the release of the NB on conn (remote names it): its
// schema version and northd version, or override. It returns the release,
// how it was found, and the schema whose model reads the NB (its own, or
// for an unknown schema read with --ovn-version, that version's).
func detectOn(conn net.Conn, remote string, timeout time.Duration, override *release.Release) (detection, error) {
	schema, err := schemaVersion(conn, timeout)
	if err != nil {
		return detection{}, fmt.Errorf("NB at %s: %w", remote, err)
	}
	read := schema // the schema whose model reads the NB
	if _, err := ClientModelFor(schema); err != nil {
		if override == nil {
			return detection{}, fmt.Errorf("NB at %s: %w", remote, &release.UnknownSchemaError{Version: schema})
		}
		// --ovn-version: read it with that version's model (libovsdb
		// refuses it if the NB lacks one of its columns).
		read = override.NBSchema
	}
	nv, err := northdVersion(conn, timeout)
	if err != nil {
		return detection{}, fmt.Errorf("NB at %s: %w", remote, err)
	}
	d, err := release.Detect(schema, nv, override)
	if err != nil {
		return detection{}, fmt.Errorf("NB at %s: %w", remote, err)
	}
	for _, n := range d.Notes {
		slog.Warn(n, "nb", remote)
	}
	return detection{d.Release, d.How, read}, nil
}

// DetectRelease connects to the NB of opts and returns its release (see
// detectOn; opts.Release overrides it, with a warning when they differ).
func DetectRelease(ctx context.Context, opts Options) (*release.Release, error) {
	d, err := detectConnect(ctx, opts)
	return d.release, err
}

func detectConnect(ctx context.Context, opts Options) (detection, error) {
	conn, remote, err := ovsdbconn.DialRaw(ctx, nbTarget, opts.conn())
	if err != nil {
		return detection{}, err
	}
	defer conn.Close()
	return detectOn(conn, remote, opts.timeout(), opts.Release)
}
