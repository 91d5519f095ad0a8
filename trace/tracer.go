package trace

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbview"
)

// This file holds the Tracer: the datapaths and parsed flows it keeps
// between traces, the microflow parser, and Trace, which runs one packet
// and turns the walk into a Result.

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
		if rt, err := t.routerOfPort(inport); err != nil || rt != nil {
			if err != nil {
				return nil, err
			}
			return t.traceFromRouter(rt, inport, microflow, opt)
		}
		return nil, inputErrorf("unknown port %q", inport)
	}
	if dpID == "" {
		dpID = pdp
	} else if dpID != pdp {
		return nil, inputErrorf("port %q is not on datapath %q", inport, opt.Datapath)
	}
	// Only --outport forces the output port: an outport in the microflow
	// is what the ingress stages read, and ls_in_l2_lkup overwrites it
	// from eth.dst, as in ovn-trace.
	outport := opt.Outport
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
		return nil, inputErrorf("microflow: eth.dst is not set, and ls_in_l2_lkup needs it to choose the output port (give eth.dst == MAC, or --outport PORT)")
	}
	r, res, err := t.newRun(dp, nil, m, microflow, opt)
	if err != nil {
		return nil, err
	}
	res.Datapath = dp.name
	root := &Node{}
	node := root.add(NodePipeline, fmt.Sprintf("ingress(dp=%q, inport=%q)", friendlyDP(dp.ls), friendlyPort(dp.ports[inport], inport)))
	r.trace(m, lflow.Ingress, 0, node)
	res.Modelled = dp.modelled
	for _, st := range dp.layout.Stages() {
		if r.passed[st.Name()] {
			res.PassThrough = append(res.PassThrough, st.Name())
		}
	}
	return r.finish(res, root), nil
}

// finish fills res from the finished run r whose nodes are under root.
func (r *run) finish(res *Result, root *Node) *Result {
	res.Root = root.Subs
	res.CTOps = r.ops
	if res.CTOps == nil {
		res.CTOps = []string{}
	}
	res.Truncated = r.truncated
	res.Warnings = append(res.Warnings, r.warnings...)
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
	res.Passed, res.Samples = r.passes, r.samples
	res.Hops, res.NotTraced = r.hops, r.notTraced
	if r.notTraced != "" {
		res.Verdict = VerdictNotTraced
	}
	return res
}

// newRun starts a run of microflow m at switch dp or router rt.
func (t *Tracer) newRun(dp *dpModel, rt *rtModel, m *expr.Microflow, microflow string, opt Options) (*run, *Result, error) {
	r := &run{t: t, dp: dp, rt: rt, opt: opt, passed: map[string]bool{},
		decided: map[dpPipe]*FlowInfo{}, bypass: map[dpPipe]*FlowInfo{}, lastEval: map[dpPipe]*FlowInfo{}}
	if r.opt.MaxRecirculations <= 0 {
		r.opt.MaxRecirculations = DefaultMaxRecirculations
	}
	if opt.LBDst != "" {
		ip, port, ok := nbview.ParseLBKey(strings.TrimSpace(opt.LBDst))
		if !ok {
			return nil, nil, inputErrorf("--lb-dst %s: bad address (want IP or IP:PORT)", opt.LBDst)
		}
		r.lbDst, r.lbPort = ip, port
	}
	res := &Result{Microflow: microflow, Packet: m.String()}
	for _, s := range opt.CT {
		res.CTStates = append(res.CTStates, s.String())
		if w := s.Validate(); w != "" {
			res.Warnings = append(res.Warnings, w)
		}
	}
	return r, res, nil
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
