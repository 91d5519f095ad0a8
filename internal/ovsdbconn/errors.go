package ovsdbconn

import (
	"errors"
	"strings"
)

// ErrUnreachable matches (errors.Is) every UnreachableError: no remote
// served the database, for a reason that may pass — nothing listening
// yet, no answer in time, only followers or members cut off from their
// cluster (an election under way). A caller that runs as a daemon retries
// on it; every other error of Dial and DialRaw (a remote serving another
// database, bad TLS files, a malformed remote list) stays wrong until the
// operator changes something, and is not one.
var ErrUnreachable = errors.New("database not reachable")

// UnreachableError says why no remote served the database: one
// RemoteError per remote tried, in order.
type UnreachableError struct {
	// Label names the database ("NB", "SB").
	Label string
	// Remotes are the failures, one per remote.
	Remotes []RemoteError
	msg     string
}

// RemoteError is why one remote did not serve the database.
type RemoteError struct {
	Remote string
	Err    error
}

func (e RemoteError) Error() string { return e.Remote + ": " + e.Err.Error() }

// Error is the message Dial and DialRaw have always given: the remotes
// and each one's failure.
// One built outside this package reads "cannot reach LABEL: " and the
// remotes' errors.
func (e *UnreachableError) Error() string {
	if e.msg == "" {
		return "cannot reach " + e.Label + ": " + joinRemote(e.Remotes)
	}
	return e.msg
}

// Is matches ErrUnreachable.
func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }

// Unwrap returns each remote's error.
func (e *UnreachableError) Unwrap() []error {
	out := make([]error, len(e.Remotes))
	for i, r := range e.Remotes {
		out[i] = r.Err
	}
	return out
}

// unreachable builds an UnreachableError whose message is msg.
func unreachable(t Target, msg string, remotes []RemoteError) *UnreachableError {
	return &UnreachableError{Label: t.Label, Remotes: remotes, msg: msg}
}

// perRemote gives every remote of where the same error err.
func perRemote(remotes []string, err error) []RemoteError {
	out := make([]RemoteError, 0, len(remotes))
	for _, r := range remotes {
		out = append(out, RemoteError{Remote: r, Err: err})
	}
	return out
}

// joinRemote is errors.Join of the remotes' errors, as the messages have
// always read ("r1: err1\nr2: err2").
func joinRemote(rs []RemoteError) string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.Error()
	}
	return strings.Join(parts, "\n")
}
