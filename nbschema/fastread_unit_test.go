package nbschema_test

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// fakeRequest is a JSON-RPC request the fake NB got.
type fakeRequest struct {
	ID     json.RawMessage
	Method string
	Params []json.RawMessage
}

// fakeHandshake answers, on c, what a reader asks before the rows: list_dbs
// with OVN_Northbound, the _Server query with a standalone database,
// get_schema with 7.0.0 and the NB_Global options with northd 23.03.1's
// version; it returns the first request after those (ok false when the
// connection ended).
func fakeHandshake(c net.Conn, dec *json.Decoder) (next fakeRequest, ok bool) {
	var req struct{ ID json.RawMessage }
	if dec.Decode(&req) != nil {
		return next, false
	}
	c.Write([]byte(`{"id":` + string(req.ID) + `,"result":["_Server","OVN_Northbound"],"error":null}`))
	if dec.Decode(&next) != nil {
		return next, false
	}
	if len(next.Params) > 0 && string(next.Params[0]) == `"_Server"` {
		c.Write([]byte(`{"id":` + string(next.ID) + `,"result":[{"rows":[{"model":"standalone","leader":true,"connected":true}]}],"error":null}`))
		if dec.Decode(&next) != nil {
			return next, false
		}
	}
	if next.Method == "get_schema" {
		c.Write([]byte(`{"id":` + string(next.ID) + `,"result":{"name":"OVN_Northbound","version":"7.0.0","tables":{}},"error":null}`))
		if dec.Decode(&next) != nil {
			return next, false
		}
	}
	// detection's read of NB_Global options:northd_internal_version
	if next.Method == "transact" && len(next.Params) == 2 && strings.Contains(string(next.Params[1]), `"columns":["options"]`) {
		c.Write([]byte(`{"id":` + string(next.ID) + `,"result":[{"rows":[{"options":["map",[["northd_internal_version","23.03.1-20.27.0-70.6"]]]}]}],"error":null}`))
		if dec.Decode(&next) != nil {
			return next, false
		}
	}
	return next, true
}

// fakeNB serves one connection on a unix socket: after fakeHandshake it
// answers the next request with an echo request followed by reply (the
// "result" and "error" members, as JSON), and sends the echo reply it
// gets on echoed. A reply "RAW:text" is sent as text, then the connection
// is closed.
func fakeNB(t *testing.T, reply string) (remote string, echoed <-chan json.RawMessage) {
	t.Helper()
	l, remote := fakeListener(t)
	ch := make(chan json.RawMessage, 1)
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		dec := json.NewDecoder(c)
		next, ok := fakeHandshake(c, dec)
		if !ok {
			return
		}
		if raw, ok := strings.CutPrefix(reply, "RAW:"); ok {
			c.Write([]byte(raw)) // and close
			return
		}
		c.Write([]byte(`{"method":"echo","params":["ping"],"id":"echo"}` + "\n" +
			`{` + reply + `,"id":` + string(next.ID) + `}`))
		var echo json.RawMessage
		if dec.Decode(&echo) == nil {
			ch <- echo
		}
	}()
	return remote, ch
}

// fakeListener listens on a unix socket of the test's.
func fakeListener(t *testing.T) (net.Listener, string) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "nb.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, "unix:" + sock
}

// transactReply is a transact result with the given rows (JSON arrays)
// for the select operations by table, and no rows for the others: one
// per registry table the fake NB's release (23.03) has, in the order of
// the reader's request.
func transactReply(rows map[string]string) string {
	var ops []string
	for _, t := range nbschema.ReadTables(release.MustLookup("23.03.1")) {
		r := rows[t]
		if r == "" {
			r = "[]"
		}
		ops = append(ops, `{"rows":`+r+`}`)
	}
	return `"error":null,"result":[` + strings.Join(ops, ",") + `]`
}

func ptr[T any](v T) *T { return &v }

// TestFastReadDecode decodes hand-written OVSDB JSON: every encoding of
// RFC 7047 5.1 the models use, members in any order, unknown columns,
// escapes, a string longer than the buffer, and an echo request before
// the reply; then server errors.
func TestFastReadDecode(t *testing.T) {
	long := strings.Repeat(`ip4.src == 10.0.0.1 && \"x\" || `, 40)
	reply := transactReply(map[string]string{
		nbdb.NBGlobalTable:          `[{"options":["map",[["k","v\"q"],["use_ct_inv_match","false"]]],"_uuid":["uuid","00000000-0000-0000-0000-0000000000g1"],"name":"","external_ids":["map",[]]}]`,
		nbdb.LogicalSwitchTable:     `[{"name":"sw\u00e9","_uuid":["uuid","ls1"],"ports":["uuid","p2"],"acls":["set",[["uuid","a2"],["uuid","a1"]]],"copp":["set",[]],"load_balancer":["set",[]],"other_config":["map",[["mcast_snoop","true"]]]}]`,
		nbdb.LogicalSwitchPortTable: `[{"_uuid":["uuid","p2"],"name":"p2","tag":["set",[7]],"tag_request":["set",[]],"enabled":false,"addresses":"dynamic","dynamic_addresses":["set",["0a:00:00:00:00:02 10.0.0.2"]],"unknown":{"a":[1,2.5e3,{"b":null}],"c":"\\"}}]`,
		nbdb.ACLTable: `[{"_uuid":["uuid","a2"],"priority":1001,"match":"` + long + `","action":"drop","direction":"to-lport","log":true,"label":4294967295,"meter":["set",[]],"severity":"info","name":["set",["n"]],"options":["map",[]],"external_ids":["map",[["x","y"]]]},` +
			` {"match":"ip6","_uuid":["uuid","a1"],"priority":0,"action":"allow","direction":"from-lport","log":false,"label":0,"meter":"m","severity":["set",[]],"name":["set",[]],"options":["map",[["apply-after-lb","true"]]],"external_ids":["map",[]]}]`,
	})
	var longMatch string
	if err := json.Unmarshal([]byte(`"`+long+`"`), &longMatch); err != nil {
		t.Fatal(err)
	}
	want := nbschema.NewSnapshot()
	want.Global = &nbdb.NBGlobal{UUID: "00000000-0000-0000-0000-0000000000g1",
		Options: map[string]string{"k": `v"q`, "use_ct_inv_match": "false"}}
	want.Switches["ls1"] = &nbdb.LogicalSwitch{UUID: "ls1", Name: "swé", Ports: []string{"p2"}, ACLs: []string{"a1", "a2"},
		OtherConfig: map[string]string{"mcast_snoop": "true"}}
	want.Ports["p2"] = &nbdb.LogicalSwitchPort{UUID: "p2", Name: "p2", Tag: ptr(7), Enabled: ptr(false),
		Addresses: []string{"dynamic"}, DynamicAddresses: ptr("0a:00:00:00:00:02 10.0.0.2")}
	want.ACLs["a2"] = &nbdb.ACL{UUID: "a2", Priority: 1001, Match: longMatch, Action: "drop", Direction: "to-lport",
		Log: true, Label: 4294967295, Severity: ptr("info"), Name: ptr("n"), ExternalIDs: map[string]string{"x": "y"}}
	want.ACLs["a1"] = &nbdb.ACL{UUID: "a1", Match: "ip6", Action: "allow", Direction: "from-lport", Meter: ptr("m"),
		Options: map[string]string{"apply-after-lb": "true"}}
	want.Origin = map[string]string{
		"00000000-0000-0000-0000-0000000000g1": "NB NB_Global 00000000-0000-0000-0000-0000000000g1",
		"ls1":                                  "NB Logical_Switch ls1",
		"p2":                                   "NB Logical_Switch_Port p2",
		"a1":                                   "NB ACL a1",
		"a2":                                   "NB ACL a2",
	}

	want.Release = release.MustLookup("23.03.1")
	monitorWant := nbschema.NewSnapshot()
	monitorWant.Release = release.MustLookup("23.03.1")
	monitorWant.ACLs["a1"] = want.ACLs["a1"]
	monitorWant.Origin = map[string]string{"a1": "NB ACL a1"}
	tests := []struct {
		name, method, reply string
		want                *nbschema.Snapshot
		err                 string
	}{
		{"transact", "transact", reply, want, ""},
		{"monitor", "monitor", `"result":{"ACL":{"a1":{"new":{"match":"ip6","priority":0,"action":"allow","direction":"from-lport","meter":["set",["m"]],"options":["map",[["apply-after-lb","true"]]]}}},` +
			`"Meter":{},"Unknown":{"x":{"new":{}}}},"error":null`, monitorWant, ""},
		{"unknown column", "transact", `"result":[{"rows":[]},{"error":"syntax error","details":"Logical_Switch has no column named copp"}],"error":null`,
			nil, "does not match the OVN NB schema of a supported release aclc was built for: select " + nbschema.ReadTables(release.MustLookup("23.03.1"))[1] + ": \"syntax error\""},
		{"request error", "monitor", `"result":null,"error":{"error":"unknown database"}`, nil, `read NB at unix:`},
		{"two NB_Global", "transact", transactReply(map[string]string{nbdb.NBGlobalTable: `[{"_uuid":["uuid","g1"]},{"_uuid":["uuid","g2"]}]`}),
			nil, "more than one NB_Global row"},
		{"bad set", "transact", transactReply(map[string]string{nbdb.LogicalSwitchPortTable: `[{"_uuid":["uuid","p"],"tag":["set",["x"]]}]`}),
			nil, "Logical_Switch_Port column tag: OVSDB integer"},
		{"malformed", "transact", `"result":[{"rows":[{"_uuid":["uuid","p"],"name":"p`, nil, "JSON: got 'i'"},
		{"truncated", "transact", `RAW:{"id":1,"result":[{"rows":[{"_uuid":["uuid","p"],"name":"p`, nil, "unexpected EOF"},
	}
	for _, tt := range tests {
		for _, buf := range []int{16, 1 << 16} {
			t.Run(tt.name+"/buffer "+strconv.Itoa(buf), func(t *testing.T) {
				defer nbschema.SetReadBufferSize(buf)()
				remote, echoed := fakeNB(t, tt.reply)
				got, err := nbschema.FastRead(context.Background(), nbschema.Options{Remotes: remote, Timeout: 5 * time.Second}, tt.method)
				if tt.err != "" {
					if err == nil || !strings.Contains(err.Error(), tt.err) {
						t.Fatalf("got %v, want an error with %q", err, tt.err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				// the fake NB says northd 23.03.1 wrote it
				tt.want.ReleaseFrom = "NB_Global options:northd_internal_version 23.03.1-20.27.0-70.6"
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				select {
				case e := <-echoed:
					var msg struct {
						ID     string
						Result []string
					}
					if err := json.Unmarshal(e, &msg); err != nil || msg.ID != "echo" || len(msg.Result) != 1 || msg.Result[0] != "ping" {
						t.Errorf("echo reply %s", e)
					}
				case <-time.After(5 * time.Second):
					t.Errorf("no echo reply")
				}
			})
		}
	}
}

// TestLoadLiveHooks checks that LoadLiveWith hands LiveHooks.ACL the
// release and then every ACL row, in the order of the replies, as
// decoded, with either of its read methods.
func TestLoadLiveHooks(t *testing.T) {
	for method, want := range map[string][]string{
		"transact":  {"a2 ip4", "a0 tcp", "a1 ip6"},
		"pipelined": {"a2 ip4", "a1 ip6", "a0 tcp"}, // from-lport's select first
	} {
		t.Run(method, func(t *testing.T) {
			defer nbschema.SetReadMethod(method)()
			remote := (&pipelinedNB{rows: map[string]string{
				nbdb.ACLTable: `[{"_uuid":["uuid","a2"],"match":"ip4","direction":"from-lport"},{"_uuid":["uuid","a0"],"match":"tcp","direction":"to-lport"},` +
					`{"_uuid":["uuid","a1"],"match":"ip6","direction":"from-lport"}]`,
			}}).serve(t)
			var r *release.Release
			var got []string
			s, err := nbschema.LoadLiveWith(context.Background(), nbschema.Options{Remotes: remote, Timeout: 5 * time.Second},
				nbschema.LiveHooks{ACL: func(rel *release.Release) func(*nbdb.ACL) {
					r = rel
					return func(a *nbdb.ACL) { got = append(got, a.UUID+" "+a.Match) }
				}})
			if err != nil {
				t.Fatal(err)
			}
			if r != release.MustLookup("23.03.1") || s.Release != r {
				t.Errorf("hook got release %v, snapshot %v, want %v", r, s.Release, release.MustLookup("23.03.1"))
			}
			if !slices.Equal(got, want) {
				t.Errorf("hook got ACLs %q, want %q", got, want)
			}
		})
	}
}
