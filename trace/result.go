package trace

import (
	"fmt"
)

// This file holds what a trace takes and gives: Options, the verdicts, the
// ACL and decision records, Result, and the input error type.

// DefaultMaxRecirculations bounds the conntrack recirculations and pipeline
// re-entries of one trace.
const DefaultMaxRecirculations = 32

// maxTables bounds the tables visited by one trace.
const maxTables = 4096

// Options control one trace.
type Options struct {
	// Datapath is the logical switch (name or NB UUID); "" to take the
	// switch of the microflow's inport, as ovn-trace does.
	Datapath string
	// CT holds the ct_state of successive conntrack recirculations
	// (ovn-trace --ct); est|trk is used once they run out.
	CT []CTState
	// LBDst is ovn-trace's --lb-dst: the backend, "IP" or "IP:PORT", to
	// pick for ct_lb_mark.
	LBDst string
	// Outport overrides the output port ls_in_l2_lkup would pick from
	// eth.dst (as does an outport in the microflow).
	Outport string
	// SelectID is ovn-trace's --select-id: the member an ECMP select()
	// picks (the first when 0 or not a member).
	SelectID int
	// MaxRecirculations bounds recirculations (DefaultMaxRecirculations
	// when 0).
	MaxRecirculations int
	// SB is what the trace reads of the Southbound database (aclc trace
	// --sb): the learned neighbours. nil: an SB with none, as ovn-trace
	// sees one without them.
	SB *SB
}

// InputError is a problem with what the user asked to trace (unknown
// datapath or port, unparsable or ambiguous microflow, missing field, bad
// --ct or --lb-dst); the CLI exits 2 on it.
type InputError struct{ Msg string }

// Error returns the message.
func (e *InputError) Error() string { return e.Msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, args...)}
}

// Verdict is how a trace ends.
type Verdict string

// Verdicts.
const (
	VerdictOutput Verdict = "output"
	VerdictDrop   Verdict = "drop"
	VerdictReject Verdict = "reject"
	// VerdictNotTraced: the packet reached something aclc does not model
	// (NAT, a gateway port, ARP resolution, ...); Result.NotTraced says
	// what. The CLI exits 3.
	VerdictNotTraced Verdict = "not traced"
)

// ACLInfo describes an NB ACL.
type ACLInfo struct {
	UUID      string `json:"uuid"`
	Name      string `json:"name,omitempty"`
	Owner     string `json:"owner"` // `switch "ls"` or `port group "pg"`
	Direction string `json:"direction"`
	Priority  int    `json:"priority"`
	Match     string `json:"match"`
	Action    string `json:"action"`
	Label     int    `json:"label,omitempty"`
	Tier      int    `json:"tier,omitempty"`   // 1-3 on releases with tiers (24.03+); 0 otherwise
	Origin    string `json:"origin,omitempty"` // fixture file:line:col, if known
}

// String describes the ACL in one line.
func (a *ACLInfo) String() string {
	s := fmt.Sprintf("ACL %s %s priority %d match=%q action=%s", a.Owner, a.Direction, a.Priority, a.Match, a.Action)
	if a.Name != "" {
		s += fmt.Sprintf(" name=%q", a.Name)
	}
	if a.Label != 0 {
		s += fmt.Sprintf(" label=%d", a.Label)
	}
	if a.Tier != 0 {
		s += fmt.Sprintf(" tier=%d", a.Tier)
	}
	return s + " (" + shortUUID(a.UUID) + ")"
}

func shortUUID(u string) string {
	if len(u) > 8 {
		return u[:8]
	}
	return u
}

// Decision is the flow that decided a pipeline's fate: the last ACL-stage
// flow the packet matched, or the flow that dropped it.
type Decision struct {
	// Datapath is the switch whose pipeline it is.
	Datapath string    `json:"datapath"`
	Pipeline string    `json:"pipeline"`
	Flow     *FlowInfo `json:"flow"`
}

// String describes the decision in one line.
func (d *Decision) String() string {
	if d.Flow.ACL != nil {
		return d.Flow.ACL.String()
	}
	if d.Flow.NB != "" {
		return fmt.Sprintf("%s priority %d match=(%s) (%s)", d.Flow.Stage, d.Flow.Priority, d.Flow.Match, d.Flow.NB)
	}
	return fmt.Sprintf("%s priority %d match=(%s) (no NB ACL)", d.Flow.Stage, d.Flow.Priority, d.Flow.Match)
}

// Sample is one sampling point a packet hit: a sample() action, the ACL
// it samples for and the IPFIX observation ids it exports.
type Sample struct {
	Datapath string   `json:"datapath"`
	Pipeline string   `json:"pipeline"`
	Stage    string   `json:"stage"`
	ACL      *ACLInfo `json:"acl,omitempty"`
	// CollectorSet, ObsDomain and ObsPoint are the sample() arguments,
	// ObsPoint resolved from its register (the NB Sample metadata).
	CollectorSet string `json:"collector_set"`
	ObsDomain    string `json:"obs_domain"`
	ObsPoint     string `json:"obs_point"`
	Probability  string `json:"probability"`
}

// String describes the sampling point in one line.
func (s *Sample) String() string {
	out := fmt.Sprintf("%s obs_point=%s collector_set=%s obs_domain=%s", s.Stage, s.ObsPoint, s.CollectorSet, s.ObsDomain)
	if s.ACL != nil {
		out += " for " + s.ACL.String()
	}
	return out
}

// Result is one trace.
type Result struct {
	Datapath string `json:"datapath"`
	// Microflow is the packet as given; Packet is every field it sets.
	Microflow string     `json:"microflow"`
	Packet    string     `json:"packet"`
	CTStates  []string   `json:"ct_states,omitempty"`
	CTOps     []string   `json:"ct_ops"`
	Verdict   Verdict    `json:"verdict"`
	Outputs   []string   `json:"outputs,omitempty"`
	Decisions []Decision `json:"decisions,omitempty"`
	// Stateless lists, per pipeline, the allow-stateless ACL whose
	// ls_*_pre_acl flow kept the packet out of conntrack.
	Stateless []Decision `json:"stateless,omitempty"`
	// Passed lists the pass ACLs (23.06+) whose eval flow matched, in
	// trace order: each handed the packet down to the next tier.
	Passed []Decision `json:"passed,omitempty"`
	// Samples are the sampling points the packet hit (24.09+), in trace
	// order.
	Samples []Sample `json:"samples,omitempty"`
	// PassThrough names the stages outside aclc's set the packet went
	// through without their flows; Modelled the non-ACL stages whose
	// flows aclc models from the NB.
	PassThrough []string `json:"pass_through,omitempty"`
	Modelled    []string `json:"modelled,omitempty"`
	Truncated   bool     `json:"truncated,omitempty"`
	// NotTraced says what aclc does not model, for VerdictNotTraced:
	// "lr0 NAT (lr_in_dnat)".
	NotTraced string `json:"not_traced,omitempty"`
	// Hops are the datapaths the packet entered after the first switch
	// (through logical routers), in trace order.
	Hops     []Hop    `json:"hops,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	Root     []*Node  `json:"trace"`
}
