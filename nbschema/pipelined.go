package nbschema

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/aclc/aclc/nbschema/nbdb"
)

// The pipelined read: the rows in several selects sent at once on one
// connection, each decoded while ovsdb-server builds the next reply.
//
// ovsdb-server builds the whole reply to a request before it sends a byte
// of it, and it serves the requests of one session one at a time
// (ovsdb/jsonrpc-server.c, ovsdb_jsonrpc_session_run: one received message
// per run, taken only once the session's send backlog is empty). With the
// one transaction of every table, aclc waits for the server's whole build,
// then decodes: at 200k ACLs the decode after the reply's last byte was
// 1.1–2.0 s of a 7.3–7.6 s read. Split into one select per table (the ACL
// table one per direction, its two halves), the server builds reply k+1
// while aclc decodes reply k, and only the last, small reply is decoded
// after the server is done. A prefetching goroutine (prefetch.go) keeps
// the server's backlog empty so it can go on to the next request at once.
//
// Measured, it does not pay: ovsdb-server takes longer to serve the
// selects than the one transaction of the same rows (at 200k ACLs
// 9.8–13.4 s against 6.3–8.4 s, bench/RESULTS-200k-pipelined.md), more
// than the decode it hides, so LoadLive reads with the one transaction
// (readMethod) and the bench measures both on every run.
//
// Separate selects are separate transactions, so a commit could land
// between two of them. Before the selects, the read opens a monitor of the
// same tables and columns without initial rows: the guard.
// ovsdb-server sends a session's pending monitor updates before any reply
// (ovsdb_jsonrpc_session_send flushes the monitors first), so a commit
// that lands before the last select runs is announced by an update before
// the last reply: the read then stops with errConcurrentCommit, and
// LoadLive reads again (after readAttempts such reads, with the one
// transaction, which is atomic).

// errConcurrentCommit reports that a transaction committed while the
// pipelined selects ran: their rows may not be one state of the NB.
var errConcurrentCommit = errors.New("a transaction committed during the read")

// readPart is one select of the pipelined read: a table, and the
// condition on its rows (nil: all of them).
type readPart struct {
	td    *tableDecoder
	where []any
}

// readParts are the selects of the pipelined read, in the order sent: the
// ACL table first (its from-lport rows, then its to-lport rows: direction
// is an enum of exactly these two, so the halves are all of it), so that
// the match parsing LiveHooks.ACL starts runs beside the server's build of
// the rest; then the other tables in the registry's order, which ends
// with the small ones, whose decode is what remains after the server's
// last byte.
func readParts(tds []*tableDecoder) []readPart {
	var out []readPart
	for _, td := range tds {
		if td.Name == nbdb.ACLTable {
			for _, dir := range []string{nbdb.ACLDirectionFromLport, nbdb.ACLDirectionToLport} {
				out = append(out, readPart{td, []any{[]any{"direction", "==", dir}}})
			}
			continue
		}
		out = append(out, readPart{td: td})
	}
	return out
}

// guardID and partID are the JSON-RPC ids of the pipelined read's
// requests.
const guardID = "aclc-guard"

func partID(i int) string { return fmt.Sprintf("aclc-read-%d", i) }

// pipelinedRequests are the messages of the pipelined read, to be written
// at once: the guard monitor, then one transact per part.
func pipelinedRequests(parts []readPart, tds []*tableDecoder) ([]byte, error) {
	mon := map[string]any{}
	for _, td := range tds {
		mon[td.Name] = map[string]any{"columns": td.columns, "select": map[string]bool{"initial": false,
			"insert": true, "delete": true, "modify": true}}
	}
	out, err := json.Marshal(map[string]any{"method": "monitor", "params": []any{nbTarget.DB, guardID, mon}, "id": guardID})
	if err != nil {
		return nil, err
	}
	for i, p := range parts {
		where := p.where
		if where == nil {
			where = []any{}
		}
		msg, err := json.Marshal(map[string]any{"method": "transact", "id": partID(i), "params": []any{nbTarget.DB,
			map[string]any{"op": "select", "table": p.td.Name, "where": where,
				"columns": append([]string{"_uuid"}, p.td.columns...)}}})
		if err != nil {
			return nil, err
		}
		out = append(out, msg...)
	}
	return out, nil
}

// readPipelined reads the replies to pipelinedRequests, in the order
// sent (ovsdb-server answers a session's requests in order), into k: the
// guard's (no rows: it has no initial ones), then each part's. The
// server's echo requests are answered; a monitor update before the last
// reply is errConcurrentCommit.
func readPipelined(j *jreader, conn io.Writer, k *sink, parts []readPart) error {
	for n := 0; n <= len(parts); {
		var result func(*jreader) error
		what := "monitor"
		if n == 0 {
			result = (*jreader).skip
		} else {
			p := parts[n-1]
			what = "select " + p.td.Name
			tds := []*tableDecoder{p.td}
			result = func(j *jreader) error { return readTransact(j, k, tds) }
		}
		m, err := readMessage(j, conn, what, result)
		if err != nil {
			return err
		}
		switch {
		case m.method == "update":
			return errConcurrentCommit
		case m.reply:
			n++
		}
	}
	return nil
}
