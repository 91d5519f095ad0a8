package nbschema

import (
	"context"
	"fmt"

	"github.com/aclc/aclc/internal/ovsdbconn"

	"github.com/ovn-kubernetes/libovsdb/client"

	"github.com/aclc/aclc/nbschema/nbdb"
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
	opts    Options
}

// Connect connects to the first reachable NB remote of opts, checking that
// it serves the OVN_Northbound database. It does not read any rows yet;
// see Monitor and LoadLive. Close the NB when done.
func Connect(ctx context.Context, opts Options) (*NB, error) {
	dbModel, err := nbdb.FullDatabaseModel()
	if err != nil {
		return nil, fmt.Errorf("NB model: %w", err)
	}
	c, remotes, err := ovsdbconn.Dial(ctx, nbTarget, opts.conn(), dbModel)
	if err != nil {
		return nil, err
	}
	return &NB{Client: c, Remotes: remotes, opts: opts}, nil
}

// monitoredTables are the NB tables and columns aclc reads (the
// registry's): what the ACL compiler needs and the fixture format
// expresses, nothing more (no NB_Global counters, no NAT, routes or
// policies, no port status).
func monitoredTables() []client.MonitorOption {
	out := make([]client.MonitorOption, len(tables))
	for i, t := range tables {
		out[i] = t.monitorOption()
	}
	return out
}

// Monitor starts monitoring the tables and columns aclc reads; when it
// returns the client's cache holds their current rows and follows changes.
func (nb *NB) Monitor(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, nb.opts.readTimeout())
	defer cancel()
	if _, err := nb.Client.Monitor(ctx, nb.Client.NewMonitor(monitoredTables()...)); err != nil {
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
	for _, t := range tables {
		rows, err := t.list(ctx, nb.Client)
		if err != nil {
			return nil, fmt.Errorf("read NB cache: %w", err)
		}
		for _, r := range rows {
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
	conn, remote, err := ovsdbconn.DialRaw(ctx, nbTarget, opts.conn())
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return fastRead(ctx, conn, remote, readMethod, opts.readTimeout())
}
