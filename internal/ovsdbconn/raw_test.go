package ovsdbconn

import (
	"bufio"
	"io"
	"net"
	"testing"
)

// TestCallKeepsWhatFollows checks that call, reading the handshake in
// chunks from a bufConn, leaves the bytes after the reply (here the next
// message, sent in the same write) for the connection's next Read.
func TestCallKeepsWhatFollows(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	go func() {
		defer server.Close()
		r := bufio.NewReader(server)
		if _, err := r.ReadBytes('\n'); err != nil { // the request
			return
		}
		server.Write([]byte(`{"id":"list_dbs","result":["OVN_Northbound"],"error":null} {"next":"message"}`))
	}()
	c := &bufConn{Conn: client}
	dbs, err := listDBs(c)
	if err != nil || len(dbs) != 1 || dbs[0] != "OVN_Northbound" {
		t.Fatalf("listDBs: %v, %v", dbs, err)
	}
	rest, err := io.ReadAll(c)
	if err != nil || string(rest) != ` {"next":"message"}` {
		t.Fatalf("after the reply: %q, %v", rest, err)
	}
}
