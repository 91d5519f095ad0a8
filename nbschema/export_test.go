package nbschema

import (
	"context"
	"errors"
	"slices"

	"github.com/aclc/aclc/internal/ovsdbconn"
	"github.com/aclc/aclc/release"
)

// FastRead is LoadLive with the read method ("transact" or "monitor")
// chosen by the test.
func FastRead(ctx context.Context, opts Options, method string) (*Snapshot, error) {
	conn, remote, err := ovsdbconn.DialRaw(ctx, nbTarget, opts.conn())
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return fastRead(ctx, conn, remote, method, opts.readTimeout(), opts.Release, LiveHooks{})
}

// SetReadMethod makes LoadLive read with method until restore is called.
func SetReadMethod(method string) (restore func()) {
	old := readMethod
	readMethod = method
	return func() { readMethod = old }
}

// IsConcurrentCommit reports whether err is the pipelined read's
// errConcurrentCommit.
func IsConcurrentCommit(err error) bool { return errors.Is(err, errConcurrentCommit) }

// ReadColumns returns the tables and columns the fast reader asks for, and
// those libovsdb's Monitor asks for (monitoredTables) on the connected
// nb; nil columns mean all.
func ReadColumns(nb *NB) (fast, monitor map[string][]string, errs []error) {
	c := nb.Client
	fast, monitor = map[string][]string{}, map[string][]string{}
	tds, err := tableDecoders(nb.Release.NBSchema)
	if err != nil {
		return nil, nil, []error{err}
	}
	for _, td := range tds {
		if td.Table.Columns != nil {
			fast[td.Name] = slices.Sorted(slices.Values(td.columns))
		} else {
			fast[td.Name] = nil
		}
	}
	m := c.NewMonitor(monitoredTables(nb.dbModel)...)
	for _, tm := range m.Tables {
		monitor[tm.Table] = slices.Sorted(slices.Values(tm.Fields))
	}
	return fast, monitor, m.Errors
}

// SetReadBufferSize sets the fast reader's buffer size (at least 16) until
// the returned function restores it.
func SetReadBufferSize(n int) (restore func()) {
	old := readBufferSize
	readBufferSize = n
	return func() { readBufferSize = old }
}

// ReadTables are the tables LoadLive asks an NB of release r for, in the
// order of its request (and of a transact reply's results).
func ReadTables(r *release.Release) []string {
	tds, err := tableDecoders(r.NBSchema)
	if err != nil {
		panic(err)
	}
	var out []string
	for _, td := range tds {
		out = append(out, td.Name)
	}
	return out
}
