package nbschema

import (
	"time"

	"github.com/aclc/aclc/internal/ovsdbconn"
	"github.com/aclc/aclc/release"
)

// DefaultRemote is the NB remote used when neither Options.Remotes nor
// $OVN_NB_DB is set, as for ovn-nbctl.
const DefaultRemote = "unix:/var/run/ovn/ovnnb_db.sock"

// DefaultTimeout bounds connecting to the NB when Options.Timeout is zero.
const DefaultTimeout = ovsdbconn.DefaultTimeout

// Options says how to reach a live NB.
type Options struct {
	// Remotes is a comma-separated list of OVSDB remotes
	// ("unix:/path", "tcp:IP:PORT", "ssl:IP:PORT"), several for a
	// clustered NB. Empty means $OVN_NB_DB, else DefaultRemote.
	Remotes string
	// PrivateKey, Certificate and CACert are PEM files for ssl: remotes,
	// as ovn-nbctl -p, -c and -C.
	PrivateKey, Certificate, CACert string
	// Timeout bounds connecting (each step: dial, schema, ...); 0 means
	// DefaultTimeout. Reading the monitored tables, which takes seconds
	// for a large NB, may take readTimeout: six times as long, at least a
	// minute.
	Timeout time.Duration
	// Reconnect makes the client reconnect (and re-monitor) after losing
	// the NB, for long-running watchers. One-shot commands leave it off.
	Reconnect bool
	// NoLeaderOnly lets a clustered NB be read from a follower (ovn-nbctl
	// --no-leader-only). By default only the leader is read, as ovn-nbctl
	// and ovn-northd do; a member cut off from its cluster never is.
	NoLeaderOnly bool
	// Release, when set, is the OVN release to read the NB as, whatever
	// its schema version says (--ovn-version); by default the release is
	// detected from the schema version, and one aclc does not know is an
	// error.
	Release *release.Release
}

// nbTarget is how ovsdbconn reaches the NB.
var nbTarget = ovsdbconn.Target{
	DB: "OVN_Northbound", Label: "NB", EnvVar: "OVN_NB_DB", DefaultRemote: DefaultRemote,
	Schema: "the OVN NB schema of a supported release",
	Hint:   "; the NB is ovnnb_db.sock or port 6641",
}

// conn returns the connection options for package ovsdbconn.
func (o Options) conn() ovsdbconn.Options {
	return ovsdbconn.Options{Remotes: o.Remotes, PrivateKey: o.PrivateKey, Certificate: o.Certificate,
		CACert: o.CACert, Timeout: o.Timeout, Reconnect: o.Reconnect, NoLeaderOnly: o.NoLeaderOnly}
}

func (o Options) timeout() time.Duration { return o.conn().TimeoutOrDefault() }

// readTimeout bounds the initial monitor reply, which carries every
// monitored row (about 4 s for 50k ACLs over a unix socket).
func (o Options) readTimeout() time.Duration {
	return max(6*o.timeout(), time.Minute)
}

// ErrUnreachable matches (errors.Is) the errors of Connect, LoadLive and
// DetectRelease that may pass by themselves: no NB remote answered — nothing
// listening yet, no answer within the timeout, or only Raft followers and
// members cut off from their cluster (an election under way). A daemon
// retries on it; any other error (a remote serving another database, an
// NB of a version aclc cannot vouch for, bad TLS files, a malformed remote)
// needs the operator.
var ErrUnreachable = ovsdbconn.ErrUnreachable
