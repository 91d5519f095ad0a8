package nbschema

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// The fast one-shot reader: LoadLive speaks OVSDB JSON-RPC (RFC 7047)
// itself, asks for the tables and columns aclc reads (pipelined selects,
// pipelined.go, or one request) and decodes the replies straight from the
// connection into the nbdb models of a Snapshot. No libovsdb cache, no generic row maps: at 50k ACLs this reads
// the NB several times faster, in a fraction of the memory. aclc watch
// still uses Connect, Monitor and Snapshot (libovsdb), which follow
// changes.

// readMethod is how LoadLive asks for the rows: "transact" (one
// transaction of select operations), "pipelined" (a guard monitor and one
// select per table, pipelined: pipelined.go) or "monitor" (a monitor
// request whose initial reply carries the rows). All three are
// implemented and tested; transact is the default because ovsdb-server
// serves it fastest: at 200k ACLs it took 6.3–8.4 s to serve the one
// transaction and 9.8–13.4 s to serve the pipelined selects of the same
// rows (bench/RESULTS-200k-pipelined.md, docs/performance.md), more than
// the decode the pipelining hides.
var readMethod = "transact"

// columnDecoder decodes one column's OVSDB value into a model field.
type columnDecoder func(j *jreader, field reflect.Value) error

// tableDecoder decodes the rows of one table.
type tableDecoder struct {
	*Table
	typ     reflect.Type // the model struct type
	uuid    int          // field index of _uuid
	columns []string     // the columns requested, never nil
	index   map[string]int
	decode  []columnDecoder // by index of the field in typ
}

// decoders are the table decoders of each NB schema version, built once.
var decoders sync.Map // string -> func() ([]*tableDecoder, error)

// tableDecoders builds, once per NB schema version, the decoders of the
// registry's tables that schema has, for the columns it has, from the
// `ovsdb` tags and field types of the models. ACL comes first, the other
// tables in the registry's order: the request asks for the tables in this
// order and the reply carries them so, and ACL rows first let
// LiveHooks.ACL's work start with the reply's first bytes.
func tableDecoders(schema string) ([]*tableDecoder, error) {
	if _, err := ClientModelFor(schema); err != nil {
		return nil, err
	}
	f, _ := decoders.LoadOrStore(schema, sync.OnceValues(func() ([]*tableDecoder, error) {
		var out []*tableDecoder
		for _, rt := range tables {
			if !hasTable(schema, rt.Name) {
				continue
			}
			td, err := newTableDecoder(rt, schema)
			if err != nil {
				return nil, err
			}
			if rt.Name == nbdb.ACLTable {
				out = append([]*tableDecoder{td}, out...)
			} else {
				out = append(out, td)
			}
		}
		return out, nil
	}))
	return f.(func() ([]*tableDecoder, error))()
}

func newTableDecoder(rt *Table, schema string) (*tableDecoder, error) {
	typ := rt.model
	td := &tableDecoder{Table: rt, typ: typ, uuid: -1, index: map[string]int{},
		decode: make([]columnDecoder, typ.NumField())}
	all := map[string]int{}
	for i := range typ.NumField() {
		col := typ.Field(i).Tag.Get("ovsdb")
		if col == "" {
			continue
		}
		if col == "_uuid" {
			td.uuid = i
			continue
		}
		all[col] = i
	}
	if td.uuid < 0 {
		return nil, fmt.Errorf("model %s has no _uuid field", typ)
	}
	var cols []string
	for _, col := range rt.Columns {
		if hasColumn(schema, rt.Name, col) {
			cols = append(cols, col)
		}
	}
	if rt.Columns == nil {
		for i := range typ.NumField() {
			if col := typ.Field(i).Tag.Get("ovsdb"); col != "" && col != "_uuid" && hasColumn(schema, rt.Name, col) {
				cols = append(cols, col)
			}
		}
	}
	for _, col := range cols {
		i, ok := all[col]
		if !ok {
			return nil, fmt.Errorf("model %s has no column %s", typ, col)
		}
		dec, err := decoderFor(typ.Field(i).Type)
		if err != nil {
			return nil, fmt.Errorf("%s column %s: %w", rt.Name, col, err)
		}
		td.index[col] = i
		td.decode[i] = dec
	}
	td.columns = cols
	return td, nil
}

// decoderFor returns the decoder for a model field of type t, following
// the libovsdb model conventions: atoms for required scalar columns,
// pointers for optional ones, slices for sets, maps for maps; as in the
// libovsdb cache, an empty set or map is nil.
func decoderFor(t reflect.Type) (columnDecoder, error) {
	switch {
	case t == reflect.TypeFor[string]():
		return func(j *jreader, f reflect.Value) error {
			s, err := j.atomString()
			f.SetString(s)
			return err
		}, nil
	case t == reflect.TypeFor[int]():
		return func(j *jreader, f reflect.Value) error {
			n, err := j.integer()
			f.SetInt(int64(n))
			return err
		}, nil
	case t == reflect.TypeFor[bool]():
		return func(j *jreader, f reflect.Value) error {
			b, err := j.boolean()
			f.SetBool(b)
			return err
		}, nil
	case t == reflect.TypeFor[float64]():
		return func(j *jreader, f reflect.Value) error {
			x, err := j.real()
			f.SetFloat(x)
			return err
		}, nil
	case t == reflect.TypeFor[*string]():
		return optional(func(j *jreader) (string, error) { return j.atomString() }, true), nil
	case t == reflect.TypeFor[*int]():
		return optional((*jreader).integer, false), nil
	case t == reflect.TypeFor[*bool]():
		return optional((*jreader).boolean, false), nil
	case t == reflect.TypeFor[*float64]():
		return optional((*jreader).real, false), nil
	case t == reflect.TypeFor[[]string]():
		return slice(func(j *jreader) (string, error) { return j.atomString() }, true), nil
	case t == reflect.TypeFor[[]int]():
		return slice((*jreader).integer, false), nil
	case t == reflect.TypeFor[map[string]string]():
		return mapOf(func(j *jreader) (string, error) { return j.atomString() },
			func(j *jreader) (string, error) { return j.atomString() }), nil
	case t == reflect.TypeFor[map[string]int]():
		return mapOf(func(j *jreader) (string, error) { return j.atomString() }, (*jreader).integer), nil
	}
	return nil, fmt.Errorf("unsupported model field type %s", t)
}

// readSet reads a set of atoms; uuids says a bare UUID is a valid
// element (T is string).
func readSet[T any](j *jreader, atom func(*jreader) (T, error), uuids bool, into []T) ([]T, error) {
	var onUUID func(string)
	if uuids {
		onUUID = func(s string) { into = append(into, any(s).(T)) }
	}
	err := j.set(func() error {
		x, err := atom(j)
		into = append(into, x)
		return err
	}, onUUID)
	return into, err
}

func optional[T any](atom func(*jreader) (T, error), uuids bool) columnDecoder {
	return func(j *jreader, f reflect.Value) error {
		var one [1]T
		got, err := readSet(j, atom, uuids, one[:0])
		switch {
		case err != nil:
			return err
		case len(got) > 1:
			return fmt.Errorf("OVSDB: %d values for an optional column", len(got))
		case len(got) == 1:
			p := new(T)
			*p = got[0]
			f.Set(reflect.ValueOf(p))
		}
		return nil
	}
}

func slice[T any](atom func(*jreader) (T, error), uuids bool) columnDecoder {
	return func(j *jreader, f reflect.Value) error {
		got, err := readSet(j, atom, uuids, nil)
		if err != nil || len(got) == 0 {
			return err
		}
		f.Set(reflect.ValueOf(got))
		return nil
	}
}

func mapOf[K comparable, V any](key func(*jreader) (K, error), value func(*jreader) (V, error)) columnDecoder {
	return func(j *jreader, f reflect.Value) error {
		var m map[K]V
		err := j.ovsMap(func() error {
			k, err := key(j)
			if err != nil {
				return err
			}
			if err := j.expect(','); err != nil {
				return err
			}
			v, err := value(j)
			if m == nil {
				m = map[K]V{}
			}
			m[k] = v
			return err
		})
		if err != nil || m == nil {
			return err
		}
		f.Set(reflect.ValueOf(m))
		return nil
	}
}

// row decodes one <row> object into a new model and returns it with the
// row's _uuid column when the row has one (select; a monitor update is
// keyed by the UUID instead).
func (td *tableDecoder) row(j *jreader) (reflect.Value, string, error) {
	v := reflect.New(td.typ)
	e := v.Elem()
	var uuid string
	for more, err := j.open('{'); more || err != nil; more, err = j.next('}') {
		if err != nil {
			return v, "", err
		}
		key, err := j.strBytes()
		if err != nil {
			return v, "", err
		}
		// key is only valid until the next read.
		i, ok := td.index[string(key)]
		isUUID := string(key) == "_uuid"
		if err := j.expect(':'); err != nil {
			return v, "", err
		}
		if isUUID {
			if uuid, err = j.atomString(); err != nil {
				return v, "", fmt.Errorf("%s _uuid: %w", td.Name, err)
			}
			continue
		}
		if !ok {
			if err := j.skip(); err != nil {
				return v, "", err
			}
			continue
		}
		if err := td.decode[i](j, e.Field(i)); err != nil {
			return v, "", fmt.Errorf("%s column %s: %w", td.Name, td.typ.Field(i).Tag.Get("ovsdb"), err)
		}
	}
	return v, uuid, nil
}

// sink is where the decoded rows go: the Snapshot, and the caller's
// LiveHooks. The rows are put into the Snapshot's maps at the end
// (finish), each map made for its number of rows: growing them row by row
// took a quarter of the decoding.
type sink struct {
	s    *Snapshot
	acl  func(*nbdb.ACL) // LiveHooks.ACL's function, or nil
	rows []decodedRow
}

type decodedRow struct {
	td   *tableDecoder
	uuid string
	m    model.Model
}

// add takes a decoded row for the Snapshot.
func (td *tableDecoder) add(k *sink, v reflect.Value, uuid string) error {
	if uuid == "" {
		return fmt.Errorf("%s row without _uuid", td.Name)
	}
	v.Elem().Field(td.uuid).SetString(uuid)
	m := v.Interface().(model.Model)
	if k.acl != nil && td.Name == nbdb.ACLTable {
		k.acl(m.(*nbdb.ACL))
	}
	k.rows = append(k.rows, decodedRow{td, uuid, m})
	return nil
}

// finish puts the decoded rows into the Snapshot, with their Origin.
func (k *sink) finish() error {
	s := k.s
	count := map[*tableDecoder]int{}
	size := 0
	for _, r := range k.rows {
		count[r.td]++
		size += len("NB ") + len(r.td.Name) + 1 + len(r.uuid)
	}
	for td, n := range count {
		if td.Name == nbdb.NBGlobalTable && n > 1 {
			return fmt.Errorf("NB has more than one NB_Global row, want at most 1")
		}
		if td.count(s) == 0 {
			td.alloc(s, n)
		}
	}
	// The origins, "NB <table> <uuid>", cut from one string.
	var b strings.Builder
	b.Grow(size)
	for _, r := range k.rows {
		b.WriteString("NB ")
		b.WriteString(r.td.Name)
		b.WriteByte(' ')
		b.WriteString(r.uuid)
	}
	all := b.String()
	if len(s.Origin) == 0 {
		s.Origin = make(map[string]string, len(k.rows))
	}
	for _, r := range k.rows {
		n := len("NB ") + len(r.td.Name) + 1 + len(r.uuid)
		s.Origin[r.uuid], all = all[:n], all[n:]
		r.td.set(s, r.uuid, r.m)
	}
	k.rows = nil
	return nil
}

// ReadRequest is what LoadLive sends to an NB of release r with read
// method method ("" for LoadLive's first, the default) and the number of
// replies the server sends to it, for tools that time the server's side
// of the read alone (bench/northd-vs-aclc).
func ReadRequest(r *release.Release, method string) ([]byte, int, error) {
	if method == "" {
		method = readMethod
	}
	tds, err := tableDecoders(r.NBSchema)
	if err != nil {
		return nil, 0, err
	}
	req, err := readRequest(method, tds)
	replies := 1
	if method == "pipelined" {
		replies += len(readParts(tds))
	}
	return req, replies, err
}

// readRequest is what the fast reader sends: one request, or for
// "pipelined" the guard and the selects, written at once.
func readRequest(method string, tds []*tableDecoder) ([]byte, error) {
	var params []any
	switch method {
	case "transact":
		params = []any{nbTarget.DB}
		for _, td := range tds {
			params = append(params, map[string]any{"op": "select", "table": td.Name, "where": []any{},
				"columns": append([]string{"_uuid"}, td.columns...)})
		}
	case "pipelined":
		return pipelinedRequests(readParts(tds), tds)
	case "monitor":
		req := map[string]any{}
		for _, td := range tds {
			req[td.Name] = map[string]any{"columns": td.columns, "select": map[string]bool{"initial": true,
				"insert": false, "delete": false, "modify": false}}
		}
		params = []any{nbTarget.DB, nil, req}
	default:
		return nil, fmt.Errorf("unknown read method %q", method)
	}
	return json.Marshal(map[string]any{"method": method, "params": params, "id": "aclc-read"})
}

// fastRead reads the registry's tables from the NB on conn (remote
// names it in messages) with read method method, and returns them as a
// Snapshot; a pipelined read that met a commit is errConcurrentCommit.
// It first settles the NB's release (detectOn: its schema version and
// NB_Global options:northd_internal_version; override when given); the
// schema decides which tables and columns it asks for.
func fastRead(ctx context.Context, conn net.Conn, remote string, method string, timeout time.Duration, override *release.Release, hooks LiveHooks) (*Snapshot, error) {
	d, err := detectOn(conn, remote, timeout, override)
	if err != nil {
		return nil, err
	}
	r := d.release
	tds, err := tableDecoders(d.schema)
	if err != nil {
		return nil, fmt.Errorf("NB model: %w", err)
	}
	req, err := readRequest(method, tds)
	if err != nil {
		return nil, err
	}
	conn.SetDeadline(time.Now().Add(timeout))
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := conn.Write(req); err != nil {
		return nil, fmt.Errorf("read NB at %s: send %s: %w", remote, method, err)
	}
	sent := time.Now()
	s := NewSnapshot()
	s.Release, s.ReleaseFrom = r, d.how
	k := &sink{s: s}
	if hooks.ACL != nil {
		k.acl = hooks.ACL(r)
	}
	timed := &timedReader{r: conn}
	var in io.Reader = timed
	if hooks.Received != nil {
		in = countingReader{in, hooks.Received}
	}
	if method == "pipelined" {
		p := newPrefetch(in)
		defer p.Close()
		in = p
	}
	j := newJReader(in)
	if err := readReplies(j, conn, k, method, tds); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("read NB at %s: %w", remote, ctx.Err())
		}
		if isTimeout(err) {
			return nil, fmt.Errorf("read NB at %s: no complete reply within %v: %w", remote, timeout, err)
		}
		if se, ok := err.(*serverError); ok && se.schema() {
			return nil, fmt.Errorf("NB at %s does not match %s aclc was built for: %w", remote, nbTarget.Schema, err)
		}
		return nil, fmt.Errorf("read NB at %s: %w", remote, err)
	}
	if err := k.finish(); err != nil {
		return nil, fmt.Errorf("read NB at %s: %w", remote, err)
	}
	timed.log(remote, sent)
	s.sortSets()
	return s, nil
}

// readReplies reads the replies to readRequest's request(s) into k.
func readReplies(j *jreader, conn io.Writer, k *sink, method string, tds []*tableDecoder) error {
	if method == "pipelined" {
		return readPipelined(j, conn, k, readParts(tds))
	}
	result := func(j *jreader) error { return readMonitor(j, k, tds) }
	if method == "transact" {
		result = func(j *jreader) error { return readTransact(j, k, tds) }
	}
	for {
		m, err := readMessage(j, conn, method, result)
		if err != nil || m.reply {
			return err
		}
	}
}

// countingReader counts the bytes read from r into n.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	k, err := c.r.Read(p)
	c.n.Add(int64(k))
	return k, err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// serverError is an error the server returned for the request, or for one
// of its operations.
type serverError struct {
	op  string // "select ACL", or the method
	msg json.RawMessage
}

func (e *serverError) Error() string { return fmt.Sprintf("%s: %s", e.op, e.msg) }

// schema reports whether the server refused a table or column name.
func (e *serverError) schema() bool {
	m := strings.ToLower(string(e.msg))
	return strings.Contains(m, "column") || strings.Contains(m, "table")
}

// message is what readMessage read: a reply (to the request it was
// waiting for), or a request or notification from the server (method).
type message struct {
	reply  bool
	method string
}

// readMessage reads one JSON-RPC message: a reply, whose result result
// decodes (into the sink) and whose error is a serverError of op; or a
// request or notification from the server, of which it answers echo.
func readMessage(j *jreader, conn io.Writer, op string, result func(*jreader) error) (message, error) {
	var (
		m      message
		params json.RawMessage
		id     json.RawMessage
	)
	for more, err := j.open('{'); more || err != nil; more, err = j.next('}') {
		if err != nil {
			return m, err
		}
		key, err := j.str()
		if err != nil {
			return m, err
		}
		if err := j.expect(':'); err != nil {
			return m, err
		}
		switch key {
		case "result":
			m.reply = true
			if c, err := j.peek(); err != nil {
				return m, err
			} else if c == 'n' {
				if err := j.skip(); err != nil {
					return m, err
				}
				continue
			}
			if err := result(j); err != nil {
				return m, err
			}
		case "error":
			raw, err := j.raw()
			if err != nil {
				return m, err
			}
			if string(raw) != "null" {
				return m, &serverError{op: op, msg: raw}
			}
			m.reply = true
		case "method":
			if m.method, err = j.str(); err != nil {
				return m, err
			}
		case "params":
			if params, err = j.raw(); err != nil {
				return m, err
			}
		case "id":
			if id, err = j.raw(); err != nil {
				return m, err
			}
		default:
			if err := j.skip(); err != nil {
				return m, err
			}
		}
	}
	if m.method != "" {
		m.reply = false
	}
	if m.method == "echo" {
		msg, _ := json.Marshal(map[string]any{"id": id, "result": params, "error": nil})
		if _, err := conn.Write(msg); err != nil {
			return m, fmt.Errorf("answer echo: %w", err)
		}
	}
	return m, nil
}

// readTransact decodes the result of the transaction: one {"rows": [...]}
// per select, in the order of tds.
func readTransact(j *jreader, k *sink, tds []*tableDecoder) error {
	n := 0
	for more, err := j.open('['); more || err != nil; more, err = j.next(']') {
		if err != nil {
			return err
		}
		if n >= len(tds) {
			return fmt.Errorf("transact: more results than operations")
		}
		td := tds[n]
		n++
		var opErr, details json.RawMessage
		for more, err := j.open('{'); more || err != nil; more, err = j.next('}') {
			if err != nil {
				return err
			}
			key, err := j.str()
			if err != nil {
				return err
			}
			if err := j.expect(':'); err != nil {
				return err
			}
			switch key {
			case "rows":
				for more, err := j.open('['); more || err != nil; more, err = j.next(']') {
					if err != nil {
						return err
					}
					v, uuid, err := td.row(j)
					if err != nil {
						return err
					}
					if err := td.add(k, v, uuid); err != nil {
						return err
					}
				}
			case "error":
				if opErr, err = j.raw(); err != nil {
					return err
				}
			case "details":
				if details, err = j.raw(); err != nil {
					return err
				}
			default:
				if err := j.skip(); err != nil {
					return err
				}
			}
		}
		if opErr != nil {
			msg := opErr
			if details != nil {
				msg = json.RawMessage(string(opErr) + " " + string(details))
			}
			return &serverError{op: "select " + td.Name, msg: msg}
		}
	}
	if n < len(tds) {
		return fmt.Errorf("transact: %d results for %d operations", n, len(tds))
	}
	return nil
}

// readMonitor decodes the initial contents of a monitor reply:
// {table: {uuid: {"new": row}}}.
func readMonitor(j *jreader, k *sink, tds []*tableDecoder) error {
	byName := map[string]*tableDecoder{}
	for _, td := range tds {
		byName[td.Name] = td
	}
	for more, err := j.open('{'); more || err != nil; more, err = j.next('}') {
		if err != nil {
			return err
		}
		name, err := j.str()
		if err != nil {
			return err
		}
		if err := j.expect(':'); err != nil {
			return err
		}
		td, ok := byName[name]
		if !ok {
			if err := j.skip(); err != nil {
				return err
			}
			continue
		}
		for more, err := j.open('{'); more || err != nil; more, err = j.next('}') {
			if err != nil {
				return err
			}
			uuid, err := j.str()
			if err != nil {
				return err
			}
			if err := j.expect(':'); err != nil {
				return err
			}
			for more, err := j.open('{'); more || err != nil; more, err = j.next('}') {
				if err != nil {
					return err
				}
				key, err := j.strBytes()
				if err != nil {
					return err
				}
				isNew := string(key) == "new" // key is only valid until the next read
				if err := j.expect(':'); err != nil {
					return err
				}
				if !isNew {
					if err := j.skip(); err != nil {
						return err
					}
					continue
				}
				v, _, err := td.row(j)
				if err != nil {
					return err
				}
				if err := td.add(k, v, uuid); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
