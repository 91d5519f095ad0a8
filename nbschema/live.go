package nbschema

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/aclc/aclc/internal/ovsdbconn"

	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"

	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// NB is a connection to a live OVN Northbound database. Client is the
// libovsdb client: after Monitor its cache holds the rows the compiler
// needs, and a watcher may add cache event handlers to it
// (Client.Cache().AddEventHandler) before calling Monitor.
type NB struct {
	// Client is the libovsdb client, connected to one of Remotes.
	Client client.Client
	// Remotes are the remotes Connect was given, after defaulting.
	Remotes []string
	// Release is the OVN release of the NB: detected from NB_Global
	// options:northd_internal_version and its schema version, or
	// Options.Release. Client speaks the NB's own schema with its client
	// models (ClientModelFor); Snapshot converts rows to package nbdb's.
	Release *release.Release
	// ReleaseFrom says where Release came from (release.Detection.How).
	ReleaseFrom string
	// Schema is the NB schema version whose models read it.
	Schema  string
	opts    Options
	dbModel model.ClientDBModel
}

// Connect connects to the first reachable NB remote of opts, checking that
// it serves the OVN_Northbound database of a supported release (or
// opts.Release), and speaks to it with that release's client models. It
// does not read any rows yet; see Monitor and LoadLive. Close the NB when
// done.
func Connect(ctx context.Context, opts Options) (*NB, error) {
	d, err := detectConnect(ctx, opts)
	if err != nil {
		return nil, err
	}
	r := d.release
	dbModel, err := ClientModelFor(d.schema)
	if err != nil {
		return nil, fmt.Errorf("NB model: %w", err)
	}
	c, remotes, err := ovsdbconn.Dial(ctx, nbTarget, opts.conn(), dbModel)
	if err != nil {
		return nil, err
	}
	return &NB{Client: c, Remotes: remotes, Release: r, ReleaseFrom: d.how, Schema: d.schema, opts: opts, dbModel: dbModel}, nil
}

// Pinned reports whether the NB's release was given (Options.Release,
// --ovn-version) rather than detected.
func (nb *NB) Pinned() bool { return nb.opts.Release != nil }

// Redetect settles the release again after NB_Global
// options:northd_internal_version became northd (another ovn-northd took
// over the NB: an upgrade): the release and how it was found, or an error
// for a version aclc cannot vouch for. A pinned NB keeps its release.
func (nb *NB) Redetect(northd string) (*release.Release, string, error) {
	if nb.Pinned() {
		return nb.Release, nb.ReleaseFrom, nil
	}
	d, err := release.Detect(nb.Schema, northd, nil)
	if err != nil {
		return nil, "", err
	}
	return d.Release, d.How, nil
}

// monitoredTables are the NB tables and columns aclc reads (the
// registry's): what the ACL compiler needs and the fixture format
// expresses, nothing more (no NB_Global counters, no NAT, routes or
// policies, no port status).
func monitoredTables(dbModel model.ClientDBModel) []client.MonitorOption {
	var out []client.MonitorOption
	for _, t := range tables {
		if o, ok := t.monitorOption(dbModel); ok {
			out = append(out, o)
		}
	}
	return out
}

// Monitor starts monitoring the tables and columns aclc reads; when it
// returns the client's cache holds their current rows and follows changes.
func (nb *NB) Monitor(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, nb.opts.readTimeout())
	defer cancel()
	if _, err := nb.Client.Monitor(ctx, nb.Client.NewMonitor(monitoredTables(nb.dbModel)...)); err != nil {
		return fmt.Errorf("monitor NB at %s: %w", nb.Client.CurrentEndpoint(), err)
	}
	return nil
}

// Snapshot copies the client's cache into a new Snapshot; Origin is
// "NB <Table> <uuid>" for every row. Call Monitor first. The tables are
// copied one after the other, so a transaction that lands meanwhile can
// show in some tables and not yet in others; a watcher should take
// snapshots once the cache has settled (after a quiet period), and the
// compiler must in any case tolerate references to missing rows.
func (nb *NB) Snapshot(ctx context.Context) (*Snapshot, error) {
	s := NewSnapshot()
	s.Release, s.ReleaseFrom = nb.Release, nb.ReleaseFrom
	cache := nb.Client.Cache()
	if cache == nil {
		return nil, fmt.Errorf("read NB cache: not connected")
	}
	for _, t := range tables {
		tc := cache.Table(t.Name)
		if tc == nil {
			continue // a table the release lacks
		}
		rows := tc.Rows()
		if t.Name == nbdb.NBGlobalTable && len(rows) > 1 {
			return nil, fmt.Errorf("NB has %d NB_Global rows, want at most 1", len(rows))
		}
		for _, row := range rows {
			r := FromClient(t.Name, row)
			u := t.uuidOf(r)
			t.set(s, u, r)
			s.Origin[u] = liveOrigin(t.Name, u)
		}
	}
	s.sortSets()
	return s, nil
}

func liveOrigin(table, uuid string) string { return "NB " + table + " " + uuid }

// Close disconnects from the NB.
func (nb *NB) Close() { nb.Client.Close() }

// LoadLive connects to the NB of opts, reads the tables aclc needs and
// returns them as a Snapshot. It is a one-shot read: it speaks OVSDB
// JSON-RPC itself and decodes the rows of one request straight into the
// Snapshot (see fastread.go), without libovsdb's cache; the Snapshot is
// the one Connect, Monitor and Snapshot would give.
func LoadLive(ctx context.Context, opts Options) (*Snapshot, error) {
	return LoadLiveWith(ctx, opts, LiveHooks{})
}

// LiveHooks let a caller of LoadLiveWith work on rows while the rest of
// the reply is still being decoded.
type LiveHooks struct {
	// ACL, when set, is called once the NB's release is known (the
	// Snapshot's Release); the function it returns is then called with
	// each ACL row as it is decoded, on the decoding goroutine: it must
	// return quickly (hand the work to another goroutine) and read the
	// row only during the call (sets are sorted after the read).
	ACL func(r *release.Release) func(*nbdb.ACL)
	// Received, when set, counts the bytes of the reply as they arrive
	// (aclc compile sizes its garbage collection budget by it).
	Received *atomic.Int64
}

// LoadLiveWith is LoadLive calling hooks as it decodes the reply.
//
// The pipelined read (pipelined.go) is not one transaction: when a commit
// lands during it, it is read again, on a new connection, and after
// readAttempts pipelined reads with the one transaction of every table,
// which is atomic but slower at scale. hooks.ACL is then called once, for
// the first read's release, and its function sees the ACL rows of every
// read (a row may come more than once).
func LoadLiveWith(ctx context.Context, opts Options, hooks LiveHooks) (*Snapshot, error) {
	if f := hooks.ACL; f != nil {
		var (
			seen *release.Release
			fn   func(*nbdb.ACL)
		)
		hooks.ACL = func(r *release.Release) func(*nbdb.ACL) {
			if fn == nil || r != seen {
				seen, fn = r, f(r)
			}
			return fn
		}
	}
	for attempt := 1; ; attempt++ {
		method := readMethod
		if method == "pipelined" && attempt > readAttempts {
			method = "transact"
		}
		s, err := loadLiveOnce(ctx, opts, method, hooks)
		if errors.Is(err, errConcurrentCommit) {
			slog.Debug("NB changed during the pipelined read; reading again", "attempt", attempt)
			continue
		}
		return s, err
	}
}

// readAttempts is how many pipelined reads LoadLiveWith makes before it
// falls back to the one transaction.
const readAttempts = 3

func loadLiveOnce(ctx context.Context, opts Options, method string, hooks LiveHooks) (*Snapshot, error) {
	conn, remote, err := ovsdbconn.DialRaw(ctx, nbTarget, opts.conn())
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return fastRead(ctx, conn, remote, method, opts.readTimeout(), opts.Release, hooks)
}
