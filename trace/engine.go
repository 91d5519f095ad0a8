// Package trace follows one packet through the logical flows aclc compiles,
// the way ovn-trace follows it through the Southbound: table by table,
// highest-priority matching flow first, executing the register and
// conntrack actions the ACL stages use and recirculating through conntrack
// with the ct_state values given by --ct (ovn-trace's semantics: ct_next
// sets the next state, ct_lb_mark ORs it in, est|trk once they run out).
//
// Stages aclc does not compile pass the packet through, except a few that
// are modelled from the NB because they decide where the packet goes or
// recirculate it: ls_in_lb (load balancer VIPs: ct_lb_mark(backends=...)),
// ls_in_pre_hairpin (chk_lb_hairpin, computed as ovn-trace does),
// ls_in_l2_lkup and ls_in_l2_unknown (the output port, from the port MAC
// addresses or an explicit outport; broadcast floods every port, an
// unknown MAC goes to the "unknown"-address ports), ls_in_arp_rsp (ARP
// replies for the ports' IPv4 addresses), ls_in_dns_lookup and the port security
// stages (check_in_port_sec()/check_out_port_sec() against the ports'
// port_security, as ovn-trace computes them; output).
package trace

import (
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbview"
)

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

// Tracer traces packets through the flows compiled from one NB snapshot.
//
// A Tracer keeps the datapaths it has traced through, with their parsed
// matches, so that tracing many packets costs little more than one. It is
// not safe for concurrent use.
type Tracer struct {
	snap  *nbschema.Snapshot
	view  *nbview.View
	flows *lflow.Listing
	acls  map[string]*ACLInfo
	dps   map[[2]string]*dpModel // by switch UUID and explicit outport
	rs    *routerSet             // the routers, compiled on first use
	// dialect is the match language of the NB's release: the one its
	// ovn-trace and ovn-controller parse the flows with.
	dialect *expr.Dialect
}

// New returns a tracer over snap; flows is what compile.Compile(snap)
// produced (compiled here when nil).
func New(snap *nbschema.Snapshot, flows *lflow.Listing) *Tracer {
	if flows == nil {
		flows = compile.Compile(snap).Flows
	}
	t := &Tracer{snap: snap, view: nbview.New(snap), flows: flows, acls: map[string]*ACLInfo{}, dps: map[[2]string]*dpModel{},
		dialect: compile.Dialect(snap.Release)}
	for id, a := range snap.ACLs {
		if o := t.view.Owner(id); o.Table != "" {
			info := &ACLInfo{UUID: id, Owner: o.Phrase(), Direction: string(a.Direction), Priority: a.Priority,
				Match: a.Match, Action: string(a.Action), Label: a.Label, Tier: a.Tier, Origin: snap.Origin[id]}
			if a.Name != nil {
				info.Name = *a.Name
			}
			t.acls[id] = info
		}
	}
	return t
}

// findSwitch returns the NB UUID of the switch called name (or with that
// UUID).
func (t *Tracer) findSwitch(name string) (string, bool) {
	for _, id := range nbschema.SortedKeys(t.snap.Switches) {
		if id == name || t.snap.Switches[id].Name == name {
			return id, true
		}
	}
	return "", false
}

// portSwitch returns the UUID of the switch that has the port called name.
func (t *Tracer) portSwitch(name string) (string, bool) {
	p, ok := t.view.PortByName(name)
	if !ok {
		return "", false
	}
	return t.view.PortSwitch(p), true
}

// parseMicroflow parses s, turning errors into InputErrors that show
// where parsing failed.
func parseMicroflow(d *expr.Dialect, s string, r expr.Resolver) (*expr.Microflow, error) {
	m, err := d.ParseMicroflow(s, r)
	if err == nil {
		return m, nil
	}
	if errors.Is(err, expr.ErrAmbiguous) {
		// ovn-trace solves all constraints together; expr.ParseMicroflow
		// resolves prerequisites in the order the fields appear, so that
		// "ip.ttl == 64 && ip4.src == ..." looks ambiguous (ip4 || ip6)
		// until ip4.src is seen. Retry with the terms that pin the
		// network protocol first.
		if re, ok := reorderMicroflow(d, s, r); ok {
			if m2, err2 := d.ParseMicroflow(re, r); err2 == nil {
				return m2, nil
			}
		}
	}
	var pe *expr.Error
	switch {
	case errors.As(err, &pe):
		return nil, inputErrorf("microflow: syntax error at offset %d: %s\n  %s\n  %s^", pe.Offset, pe.Msg, s, strings.Repeat(" ", pe.Offset))
	case errors.Is(err, expr.ErrAmbiguous):
		return nil, inputErrorf("microflow: %v (the microflow must pin every field it tests to one value, e.g. ip4 or ip6 for tcp)", err)
	case errors.Is(err, expr.ErrContradictory):
		return nil, inputErrorf("microflow: %v", err)
	}
	return nil, inputErrorf("microflow: %v", err)
}

// reorderMicroflow rewrites a conjunction with the terms naming IPv4/IPv6
// fields or protocols first.
func reorderMicroflow(d *expr.Dialect, s string, r expr.Resolver) (string, bool) {
	e, err := d.Parse(s, r)
	if err != nil {
		return "", false
	}
	var terms []expr.Node
	var flatten func(expr.Node)
	flatten = func(n expr.Node) {
		switch n := n.(type) {
		case *expr.Paren:
			flatten(n.X)
		case *expr.Binary:
			if !n.Or {
				for _, t := range n.Terms {
					flatten(t)
				}
				return
			}
			terms = append(terms, n)
		default:
			terms = append(terms, n)
		}
	}
	flatten(e.Root)
	rank := func(n expr.Node) int {
		t := n.String()
		for _, p := range []string{"ip4", "ip6", "icmp4", "icmp6", "arp", "nd"} {
			if strings.HasPrefix(t, p) || strings.Contains(t, " "+p) || strings.Contains(t, "("+p) {
				return 0
			}
		}
		return 1
	}
	slices.SortStableFunc(terms, func(a, b expr.Node) int { return rank(a) - rank(b) })
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = "(" + t.String() + ")"
	}
	return strings.Join(parts, " && "), true
}

func getString(m *expr.Microflow, name string) string {
	v, err := m.Get(name)
	if err != nil {
		return ""
	}
	s, _ := v.(string)
	return s
}

func getInt(m *expr.Microflow, name string) *big.Int {
	v, err := m.Get(name)
	if err != nil {
		return new(big.Int)
	}
	n, ok := v.(*big.Int)
	if !ok {
		return new(big.Int)
	}
	return n
}

// Trace traces the packet described by microflow (ovn-trace syntax).
func (t *Tracer) Trace(microflow string, opt Options) (*Result, error) {
	global, err := t.view.Resolver("")
	if err != nil {
		return nil, err
	}
	m, err := parseMicroflow(t.dialect, microflow, global)
	if err != nil {
		return nil, err
	}
	inport := getString(m, "inport")
	var dpID string
	if opt.Datapath != "" {
		id, ok := t.findSwitch(opt.Datapath)
		if !ok {
			return nil, inputErrorf("unknown datapath %q", opt.Datapath)
		}
		dpID = id
	}
	if inport == "" {
		return nil, inputErrorf("microflow: flow match expression does not match on inport (give inport == \"PORT\")")
	}
	pdp, ok := t.portSwitch(inport)
	if !ok {
		return nil, inputErrorf("unknown port %q", inport)
	}
	if dpID == "" {
		dpID = pdp
	} else if dpID != pdp {
		return nil, inputErrorf("port %q is not on datapath %q", inport, opt.Datapath)
	}
	outport := opt.Outport
	if mo := getString(m, "outport"); mo != "" && outport == "" {
		outport = mo
	}
	var flows *lflow.Datapath
	for _, d := range t.flows.Datapaths {
		if d.UUID == dpID {
			flows = d
		}
	}
	dp := t.dps[[2]string{dpID, outport}]
	if dp == nil {
		if dp, err = newDPModel(t.view, dpID, flows, outport); err != nil {
			return nil, err
		}
		t.dps[[2]string{dpID, outport}] = dp
	}
	if outport != "" {
		if _, ok := dp.ports[outport]; !ok {
			return nil, inputErrorf("outport %q is not a port of datapath %q", outport, dp.name)
		}
	}
	// Re-parse against the datapath's port groups.
	if m, err = parseMicroflow(t.dialect, microflow, dp.res); err != nil {
		return nil, err
	}
	if outport == "" && getInt(m, "eth.dst").Sign() == 0 {
		return nil, inputErrorf("microflow: eth.dst is not set, and ls_in_l2_lkup needs it to choose the output port (give eth.dst == MAC, outport == \"PORT\" or --outport)")
	}
	r := &run{t: t, dp: dp, opt: opt, passed: map[string]bool{},
		decided: map[dpPipe]*FlowInfo{}, bypass: map[dpPipe]*FlowInfo{}}
	if r.opt.MaxRecirculations <= 0 {
		r.opt.MaxRecirculations = DefaultMaxRecirculations
	}
	if opt.LBDst != "" {
		ip, port, ok := nbview.ParseLBKey(strings.TrimSpace(opt.LBDst))
		if !ok {
			return nil, inputErrorf("--lb-dst %s: bad address (want IP or IP:PORT)", opt.LBDst)
		}
		r.lbDst, r.lbPort = ip, port
	}
	res := &Result{Datapath: dp.name, Microflow: microflow, Packet: m.String()}
	for _, s := range opt.CT {
		res.CTStates = append(res.CTStates, s.String())
		if w := s.Validate(); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
	}
	root := &Node{}
	node := root.add(NodePipeline, fmt.Sprintf("ingress(dp=%q, inport=%q)", friendlyDP(dp.ls), friendlyPort(dp.ports[inport], inport)))
	r.trace(m, lflow.Ingress, 0, node)
	res.Root = root.Subs
	res.CTOps = r.ops
	if res.CTOps == nil {
		res.CTOps = []string{}
	}
	res.Truncated = r.truncated
	res.Warnings = append(res.Warnings, r.warnings...)
	res.Modelled = dp.modelled
	for _, st := range dp.layout.Stages() {
		if r.passed[st.Name()] {
			res.PassThrough = append(res.PassThrough, st.Name())
		}
	}
	res.Verdict, res.Outputs = verdictOf(res.Root), r.outputs
	for _, k := range r.seen {
		if f := r.decided[k]; f != nil {
			res.Decisions = append(res.Decisions, Decision{Datapath: k.dp, Pipeline: k.p.String(), Flow: f})
		}
	}
	for _, k := range r.seen {
		if f := r.bypass[k]; f != nil {
			res.Stateless = append(res.Stateless, Decision{Datapath: k.dp, Pipeline: k.p.String(), Flow: f})
		}
	}
	if res.Verdict != VerdictOutput && r.terminal != nil && !r.terminalIsDecision {
		res.Decisions = append(res.Decisions, Decision{Datapath: r.terminalPipeline.dp, Pipeline: r.terminalPipeline.p.String(), Flow: r.terminal})
	}
	if r.truncated && r.notTraced == "" {
		// a path was cut short: its fate is unknown
		r.notTraced = "trace stopped at a bound (see the trace), the packet's fate is unknown"
	}
	res.Hops, res.NotTraced = r.hops, r.notTraced
	if r.notTraced != "" {
		res.Verdict = VerdictNotTraced
	}
	return res, nil
}

// verdictOf classifies a finished trace as ovn-trace's output shows it: a
// reject generated a packet (tcp_reset, icmp4, icmp6, sctp_abort), else an
// output("port") means output, else the packet was dropped.
func verdictOf(nodes []*Node) Verdict {
	outs := 0
	rejected := false
	var walk func([]*Node)
	walk = func(ns []*Node) {
		for _, n := range ns {
			switch {
			case n.Type == NodeTransformation && isRejectName(n.Text):
				rejected = true
			case n.Type == NodeModify && strings.HasPrefix(n.Text, "output("):
				outs++
			}
			walk(n.Subs)
		}
	}
	walk(nodes)
	switch {
	case rejected:
		return VerdictReject
	case outs > 0:
		return VerdictOutput
	}
	return VerdictDrop
}

func isRejectName(s string) bool {
	switch s {
	case "tcp_reset", "icmp4", "icmp6", "sctp_abort":
		return true
	}
	return false
}

// run is the state of one trace.
type run struct {
	t         *Tracer
	dp        *dpModel
	opt       Options
	ctIdx     int
	lbDst     netip.Addr
	lbPort    uint16
	recirc    int
	tables    int
	truncated bool
	ops       []string
	warnings  []string
	passed    map[string]bool
	outputs   []string // ports the packet was output to
	decided   map[dpPipe]*FlowInfo
	// bypass is the allow-stateless ACL whose pre-ACL flow kept the
	// packet out of conntrack, per switch pipeline.
	bypass map[dpPipe]*FlowInfo
	seen   []dpPipe // the switch pipelines the trace entered, in order
	// rt is the router being traced (nil in a switch); hops the
	// datapaths entered through routers; notTraced what aclc does not
	// model, when the trace reached it.
	rt        *rtModel
	hops      []Hop
	notTraced string
	// terminal is the last flow whose actions ended a path without
	// passing the packet on.
	terminal           *FlowInfo
	terminalPipeline   dpPipe
	terminalIsDecision bool
	// frozen counts the reject packets being traced: their path records
	// no decisions.
	frozen int
}

func (r *run) warnf(format string, args ...any) {
	w := fmt.Sprintf(format, args...)
	if !slices.Contains(r.warnings, w) {
		r.warnings = append(r.warnings, w)
	}
}

// nextCT returns the ct_state of the next recirculation (ovn-trace
// next_ct_state), appending ovn-trace's comment when --ct ran out.
func (r *run) nextCT(comment *string) CTState {
	if r.ctIdx < len(r.opt.CT) {
		r.ctIdx++
		return r.opt.CT[r.ctIdx-1]
	}
	*comment += " /* default (use --ct to customize) */"
	return DefaultCTState
}

// recirculate counts one recirculation; false once the bound is hit.
func (r *run) recirculate(super *Node) bool {
	r.recirc++
	if r.recirc > r.opt.MaxRecirculations {
		if !r.truncated {
			super.add(NodeError, fmt.Sprintf("*** trace stopped: more than %d recirculations", r.opt.MaxRecirculations))
		}
		r.truncated = true
		return false
	}
	return true
}

func (r *run) flowInfo(tf *tflow, st lflow.Stage) *FlowInfo {
	fi := &FlowInfo{Stage: st.Name(), Table: st.Table(), Priority: tf.f.Priority, Match: tf.f.Match,
		Actions: tf.f.Actions, Origin: tf.origin, Source: tf.f.Source}
	if a := r.t.acls[tf.f.Source]; a != nil {
		fi.ACL = a
	}
	return fi
}

// lookup returns the highest-priority flow of fs that matches m, and the
// other flows matching at that priority with different actions.
func (r *run) lookup(fs []*tflow, m *expr.Microflow) (*tflow, []*tflow) {
	var best *tflow
	var tie []*tflow
	for _, tf := range fs {
		if best != nil && tf.f.Priority < best.f.Priority {
			break
		}
		if !r.matches(tf, m) {
			continue
		}
		if best == nil {
			best = tf
		} else if tf.f.Actions != best.f.Actions {
			tie = append(tie, tf)
		}
	}
	return best, tie
}

func (r *run) matches(tf *tflow, m *expr.Microflow) bool {
	res := r.resolver()
	tf.parse(r.t.dialect, res)
	if tf.err != nil {
		r.warnf("%s priority %d match=(%s): %v", tf.f.Stage, tf.f.Priority, tf.f.Match, tf.err)
		return false
	}
	if tf.always {
		return true
	}
	ok, err := expr.Eval(tf.match, m, res)
	if err != nil {
		r.warnf("%s priority %d match=(%s): %v", tf.f.Stage, tf.f.Priority, tf.f.Match, err)
		return false
	}
	return ok
}

// trace is ovn-trace's trace__: look the packet up in table of pipeline p
// and execute the matching flow's actions under super.
func (r *run) trace(m *expr.Microflow, p lflow.Pipeline, table int, super *Node) {
	r.tables++
	if r.tables > maxTables {
		if !r.truncated {
			super.add(NodeError, fmt.Sprintf("*** trace stopped: more than %d tables visited", maxTables))
		}
		r.truncated = true
		return
	}
	if r.rt != nil {
		r.traceRouter(m, p, table, super)
		return
	}
	if r.dp.unmodelled != "" {
		r.stopNotTraced(super, r.dp.unmodelled)
		return
	}
	for {
		st, ok := r.dp.layout.StageAt(p, table)
		if !ok {
			super.add(NodeTable, fmt.Sprintf("%2d. no match (implicit drop)", table))
			return
		}
		fs, has := r.dp.tables[tableKey{p, table}]
		if !has && !st.IsACLStage() {
			r.passed[st.Name()] = true
			table++
			continue
		}
		tf, tie := r.lookup(fs, m)
		if tf == nil {
			super.add(NodeTable, fmt.Sprintf("%2d. %s: no match (implicit drop)", table, st.Name()))
			r.setTerminal(&FlowInfo{Stage: st.Name(), Table: table, Match: "no match (implicit drop)", Origin: originCompiled}, p, st)
			return
		}
		fi := r.flowInfo(tf, st)
		for _, o := range tie {
			fi.Tie = append(fi.Tie, fmt.Sprintf("match=(%s), action=(%s)", o.f.Match, o.f.Actions))
		}
		if len(tie) > 0 {
			r.warnf("%s: %d flows match at priority %d with different actions; OVN's choice among them is undefined (aclc takes match=(%s))",
				st.Name(), len(tie)+1, tf.f.Priority, tf.f.Match)
		}
		if r.frozen > 0 {
			// inside a reject's generated packet: no decisions
		} else if (st.Kind() == lflow.InPreACL || st.Kind() == lflow.OutPreACL) && fi.ACL != nil {
			r.bypass[r.key(p)] = fi
		}
		if isDecisionStage(st) && r.frozen == 0 {
			// A later flow overrides the decision unless it is a
			// stage's "1" default or the earlier one came from an ACL.
			if prev := r.decided[r.key(p)]; prev == nil || fi.ACL != nil || (prev.ACL == nil && !tf.always) {
				r.decided[r.key(p)] = fi
			}
		}
		// ovn-trace omits "1 → next;" stages from its output.
		if tf.always && tf.f.Actions == "next;" {
			table++
			continue
		}
		text := fmt.Sprintf("%2d. %s: %s, priority %d", table, st.Name(), tf.f.Match, tf.f.Priority)
		node := super.add(NodeTable, text)
		node.Flow = fi
		if !r.actions(tf.acts, m, p, table, node, fi, st) {
			r.setTerminal(fi, p, st)
		}
		return
	}
}

func isDecisionStage(st lflow.Stage) bool {
	switch st.Kind() {
	case lflow.InACL, lflow.InACLAfterLB, lflow.OutACL:
		return true
	}
	return false
}

// isActionStage reports whether st is an ACL action stage (23.06+), which
// acts on the verdict bits an eval stage set.
func isActionStage(st lflow.Stage) bool {
	switch st.Kind() {
	case lflow.InACLAction, lflow.InACLAfterLBAction, lflow.OutACLAction:
		return true
	}
	return false
}

func (r *run) setTerminal(fi *FlowInfo, p lflow.Pipeline, st lflow.Stage) {
	if r.frozen > 0 {
		return
	}
	r.terminal, r.terminalPipeline = fi, r.key(p)
	r.terminalIsDecision = isDecisionStage(st) && r.decided[r.key(p)] == fi
	if prev := r.decided[r.key(p)]; isActionStage(st) && prev != nil && prev.ACL != nil {
		// 23.06+: the action stage carries out the verdict the ACL's
		// eval flow set; that ACL is the decision.
		r.terminalIsDecision = true
	}
	if isDecisionStage(st) {
		r.decided[r.key(p)] = fi
		r.terminalIsDecision = true
	}
}

// isRegister reports whether an assignment to field is invisible in
// ovn-trace's output (registers, flags and the logical ports).
func isRegister(field string) bool {
	w := word(field)
	for _, p := range []string{"reg", "xreg", "xxreg", "flags", "inport", "outport"} {
		if strings.HasPrefix(w, p) {
			return true
		}
	}
	return false
}

// value turns the right-hand side of an assignment into what
// Microflow.Set takes: a port name, a constant, or the value of a field.
func value(m *expr.Microflow, rhs string) (any, error) {
	if s, err := strconv.Unquote(rhs); err == nil {
		return s, nil
	}
	if v, err := m.Get(rhs); err == nil {
		return v, nil
	}
	return rhs, nil
}

// actions executes acts (ovn-trace trace_actions); it reports whether the
// packet was passed on (next, output, a recirculation, a generated packet).
func (r *run) actions(acts []action, m *expr.Microflow, p lflow.Pipeline, table int, super *Node, fi *FlowInfo, st lflow.Stage) bool {
	if len(acts) == 0 {
		super.add(NodeAction, "drop;")
		return false
	}
	passed := false
	for _, a := range acts {
		text := a.text
		if a.kind == aNext && a.hasPipeline && a.pipeline == p && a.table >= 0 {
			// ovn-trace prints a jump within the pipeline as next(N).
			text = fmt.Sprintf("next(%d);", a.table)
		}
		super.add(NodeAction, text)
		switch a.kind {
		case aNoop, aDrop:
		case aNext:
			np, nt := p, table+1
			if a.table >= 0 {
				nt = a.table
			}
			sup := super
			if a.hasPipeline && a.pipeline != p {
				if !r.recirculate(super) {
					return true
				}
				np = a.pipeline
				port := getString(m, "inport")
				dir := "inport"
				if np == lflow.Egress {
					port, dir = getString(m, "outport"), "outport"
				}
				sup = super.add(NodePipeline, fmt.Sprintf("%s(dp=%q, %s=%q)", np, friendlyDP(r.dp.ls), dir, r.fport(port)))
			}
			r.trace(m, np, nt, sup)
			passed = true
		case aOutput:
			r.output(m, p, super)
			passed = true
		case aLoad:
			if strings.HasPrefix(a.rhs, "get_fdb(") {
				// No FDB is modelled: no MAC was learnt.
				m.Set(a.lhs, "none")
				continue
			}
			v, err := value(m, a.rhs)
			if err == nil {
				err = m.Set(a.lhs, v)
			}
			if err != nil {
				super.add(NodeError, fmt.Sprintf("*** %s: %v", a.text, err))
				continue
			}
			if !isRegister(a.lhs) {
				text := a.lhs + " = " + a.rhs
				if n, ok := v.(*big.Int); ok {
					// a move: ovn-trace prints the value moved
					text = a.lhs + " = " + formatField(a.lhs, n)
				}
				super.add(NodeModify, text)
			}
		case aExchange:
			va, err1 := m.Get(a.lhs)
			vb, err2 := m.Get(a.rhs)
			if err1 != nil || err2 != nil {
				super.add(NodeError, fmt.Sprintf("*** %s: cannot exchange", a.text))
				continue
			}
			if !isRegister(a.lhs) {
				// ovn-trace's summarize_move, once per direction
				for _, mv := range [][2]string{{a.lhs, a.rhs}, {a.rhs, a.lhs}} {
					if n, ok := map[string]any{a.lhs: va, a.rhs: vb}[mv[1]].(*big.Int); ok {
						super.add(NodeModify, mv[0]+" = "+formatField(mv[0], n))
					}
				}
			}
			m.Set(a.lhs, vb)
			m.Set(a.rhs, va)
		case aHairpin:
			// ovn-trace's chk_lb_hairpin: 1 only for a DNATted packet whose
			// source is its destination.
			res := 0
			if CTState(getInt(m, "ct_state").Uint64())&CTDNAT != 0 {
				if getInt(m, "ip4.src").Cmp(getInt(m, "ip4.dst")) == 0 && getInt(m, "ip6.src").Cmp(getInt(m, "ip6.dst")) == 0 {
					res = 1
				}
			}
			m.Set(a.lhs, res)
			super.add(NodeModify, fmt.Sprintf("%s = %d", a.lhs, res))
		case aDNSLookup:
			m.Set(a.lhs, 0)
			super.add(NodeError, "*** dns_lookup action not implemented")
		case aPortSec:
			m.Set(a.lhs, r.checkPortSec(m, a.rhs == "check_in_port_sec()"))
		case aCTNext:
			r.ops = append(r.ops, "ct_next")
			comment := ""
			state := r.nextCT(&comment)
			node := super.add(NodeTransformation, fmt.Sprintf("ct_next(ct_state=%s%s)", state, comment))
			if !r.recirculate(node) {
				return true
			}
			c := m.Clone()
			c.Set("ct_state", uint64(state))
			r.trace(c, p, table+1, node)
			passed = true
		case aCTLB:
			r.ops = append(r.ops, a.name)
			r.ctLB(a, m, p, table, super)
			passed = true
		case aCTCommit:
			r.ops = append(r.ops, "ct_commit")
		case aCTCommitNAT:
			r.ops = append(r.ops, "ct_commit_nat")
			c := m.Clone()
			text := "ct_commit_nat /* assuming no un-nat entry, so no change */"
			if st := CTState(getInt(c, "ct_state").Uint64()); st&CTTrk == 0 {
				c.Set("ct_state", uint64(st|r.nextCT(&text)))
			}
			node := super.add(NodeTransformation, text)
			if !r.recirculate(node) {
				return true
			}
			r.trace(c, p, table+1, node)
			passed = true
		case aCTClear:
			m.Set("ct_state", 0)
			m.Set("ct_mark", 0)
			m.Set("ct_label", 0)
		case aReject:
			if r.reject(a, m, p, table, super, fi, st) {
				passed = true
			}
		case aLog:
			args := logArgs(a.args)
			name := args["name"]
			if name == "" {
				name = "<unnamed>"
			}
			dir := "IN"
			if p == lflow.Egress {
				dir = "OUT"
			}
			sev := args["severity"]
			if sev == "" {
				sev = "info"
			}
			verdict := args["verdict"]
			if verdict == "" {
				verdict = "allow"
			}
			super.add(NodeTransformation, fmt.Sprintf("LOG: ACL name=%s, direction=%s, verdict=%s, severity=%s, packet=\"%s\"",
				name, dir, verdict, sev, strings.ReplaceAll(m.String(), `"`, "'")))
		case aDecTTL:
			decTTL(m, super)
		case aSelect:
			r.selectMember(a, m, p, table, super)
			passed = true
		case aGenerate:
			r.generate(a, m, p, table, super, fi)
			passed = true
		case aLookupNeighbor:
			// Whether the sender's MAC is already bound only decides
			// whether the router learns it (put_arp): not the packet's
			// fate. aclc has no SB; it answers as ovn-trace does with an
			// empty MAC_Binding table.
			m.Set(a.lhs, 0)
			super.add(NodeAction, "/* lookup failed - No MAC binding. */")
		case aNotModelled:
			r.stopNotTraced(super, r.dpName()+" "+r.notModelledWhat(a, m)+" ("+fi.Stage+")")
			return true
		case aUnsupported:
			super.add(NodeError, "*** aclc trace does not execute this action: "+a.text)
		}
	}
	return passed
}

// ctLB is ovn-trace's execute_ct_lb.
func (r *run) ctLB(a action, m *expr.Microflow, p lflow.Pipeline, table int, super *Node) {
	c := m.Clone()
	comment := ""
	family := 0
	switch getInt(m, "eth.type").Uint64() {
	case 0x800:
		family = 4
	case 0x86dd:
		family = 6
	}
	if family != 0 {
		var backends []string
		if args, _, _ := strings.Cut(a.args, ";"); strings.HasPrefix(strings.TrimSpace(args), "backends=") {
			for _, b := range strings.Split(strings.TrimPrefix(strings.TrimSpace(args), "backends="), ",") {
				if b = strings.TrimSpace(b); b != "" {
					backends = append(backends, b)
				}
			}
		}
		var (
			dstIP   netip.Addr
			dstPort uint16
			have    bool
			byLBDst bool
		)
		if len(backends) > 0 {
			for _, b := range backends {
				ip, port, ok := nbview.ParseLBKey(b)
				if !ok || (family == 4) != ip.Is4() {
					continue
				}
				if r.lbDst.IsValid() && r.lbDst.Is4() == ip.Is4() && r.lbDst == ip {
					r.lbDst = netip.Addr{} // consumed, as in ovn-trace
					dstIP, dstPort, have, byLBDst = ip, port, true, true
					break
				}
				if !have {
					// ovn-trace picks a random backend; aclc takes the first.
					dstIP, dstPort, have = ip, port, true
				}
			}
			if !have {
				super.add(NodeError, "*** no load balancing destination (use --lb-dst)")
			} else if len(backends) > 1 && !byLBDst {
				r.warnf("%s(%s): ovn-trace picks a backend at random; aclc took %s (choose one with --lb-dst)", a.name, a.args, dstIP)
			}
		} else if r.lbDst.IsValid() && (family == 4) == r.lbDst.Is4() {
			dstIP, dstPort, have = r.lbDst, r.lbPort, true
		}
		st := CTState(getInt(c, "ct_state").Uint64())
		if have {
			if family == 4 {
				c.Set("ip4.dst", dstIP.String())
			} else {
				c.Set("ip6.dst", dstIP.String())
			}
			if dstPort != 0 {
				switch getInt(c, "ip.proto").Uint64() {
				case 6:
					c.Set("tcp.dst", int(dstPort))
				case 17:
					c.Set("udp.dst", int(dstPort))
				case 132:
					c.Set("sctp.dst", int(dstPort))
				}
			}
			st |= CTDNAT
		}
		st |= r.nextCT(&comment)
		c.Set("ct_state", uint64(st))
	}
	node := super.add(NodeTransformation, a.name+comment)
	if !r.recirculate(node) {
		return
	}
	r.trace(c, p, table+1, node)
}

// reject is ovn-trace's execute_reject: a TCP RST, SCTP ABORT or ICMP
// unreachable is generated, addressed back to the sender, and the nested
// actions run on it.
func (r *run) reject(a action, m *expr.Microflow, p lflow.Pipeline, table int, super *Node, fi *FlowInfo, st lflow.Stage) bool {
	proto := getInt(m, "ip.proto").Uint64()
	ip6 := getInt(m, "eth.type").Uint64() == 0x86dd
	name := "icmp4"
	switch {
	case proto == 6:
		name = "tcp_reset"
	case proto == 132:
		name = "sctp_abort"
	case ip6:
		name = "icmp6"
	}
	// ovn-trace's guards against a reject of its own reject packet: they
	// look at the OVS tp_src / tcp_flags of the packet being rejected.
	switch {
	case name == "icmp4" && proto == 1 && getInt(m, "icmp4.type").Uint64() == 3,
		name == "icmp6" && proto == 58 && getInt(m, "icmp6.type").Uint64() == 1,
		(name == "tcp_reset" || name == "sctp_abort") && getInt(m, "tcp.flags").Uint64() == 0x004:
		return false
	}
	c := m.Clone()
	swap := func(x, y string) {
		vx, _ := c.Get(x)
		vy, _ := c.Get(y)
		c.Set(x, vy)
		c.Set(y, vx)
	}
	swap("eth.src", "eth.dst")
	if ip6 {
		swap("ip6.src", "ip6.dst")
	} else {
		swap("ip4.src", "ip4.dst")
	}
	c.Set("ip.ttl", 255)
	switch name {
	case "tcp_reset":
		c.Set("tcp.flags", 0x004)
	case "sctp_abort":
		// ovn-trace 23.03 sets the protocol of its SCTP ABORT to TCP,
		// keeping the ports.
		src, dst := getInt(m, "sctp.src"), getInt(m, "sctp.dst")
		c.Set("ip.proto", 6)
		c.Set("tcp.src", src)
		c.Set("tcp.dst", dst)
	case "icmp4", "icmp6":
		setICMPUnreach(c, name == "icmp6")
	}
	node := super.add(NodeTransformation, name)
	if prev := r.decided[r.key(p)]; !isActionStage(st) || prev == nil || prev.ACL == nil {
		// (an action stage's reject carries out its eval ACL's verdict)
		r.decided[r.key(p)] = fi
	}
	// The generated packet's own path does not change what decided the
	// original packet's fate.
	r.frozen++
	r.actions(a.nested, c, p, table, node, fi, st)
	r.frozen--
	return true
}

// output is ovn-trace's execute_output.
func (r *run) output(m *expr.Microflow, p lflow.Pipeline, super *Node) {
	if r.rt != nil {
		r.routerOutput(m, p, super)
		return
	}
	out := getString(m, "outport")
	if out == "" {
		super.add(NodeError, "*** output to null logical port")
		return
	}
	if out == "_MC_flood" && p == lflow.Ingress {
		r.flood(m, super, out, r.dp.floodPorts())
		return
	}
	if out == "_MC_unknown" && p == lflow.Ingress {
		r.flood(m, super, out, r.dp.unknownPorts())
		return
	}
	if out == "_MC_flood_l2" {
		// Its members are the SB Multicast_Group northd keeps (ovn-trace
		// finds none in a sandbox without chassis): not modelled.
		r.stopNotTraced(super, fmt.Sprintf("%s floods to multicast group _MC_flood_l2, whose members aclc does not model (give outport == \"PORT\" or --outport)", r.dpName()))
		return
	}
	if strings.HasPrefix(out, "_MC_") {
		super.add(NodeError, fmt.Sprintf("*** aclc trace does not follow multicast group %q; give outport == \"PORT\" or --outport", out))
		return
	}
	port := r.dp.ports[out]
	if port == nil {
		super.add(NodeError, fmt.Sprintf("*** unknown port or multicast group %q", out))
		return
	}
	if p == lflow.Egress {
		if port.Type == "router" {
			if lrp := r.t.view.RouterPortPeer(port); lrp != nil {
				// ovn-trace continues into the router's ingress pipeline.
				super.add(NodeOutput, fmt.Sprintf("/* output to %q, type \"patch\" */", r.fport(out)))
				r.enterRouter(m, lrp.Name, super)
				return
			}
		}
		super.add(NodeOutput, fmt.Sprintf("/* output to %q, type %q */", r.fport(out), port.Type))
		super.add(NodeModify, fmt.Sprintf("output(%q)", r.fport(out)))
		r.outputs = append(r.outputs, out)
		return
	}
	in := getString(m, "inport")
	if out == in && getInt(m, "flags.loopback").Sign() == 0 {
		super.add(NodeOutput, "/* omitting output because inport == outport && !flags.loopback */")
		return
	}
	e := m.Clone()
	for _, reg := range []string{"xxreg0", "xxreg1", "xreg4", "flags"} {
		e.Set(reg, 0)
	}
	node := super.add(NodePipeline, fmt.Sprintf("egress(dp=%q, inport=%q, outport=%q)", friendlyDP(r.dp.ls), r.fport(in), r.fport(out)))
	if !r.recirculate(node) {
		return
	}
	r.trace(e, lflow.Egress, 0, node)
}

// flood is execute_output for a multicast group (_MC_flood: every enabled
// port of the switch; _MC_unknown: those with "unknown" addresses), in
// name order: one egress pipeline per port, all on the same copy of the
// packet, as in ovn-trace.
func (r *run) flood(m *expr.Microflow, super *Node, group string, ports []string) {
	in := getString(m, "inport")
	loopback := getInt(m, "flags.loopback").Sign() != 0
	mc := super.add(NodePipeline, fmt.Sprintf("multicast(dp=%q, mcgroup=%q)", friendlyDP(r.dp.ls), group))
	e := m.Clone()
	for _, reg := range []string{"xxreg0", "xxreg1", "xreg4", "flags"} {
		e.Set(reg, 0)
	}
	for _, name := range ports {
		node := mc.add(NodePipeline, fmt.Sprintf("egress(dp=%q, inport=%q, outport=%q)", friendlyDP(r.dp.ls), r.fport(in), r.fport(name)))
		if name == in && !loopback {
			node.add(NodeOutput, "/* omitting output because inport == outport && !flags.loopback */")
			continue
		}
		if !r.recirculate(node) {
			return
		}
		e.Set("outport", name)
		r.trace(e, lflow.Egress, 0, node)
	}
}

// formatField prints v the way OVS prints a value of field: MACs, IPv4 and
// IPv6 addresses in their notation, other values in decimal.
func formatField(field string, v *big.Int) string {
	switch field {
	case "eth.src", "eth.dst", "arp.sha", "arp.tha", "nd.sll", "nd.tll":
		var b [6]byte
		v.FillBytes(b[:])
		return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5])
	case "arp.spa", "arp.tpa", "ip4.src", "ip4.dst":
		var b [4]byte
		v.FillBytes(b[:])
		return netip.AddrFrom4(b).String()
	case "ip6.src", "ip6.dst", "nd.target":
		var b [16]byte
		v.FillBytes(b[:])
		return netip.AddrFrom16(b).String()
	}
	return v.String()
}
