package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/aclc/aclc/nbschema"
)

// rawRead sends, over the unix socket of remote, the one request that
// nbschema.LoadLive sends for the -release (the same tables and columns,
// nbschema.ReadRequest), and reads the reply only far enough to find its
// end (the bytes of one JSON value: brackets counted outside strings),
// building nothing. It is the floor of any NB client's read: ovsdb-server
// producing the rows plus the transfer. It returns the time from dialing
// until the reply's last byte, and the reply's size.
func rawRead(ctx context.Context, remote string) (time.Duration, int, error) {
	path, ok := strings.CutPrefix(remote, "unix:")
	if !ok {
		return 0, 0, fmt.Errorf("raw read: %s is not a unix: remote", remote)
	}
	req, err := nbschema.ReadRequest(target)
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
	for {
		msg, err := jsonValue(r)
		n += msg
		if err != nil {
			return 0, 0, fmt.Errorf("raw read: %w", err)
		}
		// The server's echo requests are small; the reply is not.
		if msg > 1<<10 {
			return time.Since(t0), n, nil
		}
	}
}

// jsonValue consumes one JSON object or array from r and returns its size
// in bytes.
func jsonValue(r *bufio.Reader) (int, error) {
	n, depth, inStr, esc := 0, 0, false, false
	for {
		buf, err := r.Peek(r.Buffered())
		if len(buf) == 0 {
			if _, err = r.Peek(1); err != nil {
				return n, err
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
					return n + i + 1, nil
				}
			}
		}
		n += len(buf)
		r.Discard(len(buf))
	}
}
