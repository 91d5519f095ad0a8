package reach

import (
	"fmt"

	"github.com/aclc/aclc/pset"
)

// Verdict is the fate of a part's packets in the ACL stages.
type Verdict string

// The verdicts; NotExact is the verdict of a part reach cannot execute
// exactly (its Reason says why).
const (
	Allow    Verdict = "allow"
	Drop     Verdict = "drop"
	Reject   Verdict = "reject"
	NotExact Verdict = "not-exact"
)

// Default is the deciding ACL of a part no ACL's flow decided: the
// stage's default flow did (or no flow matched).
const Default = "default"

// Part is one outcome of a (from, to) pair: the packets entering the
// switch at from whose fate it is.
type Part struct {
	Verdict Verdict
	// Conntrack: the packets went through conntrack (a ct_next,
	// ct_lb_mark or ct_commit_nat recirculation); Committed: a ct_commit
	// or ct_commit_nat ran on their path.
	Conntrack, Committed bool
	// Recirculations is how many times the path went through conntrack
	// (each time with Options.CT): a replay with ovn-trace passes --ct
	// that many times.
	Recirculations int
	// Ingress and Egress are the NB UUIDs of the ACLs whose eval-stage
	// flows (ls_in_acl_eval, the after-LB eval stage, ls_out_acl_eval)
	// decided in each pipeline: the last ACL flow on the path, as in
	// package trace (a pass hands over to a later tier's ACL). Default
	// when no ACL's flow did; Egress is "" when the packets never
	// reached egress.
	Ingress, Egress string
	// Stage is the stage where the packets' path ended (the stage that
	// dropped or rejected them, or could not be executed).
	Stage string
	// Reason says why a NotExact part is not exact.
	Reason string
	// Aside, with Options.ExecuteAside, says why the packets' fate after
	// the ACL stages is not known (Verdict is then only the ACL stages').
	Aside string
	// Set holds the packets as they entered the switch (metadata zero).
	Set pset.Set
	// Witness is one packet of Set as an ovn-trace microflow: the packet
	// from would send to to where the part allows it (the package
	// comment); replayed with ovn-trace and one --ct new|trk per
	// recirculation it gets the part's verdict.
	Witness string
	// Undelivered, when not empty, says that the L2 lookup sends no
	// packet of the part to to (an ACL pins eth.dst elsewhere): the part
	// is what the ACL stages would do to such packets, but ovn-trace
	// replays its witness to another port, and only an ingress verdict
	// is the same.
	Undelivered string
	// Match is Set's compact header-space form (pset.Describe): an OVN
	// match over the header fields that, with inport == From, outport
	// unset and the metadata zero (the pair's entering packets), is exactly
	// Set, or its first terms with the count of the rest when longer than
	// Options.MatchTerms. MatchError says why there is none (the match
	// is then empty).
	Match      pset.Description
	MatchError string
}

// ACLs returns the deciding ACLs of the part, ingress first.
func (p *Part) ACLs() []string {
	if p.Egress == "" {
		return []string{p.Ingress}
	}
	return []string{p.Ingress, p.Egress}
}

func (p *Part) String() string {
	s := fmt.Sprintf("%s conntrack=%v committed=%v acls=%v stage=%s", p.Verdict, p.Conntrack, p.Committed, p.ACLs(), p.Stage)
	if p.Reason != "" {
		s += " (" + p.Reason + ")"
	}
	return s + ": " + p.Witness
}

// key is what distinguishes parts: parts with equal keys are merged.
type key struct {
	v                   Verdict
	ct, commit          bool
	recirc              int
	in, out, stage, why string
	aside               string
}

func (p *Part) key() key {
	return key{p.Verdict, p.Conntrack, p.Committed, p.Recirculations, p.Ingress, p.Egress, p.Stage, p.Reason, p.Aside}
}
