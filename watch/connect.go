package watch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aclc/aclc/internal/ovsdbconn"
	"github.com/aclc/aclc/nbschema"
)

// Default bounds of the backoff between attempts to reach the NB at start:
// the first retry after RetryMin, each next one twice as late, at most
// RetryMax apart — ovn-northd's own reconnect backoff tops out at 8 s too.
const (
	DefaultRetryMin = 250 * time.Millisecond
	DefaultRetryMax = 8 * time.Second
)

// connect reaches the NB and starts the monitor, the way a daemon started
// next to its database must: a watcher may start before ovsdb-server
// listens, or while a Raft cluster still elects its leader. An attempt
// that fails for a reason that may pass (nbschema.ErrUnreachable: nothing
// listening, no answer in time, no usable cluster member yet; or a monitor
// request the connection dropped under) is logged — one line per remote,
// once per backoff step — and retried after the backoff, until
// Config.ConnectTimeout (0: forever). Any other failure (the remote serves
// another database, an NB of a version aclc cannot vouch for, bad TLS
// files) is returned at once: retrying would not change it. It returns nil
// and no error when ctx ends first (the watcher was told to stop).
func (w *Watcher) connect(ctx context.Context) (*nbschema.NB, error) {
	start := time.Now()
	var deadline time.Time
	if w.cfg.ConnectTimeout > 0 {
		deadline = start.Add(w.cfg.ConnectTimeout)
	}
	delay := w.cfg.RetryMin
	for attempt := 1; ; attempt++ {
		nb, err := w.attempt(ctx, deadline)
		if err == nil {
			if attempt > 1 {
				w.log.Info("NB reached", "endpoint", nb.Client.CurrentEndpoint(), "attempts", attempt,
					"after", time.Since(start).Round(time.Millisecond))
			}
			return nb, nil
		}
		if ctx.Err() != nil {
			return nil, nil
		}
		if !errors.Is(err, nbschema.ErrUnreachable) {
			return nil, err
		}
		if w.cfg.Metrics != nil {
			w.cfg.Metrics.ConnectFailures.Inc()
		}
		wait := delay
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left < w.cfg.RetryMin {
				return nil, fmt.Errorf("NB not reached within %v (--timeout), %d attempts: %w",
					w.cfg.ConnectTimeout, attempt, err)
			}
			// Near the deadline, leave the last attempts a quarter of
			// what is left: one that started at the deadline would only
			// fail for want of time and hide the real error.
			wait = min(wait, left-left/4)
		}
		w.logUnreachable(err, attempt, wait)
		select {
		case <-ctx.Done():
			return nil, nil
		case <-time.After(wait):
		}
		delay = min(2*delay, w.cfg.RetryMax)
	}
}

// attempt connects once (each remote tried once, each step bounded by the
// NB options' Timeout, and by deadline when set) and starts the monitor,
// with the tracker's handler in place first so that no change after the
// initial read is missed.
func (w *Watcher) attempt(ctx context.Context, deadline time.Time) (*nbschema.NB, error) {
	if !deadline.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	w.monitorStart = time.Now()
	nb, err := nbschema.Connect(ctx, w.cfg.NB)
	if err != nil {
		return nil, err
	}
	nb.Client.Cache().AddEventHandler(w.track)
	if err := nb.Monitor(ctx); err != nil {
		nb.Close()
		if nb.Client.Connected() && ctx.Err() == nil && !lostConnection(err) {
			return nil, err
		}
		// The server went away between the handshake and the monitor
		// (a member killed, an NB restarted): as unreachable as before.
		return nil, &ovsdbconn.UnreachableError{Label: "NB",
			Remotes: []ovsdbconn.RemoteError{{Remote: nb.Client.CurrentEndpoint(), Err: err}}}
	}
	return nb, nil
}

// lostConnection reports whether err is libovsdb's way of saying the
// connection closed under a request, or that the monitor reply did not
// come in time (a server busy or still loading: worth another attempt).
func lostConnection(err error) bool {
	s := strings.ToLower(err.Error())
	for _, m := range []string{"not connected", "connection is shut down", "eof", "broken pipe", "connection reset", "deadline exceeded", "i/o timeout"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// logUnreachable logs one failed attempt: a line per remote and what it
// said, and when the next attempt comes.
func (w *Watcher) logUnreachable(err error, attempt int, next time.Duration) {
	var ue *ovsdbconn.UnreachableError
	if errors.As(err, &ue) && len(ue.Remotes) > 0 {
		for _, r := range ue.Remotes {
			w.log.Warn("NB not reachable; retrying", "remote", r.Remote, "err", r.Err, "attempt", attempt, "retry_in", next)
		}
		return
	}
	w.log.Warn("NB not reachable; retrying", "err", err, "attempt", attempt, "retry_in", next)
}
