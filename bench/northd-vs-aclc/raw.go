package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/aclc/aclc/nbschema"
)

// rawMethods are the read methods the raw read is timed with: the floor
// is the faster of the two (the one transaction LoadLive reads with, and
// the pipelined selects it can read with, nbschema/pipelined.go).
var rawMethods = []string{"pipelined", "transact"}

// rawRead sends, over the unix socket of remote, what nbschema.LoadLive
// sends with read method method for the -release (the same tables and
// columns, nbschema.ReadRequest), and reads the replies only far enough to
// find their ends (the bytes of each JSON value: brackets counted outside
// strings), building nothing. It is the floor of any NB client's read:
// ovsdb-server producing the rows plus the transfer. It returns the time
// from dialing until the last reply's last byte, and the replies' size.
func rawRead(ctx context.Context, remote, method string) (time.Duration, int, error) {
	path, ok := strings.CutPrefix(remote, "unix:")
	if !ok {
		return 0, 0, fmt.Errorf("raw read: %s is not a unix: remote", remote)
	}
	req, replies, err := nbschema.ReadRequest(target, method)
	if err != nil {
		return 0, 0, err
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
	if _, err := conn.Write(req); err != nil {
		return 0, 0, err
	}
	r := bufio.NewReaderSize(conn, 256<<10)
	n := 0
	for replies > 0 {
		msg, request, err := jsonValue(r)
		n += msg
		if err != nil {
			return 0, 0, fmt.Errorf("raw read: %w", err)
		}
		// The server's echo requests are not replies (a quiet NB
		// sends no monitor updates).
		if !request {
			replies--
		}
	}
	return time.Since(t0), n, nil
}

// jsonValue consumes one JSON object or array from r and returns its size
// in bytes, and whether it is a request from the server (its first 64
// bytes, or as many as have arrived, have a "method" member).
func jsonValue(r *bufio.Reader) (int, bool, error) {
	// Peek only what has arrived: the last reply may be shorter than
	// the head looked at, and nothing follows it.
	if _, err := r.Peek(1); err != nil {
		return 0, false, err
	}
	head, _ := r.Peek(min(64, r.Buffered()))
	request := bytes.Contains(head, []byte(`"method"`))
	n, depth, inStr, esc := 0, 0, false, false
	for {
		buf, err := r.Peek(r.Buffered())
		if len(buf) == 0 {
			if _, err = r.Peek(1); err != nil {
				return n, request, err
			}
			continue
		}
		for i, c := range buf {
			switch {
			case esc:
				esc = false
			case inStr:
				if c == '\\' {
					esc = true
				} else if c == '"' {
					inStr = false
				}
			case c == '"':
				inStr = true
			case c == '{' || c == '[':
				depth++
			case c == '}' || c == ']':
				if depth--; depth == 0 {
					r.Discard(i + 1)
					return n + i + 1, request, nil
				}
			}
		}
		n += len(buf)
		r.Discard(len(buf))
	}
}
