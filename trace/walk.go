package trace

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/lflow"
)

// This file holds the pipeline walk of one trace (run): table lookup,
// highest-priority match, conntrack state per recirculation, and which
// stages decide.

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
	// tuples are the conntrack tuples of the packets (copies) being
	// traced.
	tuples map[*expr.Microflow]ctTuple
	// lastEval is the last eval-stage ACL flow per pipeline: the ACL whose
	// registers a sample stage reads. passes are the pass ACLs that handed
	// the packet down a tier, samples the sampling points hit, in order.
	lastEval map[dpPipe]*FlowInfo
	passes   []Decision
	samples  []Sample
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
	if best != nil && r.rt == nil && strings.Contains(best.f.Match, "is_chassis_resident(") {
		r.residency(best.f.Stage.Name(), best) // a router's: traceRouter
	}
	return best, tie
}

// residency says what the tracer assumed for a flow that tests
// is_chassis_resident(): as ovn-trace, that every port is resident on the
// chassis the packet is on (which chassis hosts which port is the SB's;
// the answer for a packet on another chassis may differ).
func (r *run) residency(stage string, tf *tflow) {
	r.warnf("%s priority %d match=(%s): is_chassis_resident() taken as true, as ovn-trace does (every port resident on the packet's chassis)", stage, tf.f.Priority, tf.f.Match)
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
			r.stopTie(super, fi, st.Name(), table, tf, tie)
			return
		}
		if r.frozen > 0 {
			// inside a reject's generated packet: no decisions
		} else if (st.Kind() == lflow.InPreACL || st.Kind() == lflow.OutPreACL) && fi.ACL != nil {
			r.bypass[r.key(p)] = fi
		}
		if isDecisionStage(st) && r.frozen == 0 && fi.ACL != nil {
			r.lastEval[r.key(p)] = fi
			if fi.ACL.Action == "pass" {
				k := r.key(p)
				r.passes = append(r.passes, Decision{Datapath: k.dp, Pipeline: k.p.String(), Flow: fi})
			}
		}
		if isSampleStage(st) && strings.Contains(tf.f.Actions, "obs_point=reg") {
			// A sample stage's flow for new connections is shared by the
			// ACLs with the same collector: it samples for the eval ACL
			// that loaded the registers.
			fi.ACL = nil
			if e := r.lastEval[r.key(p)]; e != nil {
				fi.ACL = e.ACL
			}
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

// stopTie ends the trace "not traced" at a table where flows with
// different actions match at the same priority: OVN's choice among them
// is undefined (ovn-trace takes whichever its sort put first, in SB read
// order; OVS, whichever OpenFlow flow it finds).
func (r *run) stopTie(super *Node, fi *FlowInfo, stage string, table int, tf *tflow, tie []*tflow) {
	node := super.add(NodeTable, fmt.Sprintf("%2d. %s: %s, priority %d", table, stage, tf.f.Match, tf.f.Priority))
	node.Flow = fi
	r.stopNotTraced(node, fmt.Sprintf("%s: %d flows match at priority %d with different actions (match=(%s) and match=(%s)); OVN's choice among them is undefined (%s)",
		r.dpName(), len(tie)+1, tf.f.Priority, tf.f.Match, tie[0].f.Match, stage))
}

func isDecisionStage(st lflow.Stage) bool {
	switch st.Kind() {
	case lflow.InACL, lflow.InACLAfterLB, lflow.OutACL:
		return true
	}
	return false
}

// isSampleStage reports whether st is an ACL sample stage (24.09+).
func isSampleStage(st lflow.Stage) bool {
	switch st.Kind() {
	case lflow.InACLSample, lflow.InACLAfterLBSample, lflow.OutACLSample:
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
