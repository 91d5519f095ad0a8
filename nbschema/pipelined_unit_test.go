package nbschema_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// pipelinedNB is a fake NB that serves any number of connections as
// ovsdb-server serves the reader's requests: the guard monitor, selects
// answered from rows (JSON arrays of rows by table, filtered by a where
// of column == value), and the one transaction of every table. update
// says, for a connection (counted from 1) and a select (counted from 1),
// whether to send a monitor update before that select's reply; errTable
// names a table whose select fails.
type pipelinedNB struct {
	rows     map[string]string
	update   func(conn, sel int) bool
	errTable string

	mu      sync.Mutex
	methods [][]string // the methods of each connection's requests after the handshake
}

func (f *pipelinedNB) serve(t *testing.T) string {
	l, remote := fakeListener(t)
	go func() {
		for n := 1; ; n++ {
			c, err := l.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.methods = append(f.methods, nil)
			f.mu.Unlock()
			go f.conn(t, n, c)
		}
	}()
	return remote
}

func (f *pipelinedNB) conn(t *testing.T, n int, c net.Conn) {
	defer c.Close()
	dec := json.NewDecoder(c)
	next, ok := fakeHandshake(c, dec)
	sel := 0
	for ok {
		if next.Method != "" {
			f.mu.Lock()
			f.methods[n-1] = append(f.methods[n-1], next.Method)
			f.mu.Unlock()
		}
		var reply string
		switch next.Method {
		case "monitor":
			reply = `{"id":` + string(next.ID) + `,"result":{},"error":null}`
		case "transact":
			var results []string
			for _, op := range next.Params[1:] {
				sel++
				var o struct {
					Table string
					Where [][3]string
				}
				if err := json.Unmarshal(op, &o); err != nil {
					t.Errorf("fake NB: select %s: %v", op, err)
					return
				}
				if o.Table == f.errTable {
					results = append(results, `{"error":"permission error","details":"no"}`)
					continue
				}
				results = append(results, `{"rows":`+filterRows(t, f.rows[o.Table], o.Where)+`}`)
			}
			if f.update != nil && f.update(n, sel) {
				c.Write([]byte(`{"id":null,"method":"update","params":["aclc-guard",{"ACL":{"x":{"new":{}}}}]}`))
			}
			// an echo request between replies, as the server may send
			c.Write([]byte(`{"method":"echo","params":[],"id":"echo"}`))
			reply = `{"id":` + string(next.ID) + `,"result":[` + strings.Join(results, ",") + `],"error":null}`
		case "":
			next = fakeRequest{} // that was the echo reply
			ok = dec.Decode(&next) == nil
			continue
		default:
			t.Errorf("fake NB: unexpected %s", next.Method)
			return
		}
		c.Write([]byte(reply))
		next = fakeRequest{}
		ok = dec.Decode(&next) == nil
	}
}

// filterRows keeps the rows (a JSON array) whose columns equal the
// where's values.
func filterRows(t *testing.T, rows string, where [][3]string) string {
	if rows == "" {
		return "[]"
	}
	var all []map[string]any
	if err := json.Unmarshal([]byte(rows), &all); err != nil {
		t.Fatalf("fake NB rows %s: %v", rows, err)
	}
	var out []map[string]any
	for _, r := range all {
		keep := true
		for _, w := range where {
			if w[1] != "==" || fmt.Sprint(r[w[0]]) != w[2] {
				keep = false
			}
		}
		if keep {
			out = append(out, r)
		}
	}
	b, _ := json.Marshal(out)
	if out == nil {
		return "[]"
	}
	return string(b)
}

// pipelinedRows are the fake NB's rows: ACLs of both directions, a
// switch, a port group.
var pipelinedRows = map[string]string{
	nbdb.ACLTable: `[{"_uuid":["uuid","a2"],"match":"ip4","direction":"to-lport","priority":1001,"action":"drop"},` +
		`{"_uuid":["uuid","a1"],"match":"ip6","direction":"from-lport","priority":1000,"action":"allow"},` +
		`{"_uuid":["uuid","a3"],"match":"tcp","direction":"from-lport","priority":1000,"action":"allow"}]`,
	nbdb.LogicalSwitchTable: `[{"_uuid":["uuid","ls1"],"name":"sw","acls":["set",[["uuid","a1"],["uuid","a2"]]]}]`,
	nbdb.PortGroupTable:     `[{"_uuid":["uuid","pg1"],"name":"pg","acls":["uuid","a3"]}]`,
}

// TestPipelinedRead reads the fake NB with the pipelined selects: the
// same Snapshot as the one transaction; a monitor update before the last
// reply makes LoadLive read again, on a new connection; updates on every
// read make it fall back to the one transaction after three; a select's
// error names its table; LiveHooks.ACL is called once and sees every ACL.
func TestPipelinedRead(t *testing.T) {
	ctx := context.Background()
	opts := func(remote string) nbschema.Options {
		return nbschema.Options{Remotes: remote, Timeout: 5 * time.Second}
	}
	want, err := nbschema.FastRead(ctx, opts((&pipelinedNB{rows: pipelinedRows}).serve(t)), "transact")
	if err != nil {
		t.Fatal(err)
	}
	if len(want.ACLs) != 3 || len(want.Switches) != 1 || len(want.PortGroups) != 1 {
		t.Fatalf("transact read %d ACLs, %d switches, %d port groups", len(want.ACLs), len(want.Switches), len(want.PortGroups))
	}
	for _, buf := range []int{16, 1 << 16} {
		defer nbschema.SetReadBufferSize(buf)()
		got, err := nbschema.FastRead(ctx, opts((&pipelinedNB{rows: pipelinedRows}).serve(t)), "pipelined")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("buffer %d: pipelined differs from transact (-transact +pipelined):\n%s", buf, diff)
		}
	}
	selects := len(nbschema.ReadTables(release.MustLookup("23.03.1"))) + 1 // ACL in two

	tests := []struct {
		name    string
		update  func(conn, sel int) bool
		methods [][]string // of each connection
	}{
		{"quiet", nil, [][]string{pipelinedMethods(selects)}},
		{"commit before the last select", func(conn, sel int) bool { return conn == 1 && sel == selects },
			[][]string{pipelinedMethods(selects), pipelinedMethods(selects)}},
		{"commit after the first select", func(conn, sel int) bool { return conn <= 2 && sel == 2 },
			[][]string{pipelinedMethods(2), pipelinedMethods(2), pipelinedMethods(selects)}},
		{"always", func(conn, sel int) bool { return conn <= 3 },
			[][]string{pipelinedMethods(1), pipelinedMethods(1), pipelinedMethods(1), {"transact"}}},
	}
	defer nbschema.SetReadMethod("pipelined")()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &pipelinedNB{rows: pipelinedRows, update: tt.update}
			calls := 0
			var acls []string
			got, err := nbschema.LoadLiveWith(ctx, opts(f.serve(t)), nbschema.LiveHooks{ACL: func(*release.Release) func(*nbdb.ACL) {
				calls++
				return func(a *nbdb.ACL) { acls = append(acls, a.UUID) }
			}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("LoadLive differs from the transact read (-transact +LoadLive):\n%s", diff)
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			// A connection the reader closed after an update may have
			// had more requests read by the fake: compare the prefix
			// the reader needed.
			if len(f.methods) != len(tt.methods) {
				t.Fatalf("%d connections (%q), want %d", len(f.methods), f.methods, len(tt.methods))
			}
			for i, m := range tt.methods {
				if len(f.methods[i]) < len(m) || !slices.Equal(f.methods[i][:len(m)], m) {
					t.Errorf("connection %d: requests %q, want %q first", i+1, f.methods[i], m)
				}
			}
			if calls != 1 {
				t.Errorf("LiveHooks.ACL called %d times, want once", calls)
			}
			slices.Sort(acls)
			if acls = slices.Compact(acls); !slices.Equal(acls, []string{"a1", "a2", "a3"}) {
				t.Errorf("hook saw ACLs %q, want a1 a2 a3", acls)
			}
		})
	}

	_, err = nbschema.FastRead(ctx, opts((&pipelinedNB{rows: pipelinedRows, errTable: nbdb.PortGroupTable}).serve(t)), "pipelined")
	if err == nil || !strings.Contains(err.Error(), `select Port_Group: "permission error" "no"`) {
		t.Errorf("select error: got %v", err)
	}
}

// pipelinedMethods are the requests of a pipelined read up to select n.
func pipelinedMethods(n int) []string {
	out := []string{"monitor"}
	for range n {
		out = append(out, "transact")
	}
	return out
}
