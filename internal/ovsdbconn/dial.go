// Package ovsdbconn connects libovsdb clients to the OVSDB databases aclc
// talks to (the OVN NB and SB, Open_vSwitch) the way ovn-nbctl and
// ovn-sbctl do: a comma-separated remote list (unix:, tcp:, ssl: with -p,
// -c and -C PEM files), a default from an environment variable, and errors
// that say which remote failed and why — including, when the server serves
// another database, which one.
package ovsdbconn

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/ovn-kubernetes/libovsdb/client"
	"github.com/ovn-kubernetes/libovsdb/model"
)

// DefaultTimeout bounds connecting when Options.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// Target describes the database to reach.
type Target struct {
	// DB is the OVSDB database name, e.g. "OVN_Northbound".
	DB string
	// Label names it in messages: "NB", "SB".
	Label string
	// EnvVar holds the default remote list, e.g. "OVN_NB_DB".
	EnvVar string
	// DefaultRemote is used when neither the options nor EnvVar give one.
	DefaultRemote string
	// Schema describes the schema aclc was built for, for a mismatch
	// message: "the OVN NB schema of a supported release".
	Schema string
	// Hint is added when a remote turns out to serve another database:
	// where the right one usually is.
	Hint string
}

// Options says how to reach a database.
type Options struct {
	// Remotes is a comma-separated list of OVSDB remotes ("unix:/path",
	// "tcp:IP:PORT", "ssl:IP:PORT"), several for a clustered database.
	// Empty means the Target's EnvVar, else its DefaultRemote.
	Remotes string
	// PrivateKey, Certificate and CACert are PEM files for ssl: remotes.
	PrivateKey, Certificate, CACert string
	// Timeout bounds connecting; 0 means DefaultTimeout.
	Timeout time.Duration
	// Reconnect makes the client reconnect (and re-monitor) after losing
	// the server, with backoff and an inactivity probe.
	Reconnect bool
	// NoLeaderOnly lets a clustered database be read from a follower.
	// By default only the leader is used, as ovn-nbctl and ovn-northd do:
	// a follower may lag behind it. A member not connected to its
	// cluster is never used.
	NoLeaderOnly bool
}

// TimeoutOrDefault returns Timeout, or DefaultTimeout when it is zero.
func (o Options) TimeoutOrDefault() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

// RemoteList returns the remotes to try, in order, after defaulting and
// checking their syntax.
func (o Options) RemoteList(t Target) ([]string, error) {
	spec := o.Remotes
	if spec == "" && t.EnvVar != "" {
		spec = os.Getenv(t.EnvVar)
	}
	if spec == "" {
		spec = t.DefaultRemote
	}
	var out []string
	for _, r := range strings.Split(spec, ",") {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		scheme, addr, ok := strings.Cut(r, ":")
		switch {
		case !ok || addr == "":
			return nil, fmt.Errorf("%s remote %q: want unix:PATH, tcp:IP:PORT or ssl:IP:PORT", t.Label, r)
		case scheme == "unix", scheme == "tcp", scheme == "ssl":
		case scheme == "punix" || scheme == "ptcp" || scheme == "pssl":
			return nil, fmt.Errorf("%s remote %q is a passive (listening) remote; aclc connects, give %s:%s", t.Label, r, scheme[1:], addr)
		default:
			return nil, fmt.Errorf("%s remote %q: unknown method %q (want unix, tcp or ssl)", t.Label, r, scheme)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s remote %q names no remote", t.Label, spec)
	}
	return out, nil
}

// Dial connects a libovsdb client for dbModel to the first reachable
// remote of opts that serves t.DB. It reads no rows. It returns the client
// and the remote list it was given.
func Dial(ctx context.Context, t Target, opts Options, dbModel model.ClientDBModel) (client.Client, []string, error) {
	remotes, err := opts.RemoteList(t)
	if err != nil {
		return nil, nil, err
	}
	copts := []client.Option{client.WithLeaderOnly(!opts.NoLeaderOnly)}
	for _, r := range remotes {
		copts = append(copts, client.WithEndpoint(r))
	}
	if slices.ContainsFunc(remotes, func(r string) bool { return strings.HasPrefix(r, "ssl:") }) {
		cfg, err := opts.TLSConfig(t.Label)
		if err != nil {
			return nil, nil, err
		}
		copts = append(copts, client.WithTLSConfig(cfg))
	}
	timeout := opts.TimeoutOrDefault()
	if opts.Reconnect {
		bo := backoff.NewExponentialBackOff()
		bo.MaxInterval = 10 * time.Second
		bo.MaxElapsedTime = 0
		copts = append(copts, client.WithReconnect(timeout, bo),
			client.WithInactivityCheck(2*timeout, timeout, bo))
	}
	c, err := client.NewOVSDBClient(dbModel, copts...)
	if err != nil {
		return nil, nil, fmt.Errorf("%s client: %w", t.Label, err)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.Connect(cctx); err != nil {
		c.Close()
		return nil, nil, connectError(ctx, t, opts, remotes, err)
	}
	return c, remotes, nil
}

// connectError explains why no remote served t.DB: nothing answered in
// time, or what answered is another database.
func connectError(ctx context.Context, t Target, opts Options, remotes []string, err error) error {
	where := strings.Join(remotes, ",")
	msg := err.Error()
	switch {
	case strings.Contains(msg, "target database "+t.DB+" not found"):
		tlsCfg, _ := opts.TLSConfig(t.Label)
		var found []string
		hint := ""
		for _, r := range remotes {
			dbs, perr := listDatabases(ctx, r, tlsCfg, opts.TimeoutOrDefault())
			if perr != nil {
				continue
			}
			found = append(found, fmt.Sprintf("%s serves %s", r, strings.Join(dbs, ", ")))
			if h := otherDatabase(t, dbs); h != "" {
				hint = h
			}
		}
		if len(found) > 0 {
			return fmt.Errorf("%s has no %s database: %s%s", where, t.DB, strings.Join(found, "; "), hint)
		}
		return fmt.Errorf("%s has no %s database", where, t.DB)
	case strings.Contains(msg, "validation error"):
		return fmt.Errorf("%s at %s does not match %s aclc was built for: %w", t.Label, where, t.Schema, err)
	case errors.Is(err, context.DeadlineExceeded) || strings.Contains(msg, "deadline exceeded") || strings.Contains(msg, "i/o timeout"):
		return unreachable(t, fmt.Sprintf("%s at %s did not answer within %v (--timeout): %v", t.Label, where, opts.TimeoutOrDefault(), err), perRemote(remotes, err))
	}
	return unreachable(t, fmt.Sprintf("cannot reach %s at %s: %v", t.Label, where, err), perRemote(remotes, err))
}
