package ovsdbconn

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
	deadline := time.Now().Add(timeout)
	for {
		c, remote, again, err := dialRawOnce(ctx, t, opts, remotes, tlsCfg, timeout)
		if !again || time.Now().After(deadline) || ctx.Err() != nil {
			return c, remote, err
		}
		// Only followers (or members cut off from their cluster) answered:
		// an election may be under way. Ask again, as ovn-nbctl does,
		// until the timeout.
		time.Sleep(100 * time.Millisecond)
	}
}

// dialRawOnce tries each remote once. again reports that the only
// remotes serving t.DB were cluster members that may not be used (a
// follower under leader-only, or a member not connected to its cluster):
// worth another round.
func dialRawOnce(ctx context.Context, t Target, opts Options, remotes []string, tlsCfg *tls.Config, timeout time.Duration) (net.Conn, string, bool, error) {
	var (
		errs    []RemoteError
		found   []string
		members []string
		hint    string
		muted   bool
	)
	for _, r := range remotes {
		c, dbs, err := dialList(ctx, r, tlsCfg, timeout)
		if err != nil {
			if isTimeout(err) {
				muted = true
			}
			errs = append(errs, RemoteError{r, err})
			continue
		}
		if slices.Contains(dbs, t.DB) {
			why, err := usable(c, t.DB, opts, timeout)
			if err != nil {
				c.Close()
				errs = append(errs, RemoteError{r, err})
				continue
			}
			if why == "" {
				return c, r, false, nil
			}
			c.Close()
			members = append(members, r+" "+why)
			errs = append(errs, RemoteError{r, errors.New(why)})
			continue
		}
		c.Close()
		found = append(found, fmt.Sprintf("%s serves %s", r, strings.Join(dbs, ", ")))
		if h := otherDatabase(t, dbs); h != "" {
			hint = h
		}
	}
	where := strings.Join(remotes, ",")
	switch {
	case len(members) > 0:
		advice := ""
		if !opts.NoLeaderOnly && slices.ContainsFunc(members, func(m string) bool { return strings.HasSuffix(m, "is a follower") }) {
			advice = " (--no-leader-only reads from a follower)"
		}
		return nil, "", true, unreachable(t, fmt.Sprintf("no usable %s cluster member at %s: %s%s", t.Label, where, strings.Join(members, "; "), advice), errs)
	case len(found) > 0:
		return nil, "", false, fmt.Errorf("%s has no %s database: %s%s", where, t.DB, strings.Join(found, "; "), hint)
	case muted:
		return nil, "", false, unreachable(t, fmt.Sprintf("%s at %s did not answer within %v (--timeout): %s", t.Label, where, timeout, joinRemote(errs)), errs)
	}
	return nil, "", false, unreachable(t, fmt.Sprintf("cannot reach %s at %s: %s", t.Label, where, joinRemote(errs)), errs)
}

// usable says why the server on c may not be read for db ("" if it may):
// a clustered member must be connected to its cluster, and be the leader
// unless opts.NoLeaderOnly — a follower may lag, and one cut off from its
// cluster may serve old data indefinitely. ovn-nbctl and ovn-northd read
// from the leader by default too.
func usable(c net.Conn, db string, opts Options, timeout time.Duration) (string, error) {
	c.SetDeadline(time.Now().Add(timeout))
	defer c.SetDeadline(time.Time{})
	role, err := roleOf(c, db)
	switch {
	case err != nil:
		return "", err
	case !role.clustered:
		return "", nil
	case !role.connected:
		return "is not connected to its cluster", nil
	case !role.leader && !opts.NoLeaderOnly:
		return "is a follower", nil
	}
	return "", nil
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
	nc, err := dialRemote(ctx, remote, tlsCfg)
	if err != nil {
		return nil, nil, err
	}
	c := &bufConn{Conn: nc}
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

// listDBs sends list_dbs on c and returns the reply.
func listDBs(c net.Conn) ([]string, error) {
	raw, err := call(c, "list_dbs", []any{})
	if err != nil {
		return nil, err
	}
	var dbs []string
	if err := json.Unmarshal(raw, &dbs); err != nil {
		return nil, fmt.Errorf("list_dbs reply: %w", err)
	}
	return dbs, nil
}

// call sends one JSON-RPC request on c and returns its result, answering
// the server's echo requests meanwhile. It reads byte by byte what it
// needs only, so that the connection can be used for further requests.
func call(c net.Conn, method string, params any) (json.RawMessage, error) {
	if err := json.NewEncoder(c).Encode(map[string]any{"method": method, "params": params, "id": method}); err != nil {
		return nil, err
	}
	for {
		raw, err := readMessage(c)
		if err != nil {
			return nil, err
		}
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if err := json.Unmarshal(raw, &msg); err != nil {
			return nil, fmt.Errorf("%s reply: %w", method, err)
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
			return nil, fmt.Errorf("%s: %s", method, msg.Error)
		}
		return msg.Result, nil
	}
}

// clusterRole is what a server says of one of its databases in its
// _Server database: clustered or not and, if clustered, whether it is the
// leader and whether it is connected to the rest of its cluster.
type clusterRole struct {
	clustered, leader, connected bool
}

// roleOf asks the server on c for its role for db. A server without a
// _Server database (before Open vSwitch 2.9) is taken as standalone.
func roleOf(c net.Conn, db string) (clusterRole, error) {
	raw, err := call(c, "transact", []any{"_Server", map[string]any{
		"op": "select", "table": "Database", "where": []any{[]any{"name", "==", db}},
		"columns": []string{"model", "leader", "connected"},
	}})
	if err != nil {
		if strings.Contains(err.Error(), "unknown database") {
			return clusterRole{}, nil
		}
		return clusterRole{}, err
	}
	var res []struct {
		Rows []struct {
			Model     string `json:"model"`
			Leader    bool   `json:"leader"`
			Connected bool   `json:"connected"`
		} `json:"rows"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return clusterRole{}, fmt.Errorf("_Server reply: %w", err)
	}
	if len(res) != 1 || res[0].Error != "" || len(res[0].Rows) != 1 {
		return clusterRole{}, nil
	}
	r := res[0].Rows[0]
	if r.Model != "clustered" {
		return clusterRole{}, nil
	}
	return clusterRole{clustered: true, leader: r.Leader, connected: r.Connected}, nil
}

// bufConn is a connection from DialRaw: the handshake reads from it in
// chunks, and Read hands out what it read past the handshake's last
// message before reading from the connection again.
type bufConn struct {
	net.Conn
	pending []byte
}

func (c *bufConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// nextByte returns the next byte from c: a bufConn's pending bytes, read
// in chunks; any other connection's a byte at a time.
func nextByte(c net.Conn) (byte, error) {
	bc, ok := c.(*bufConn)
	if !ok {
		var b [1]byte
		_, err := io.ReadFull(c, b[:])
		return b[0], err
	}
	for len(bc.pending) == 0 {
		buf := make([]byte, 64<<10)
		n, err := bc.Conn.Read(buf)
		if n == 0 && err != nil {
			return 0, err
		}
		bc.pending = buf[:n]
	}
	b := bc.pending[0]
	bc.pending = bc.pending[1:]
	return b, nil
}

// readMessage reads one JSON value (an object) from c; from a bufConn it
// keeps what follows for the next read, from another connection it reads
// nothing past the value. It is meant for the small messages of the
// handshake.
func readMessage(c net.Conn) ([]byte, error) {
	var (
		buf  []byte
		scan MessageScanner
	)
	for {
		ch, err := nextByte(c)
		if err != nil {
			return nil, err
		}
		in, end, err := scan.Step(ch)
		if err != nil {
			return nil, err
		}
		if !in {
			continue
		}
		buf = append(buf, ch)
		if len(buf) > 1<<20 {
			return nil, fmt.Errorf("handshake message longer than 1 MiB")
		}
		if end {
			return buf, nil
		}
	}
}

// MessageScanner splits a stream of JSON-RPC messages (JSON objects, as
// OVSDB sends them) without decoding them.
type MessageScanner struct {
	depth             int
	inString, escaped bool
}

// Step takes the stream's next byte: in reports that it belongs to a
// message (not whitespace between two), end that it closes one. A byte
// other than whitespace or '{' between messages is an error.
func (s *MessageScanner) Step(ch byte) (in, end bool, err error) {
	if s.depth == 0 {
		switch ch {
		case ' ', '\n', '\r', '\t':
			return false, false, nil
		case '{':
		default:
			return false, false, fmt.Errorf("unexpected %q from server, want a JSON-RPC message", ch)
		}
	}
	switch {
	case s.inString && s.escaped:
		s.escaped = false
	case s.inString && ch == '\\':
		s.escaped = true
	case s.inString && ch == '"':
		s.inString = false
	case s.inString:
	case ch == '"':
		s.inString = true
	case ch == '{' || ch == '[':
		s.depth++
	case ch == '}' || ch == ']':
		s.depth--
	}
	return true, s.depth == 0, nil
}

// Call sends one JSON-RPC request on a connection from DialRaw and returns
// its result (answering the server's echo requests meanwhile).
func Call(c net.Conn, method string, params any) (json.RawMessage, error) {
	return call(c, method, params)
}
