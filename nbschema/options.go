package nbschema

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// DefaultRemote is the NB remote used when neither Options.Remotes nor
// $OVN_NB_DB is set, as for ovn-nbctl.
const DefaultRemote = "unix:/var/run/ovn/ovnnb_db.sock"

// DefaultTimeout bounds connecting to the NB when Options.Timeout is zero.
const DefaultTimeout = 10 * time.Second

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
}

// remotes returns the remotes to try, in order, after defaulting and
// checking their syntax.
func (o Options) remotes() ([]string, error) {
	spec := o.Remotes
	if spec == "" {
		spec = os.Getenv("OVN_NB_DB")
	}
	if spec == "" {
		spec = DefaultRemote
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
			return nil, fmt.Errorf("NB remote %q: want unix:PATH, tcp:IP:PORT or ssl:IP:PORT", r)
		case scheme == "unix", scheme == "tcp", scheme == "ssl":
		case scheme == "punix" || scheme == "ptcp" || scheme == "pssl":
			return nil, fmt.Errorf("NB remote %q is a passive (listening) remote; aclc connects, give %s:%s", r, scheme[1:], addr)
		default:
			return nil, fmt.Errorf("NB remote %q: unknown method %q (want unix, tcp or ssl)", r, scheme)
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("NB remote %q names no remote", spec)
	}
	return out, nil
}

func (o Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}

// readTimeout bounds the initial monitor reply, which carries every
// monitored row (about 4 s for 50k ACLs over a unix socket).
func (o Options) readTimeout() time.Duration {
	return max(6*o.timeout(), time.Minute)
}
