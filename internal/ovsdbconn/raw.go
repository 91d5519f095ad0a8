package ovsdbconn

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"
)

// DialRaw connects to the first remote of opts that serves t.DB, for a
// caller that speaks OVSDB JSON-RPC (RFC 7047) itself, and returns the
// connection and that remote. It tries the remotes in order, asking each
// (list_dbs) which databases it serves; the errors are those of Dial: an
// unreachable list, a list whose servers serve other databases (named), a
// server that does not answer within the timeout, bad TLS files. The
// connection has no deadline set; close it when done.
func DialRaw(ctx context.Context, t Target, opts Options) (net.Conn, string, error) {
	remotes, err := opts.RemoteList(t)
	if err != nil {
		return nil, "", err
	}
	var tlsCfg *tls.Config
	if slices.ContainsFunc(remotes, func(r string) bool { return strings.HasPrefix(r, "ssl:") }) {
		if tlsCfg, err = opts.TLSConfig(t.Label); err != nil {
			return nil, "", err
		}
	}
	timeout := opts.TimeoutOrDefault()
	var (
		errs  []error
		found []string
		hint  string
		muted bool
	)
	for _, r := range remotes {
		c, dbs, err := dialList(ctx, r, tlsCfg, timeout)
		if err != nil {
			if isTimeout(err) {
				muted = true
			}
			errs = append(errs, fmt.Errorf("%s: %w", r, err))
			continue
		}
		if slices.Contains(dbs, t.DB) {
			return c, r, nil
		}
		c.Close()
		found = append(found, fmt.Sprintf("%s serves %s", r, strings.Join(dbs, ", ")))
		if h := otherDatabase(t, dbs); h != "" {
			hint = h
		}
	}
	where := strings.Join(remotes, ",")
	switch {
	case len(found) > 0:
		return nil, "", fmt.Errorf("%s has no %s database: %s%s", where, t.DB, strings.Join(found, "; "), hint)
	case muted:
		return nil, "", fmt.Errorf("%s at %s did not answer within %v (--timeout): %w", t.Label, where, timeout, errors.Join(errs...))
	}
	return nil, "", fmt.Errorf("cannot reach %s at %s: %w", t.Label, where, errors.Join(errs...))
}

// otherDatabase returns the hint for a server that serves dbs but not t.DB:
// " (that is the OVN Southbound database; the NB is ...)", or "".
func otherDatabase(t Target, dbs []string) string {
	hint := ""
	for _, other := range []struct{ db, what string }{
		{"OVN_Northbound", "the OVN Northbound database"},
		{"OVN_Southbound", "the OVN Southbound database"},
		{"Open_vSwitch", "the Open vSwitch database"},
	} {
		if other.db != t.DB && slices.Contains(dbs, other.db) {
			hint = " (that is " + other.what + t.Hint + ")"
		}
	}
	return hint
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// dialList connects to remote and asks it which databases it serves, all
// within timeout. On success the connection is returned open, without a
// deadline.
func dialList(ctx context.Context, remote string, tlsCfg *tls.Config, timeout time.Duration) (net.Conn, []string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, err := dialRemote(ctx, remote, tlsCfg)
	if err != nil {
		return nil, nil, err
	}
	dl, _ := ctx.Deadline()
	c.SetDeadline(dl)
	dbs, err := listDBs(c)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	c.SetDeadline(time.Time{})
	return c, dbs, nil
}

// dialRemote opens a connection to an active OVSDB remote (unix:, tcp:,
// ssl:); for ssl: the TLS handshake is done.
func dialRemote(ctx context.Context, remote string, tlsCfg *tls.Config) (net.Conn, error) {
	scheme, addr, _ := strings.Cut(remote, ":")
	switch scheme {
	case "unix":
		return (&net.Dialer{}).DialContext(ctx, "unix", addr)
	case "tcp":
		return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	case "ssl":
		if tlsCfg == nil {
			return nil, fmt.Errorf("no TLS configuration")
		}
		return (&tls.Dialer{Config: tlsCfg}).DialContext(ctx, "tcp", addr)
	}
	return nil, fmt.Errorf("unknown remote %q", remote)
}

// listDBs sends list_dbs on c and returns the reply, answering the
// server's echo requests meanwhile. It reads byte by byte what it needs
// only, so that the connection can be used for further requests.
func listDBs(c net.Conn) ([]string, error) {
	if err := json.NewEncoder(c).Encode(map[string]any{"method": "list_dbs", "params": []any{}, "id": "list_dbs"}); err != nil {
		return nil, err
	}
	for {
		raw, err := readMessage(c)
		if err != nil {
			return nil, err
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Result []string        `json:"result"`
			Error  json.RawMessage `json:"error"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(raw, &msg); err != nil {
			return nil, fmt.Errorf("list_dbs reply: %w", err)
		}
		if msg.Method == "echo" {
			reply, _ := json.Marshal(map[string]any{"id": msg.ID, "result": msg.Params, "error": nil})
			if _, err := c.Write(reply); err != nil {
				return nil, err
			}
			continue
		}
		if msg.Method != "" {
			continue
		}
		if len(msg.Error) > 0 && string(msg.Error) != "null" {
			return nil, fmt.Errorf("list_dbs: %s", msg.Error)
		}
		return msg.Result, nil
	}
}

// readMessage reads one JSON value (an object) from c without reading
// past it. It is meant for the small messages of the handshake.
func readMessage(c net.Conn) ([]byte, error) {
	var (
		buf      []byte
		b        [1]byte
		depth    int
		inString bool
		escaped  bool
		started  bool
	)
	for {
		if _, err := c.Read(b[:]); err != nil {
			return nil, err
		}
		ch := b[0]
		if !started {
			if ch == ' ' || ch == '\n' || ch == '\r' || ch == '\t' {
				continue
			}
			if ch != '{' {
				return nil, fmt.Errorf("unexpected %q from server, want a JSON-RPC message", ch)
			}
			started = true
		}
		buf = append(buf, ch)
		if len(buf) > 1<<20 {
			return nil, fmt.Errorf("handshake message longer than 1 MiB")
		}
		switch {
		case inString && escaped:
			escaped = false
		case inString && ch == '\\':
			escaped = true
		case inString && ch == '"':
			inString = false
		case inString:
		case ch == '"':
			inString = true
		case ch == '{' || ch == '[':
			depth++
		case ch == '}' || ch == ']':
			depth--
			if depth == 0 {
				return buf, nil
			}
		}
	}
}
