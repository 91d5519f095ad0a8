package watch

import (
	"strings"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
)

// When stale conntrack entries matter is read from the compiled flows of
// each switch — whatever the release's northd writes — not re-derived
// from the NB: the watcher keeps, per switch, the flows of two kinds below
// and applies every delta to them.
//
// Entry flows send a switch's packets into conntrack: a pre-ACL or pre-LB
// flow that requests it (REGBIT_CONNTRACK_DEFER reg0[0] or
// REGBIT_CONNTRACK_NAT reg0[2] set to 1; the pre-stateful stage then runs
// ct_next / ct_lb_mark for packets with the bit), or a pre-stateful flow
// that runs ct_lb_mark / ct_next ungated by those bits (26.03's VIP flows
// of enable-stateless-acl-with-lb). The fixed pre-stateful flows gated by
// the bits are on every switch and send nothing by themselves. When the
// last entry flow of a switch goes, conntrack is no longer consulted there
// and its entries would keep their old verdicts, labels and, from 25.03,
// ct_mark.allow_established (persist-established), which the eval stage
// accepts at once if conntrack comes back: the zones of its ports are
// flushed. Which NB changes get there is the release's: allow-related is
// the only stateful verb in every release, a tier or pass changes nothing
// by itself, an ACL with a network function group is allow-related, a
// load balancer VIP sends its switch's traffic to conntrack.
//
// Network-function redirect flows (26.03) send the packets of connections
// marked ct_label.nf / nf_id to the function: priority-99 flows of the
// network-function stages matching the function's id. Established
// connections keep their label; when a redirect flow goes (an ACL's group
// removed, the group's active function changed, the function deleted) and
// no flow with the same match replaces it in the same batch, the marked
// connections would be dropped by the stage's "no function" flow: the
// zones of the switch's ports are flushed.

// ctRequest are the pre-stage register assignments that ask the
// pre-stateful stage for conntrack.
var ctRequest = []string{"reg0[0] = 1", "reg0[2] = 1"}

// ctGate are the matches on those bits.
var ctGate = []string{"reg0[0] == 1", "reg0[2] == 1"}

// entersConntrack reports whether f is an entry flow.
func entersConntrack(f lflow.Flow) bool {
	switch f.Stage.Kind() {
	case lflow.InPreACL, lflow.OutPreACL, lflow.InPreLB, lflow.OutPreLB:
		for _, r := range ctRequest {
			if strings.Contains(f.Actions, r) {
				return true
			}
		}
	case lflow.InPreStateful, lflow.OutPreStateful:
		if !strings.Contains(f.Actions, "ct_lb_mark") && !strings.Contains(f.Actions, "ct_next") {
			return false
		}
		for _, g := range ctGate {
			if strings.Contains(f.Match, g) {
				return false
			}
		}
		return true
	}
	return false
}

// redirectsToNF reports whether f is a network-function redirect flow
// (or, 26.09, a vtap mirror): ls_in/ls_out_network_function priority 99.
func redirectsToNF(f lflow.Flow) bool {
	k := f.Stage.Kind()
	if (k != lflow.InNF && k != lflow.OutNF) || f.Priority != 99 {
		return false
	}
	a := f.Actions
	if strings.HasPrefix(a, "nf_learn_orig_inport(") {
		// 26.09's inline redirects learn the original inport first.
		if _, rest, ok := strings.Cut(a, "; "); ok {
			a = rest
		}
	}
	// An inline redirect, or a vtap mirror (26.09): without it the
	// connections' replies, marked ct_label.nf, are dropped as well.
	return strings.HasPrefix(a, "outport = ") || strings.HasPrefix(a, "clone {outport = ")
}

// ctUse is what the watcher knows of one switch's conntrack use.
type ctUse struct {
	entries int
	nf      map[string]int // redirect flow match (with pipeline) -> flows
}

// ctTracker follows ctUse for every switch.
type ctTracker map[string]*ctUse

func nfKey(f lflow.Flow) string { return f.Stage.Pipeline().String() + "|" + f.Match }

func (t ctTracker) use(id string) *ctUse {
	u := t[id]
	if u == nil {
		u = &ctUse{nf: map[string]int{}}
		t[id] = u
	}
	return u
}

func (u *ctUse) count(f lflow.Flow, n int) {
	if entersConntrack(f) {
		u.entries += n
	}
	if redirectsToNF(f) {
		k := nfKey(f)
		if u.nf[k] += n; u.nf[k] <= 0 {
			delete(u.nf, k)
		}
	}
}

// load counts the flows of a full listing.
func (t ctTracker) load(l *lflow.Listing) {
	for _, dp := range l.Datapaths {
		u := t.use(dp.UUID)
		for _, f := range dp.Flows {
			u.count(f, 1)
		}
	}
}

// ctRelease is a switch whose stale conntrack entries matter after a
// batch, and why.
type ctRelease struct {
	id, name, reason string
}

// apply counts a delta's flows and returns the switches it released.
func (t ctTracker) apply(d *compile.Delta) []ctRelease {
	var out []ctRelease
	for i := range d.Datapaths {
		dd := &d.Datapaths[i]
		u := t.use(dd.UUID)
		before := u.entries
		var lostNF []lflow.Flow
		for _, f := range dd.Removed {
			u.count(f, -1)
			if redirectsToNF(f) && u.nf[nfKey(f)] == 0 {
				lostNF = append(lostNF, f)
			}
		}
		for _, f := range dd.Added {
			u.count(f, 1)
		}
		if dd.Deleted {
			delete(t, dd.UUID) // its ports are deleted too: flushed as such
			continue
		}
		switch {
		case before > 0 && u.entries == 0:
			out = append(out, ctRelease{dd.UUID, dd.Name, "switch " + dd.Name + " no longer sends traffic to conntrack (its last stateful ACL or load balancer VIP is gone)"})
		default:
			for _, f := range lostNF {
				if u.nf[nfKey(f)] == 0 {
					out = append(out, ctRelease{dd.UUID, dd.Name, "switch " + dd.Name + ": network function redirect (" + f.Match + ") removed; connections marked for it would be dropped"})
					break
				}
			}
		}
	}
	return out
}
