package trace

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// maxHops bounds the datapaths (switches and routers) one trace enters:
// enough for a routing loop to run out of TTL (255), as in ovn-trace,
// which has no bound.
const maxHops = 512

// rtModel is one logical router as the tracer sees it: the flows aclc
// compiles for it (compile.Routers, byte-identical to northd's), by table.
type rtModel struct {
	r      *compile.Router
	tables map[tableKey][]*tflow
	res    expr.Resolver
	nb     map[string]string // NB row UUID → what it is, for --detailed and decisions
	// cr maps the name of each chassis-redirect port (cr-NAME) to its
	// distributed gateway port.
	cr map[string]*compile.RouterPort
}

// routerResolver resolves a router's matches: its ports are the
// router's ports (ovn-trace compares port tunnel keys of the datapath).
type routerResolver struct {
	expr.Resolver
	ports map[string]bool
}

// PortExists implements expr.PortLookup.
func (r routerResolver) PortExists(name string) bool { return r.ports[name] }

// routerSet is the routers of the Tracer's snapshot, compiled once on the
// first trace that reaches a router.
type routerSet struct {
	byName map[string]*rtModel                // router name
	ports  map[string]*compile.RouterPort     // router port name
	owner  map[string]*rtModel                // router port name → router
	peers  map[string]*nbdb.LogicalSwitchPort // router port name → switch port
}

func (t *Tracer) routerSet() (*routerSet, error) {
	if t.rs != nil {
		return t.rs, nil
	}
	res, err := t.view.Resolver("")
	if err != nil {
		return nil, err
	}
	rs := &routerSet{byName: map[string]*rtModel{}, ports: map[string]*compile.RouterPort{},
		owner: map[string]*rtModel{}, peers: map[string]*nbdb.LogicalSwitchPort{}}
	for _, r := range compile.Routers(t.snap) {
		ports, cr := map[string]bool{}, map[string]*compile.RouterPort{}
		for name, p := range r.Ports {
			ports[name] = true
			if p.Gateway {
				// the chassis-redirect port is a port of the router's
				// datapath in the SB (type chassisredirect)
				cr["cr-"+name] = p
				ports["cr-"+name] = true
			}
		}
		m := &rtModel{r: r, tables: map[tableKey][]*tflow{}, res: routerResolver{Resolver: res, ports: ports}, nb: t.routerRows(r), cr: cr}
		for _, f := range r.Flows {
			tf := newTflow(lflow.Flow{Priority: f.Priority, Match: f.Match, Actions: f.Actions, Source: f.Source}, originCompiled)
			k := tableKey{f.Stage.Pipeline(), r.Layout.Table(f.Stage)}
			m.tables[k] = append(m.tables[k], tf) // r.Flows is sorted: priority descending
		}
		rs.byName[r.Name] = m
		for name, p := range r.Ports {
			rs.ports[name], rs.owner[name] = p, m
			if p.PeerLSP != nil {
				rs.peers[name] = p.PeerLSP
			}
		}
	}
	t.rs = rs
	return rs, nil
}

// Hop is one datapath the packet went through.
type Hop struct {
	Datapath string `json:"datapath"`
	Type     string `json:"type"` // "switch" or "router"
	Inport   string `json:"inport"`
}

// stopNotTraced ends this path of the trace: aclc does not model what
// comes next. The first reason is the trace's verdict.
func (r *run) stopNotTraced(super *Node, what string) {
	super.add(NodeError, "*** not traced: "+what)
	if r.notTraced == "" {
		r.notTraced = what
	}
}

// hop counts one more datapath; false (and a truncation) past maxHops.
func (r *run) hop(super *Node, h Hop) bool {
	r.hops = append(r.hops, h)
	if len(r.hops) > maxHops {
		if !r.truncated {
			super.add(NodeError, fmt.Sprintf("*** trace stopped: more than %d datapaths", maxHops))
		}
		r.truncated = true
		return false
	}
	return true
}

// resolver is the expression resolver of the datapath being traced.
func (r *run) resolver() expr.Resolver {
	if r.rt != nil {
		return r.rt.res
	}
	return r.dp.res
}

// enterRouter is ovn-trace's execute_output to a patch port whose peer is
// the router port lrp: the router's ingress pipeline from table 0, with the
// packet's registers as they are and the inport set to lrp.
func (r *run) enterRouter(m *expr.Microflow, lrp string, super *Node) {
	rs, err := r.t.routerSet()
	if err != nil {
		super.add(NodeError, "*** "+err.Error())
		return
	}
	rt := rs.owner[lrp]
	if rt == nil {
		super.add(NodeError, fmt.Sprintf("*** unknown router port %q", lrp))
		return
	}
	if why := r.t.routerNotTraced(rt); why != "" {
		// aclc models routers only as the northd of a version whose
		// router pipeline it verifies writes them
		r.stopNotTraced(super, why)
		return
	}
	node := super.add(NodePipeline, fmt.Sprintf("ingress(dp=%q, inport=%q)", friendlyLR(r.t.snap.Routers[rt.r.UUID], rt.r.Name), shortenUUID(lrp)))
	if !r.hop(node, Hop{Datapath: rt.r.Name, Type: "router", Inport: lrp}) {
		return
	}
	c := r.clone(m)
	c.Set("inport", lrp)
	c.Set("outport", "")
	prevDP, prevRT := r.dp, r.rt
	r.rt = rt
	r.trace(c, lflow.Ingress, 0, node)
	r.dp, r.rt = prevDP, prevRT
}

// enterSwitch continues into the ingress pipeline of the switch that lsp
// belongs to, from a router port.
func (r *run) enterSwitch(m *expr.Microflow, lsp *nbdb.LogicalSwitchPort, super *Node) {
	sid, ok := r.t.portSwitch(lsp.Name)
	if !ok {
		super.add(NodeError, fmt.Sprintf("*** switch port %q is on no switch", lsp.Name))
		return
	}
	dp, err := r.t.switchModel(sid, "")
	if err != nil {
		super.add(NodeError, "*** "+err.Error())
		return
	}
	node := super.add(NodePipeline, fmt.Sprintf("ingress(dp=%q, inport=%q)", friendlyDP(dp.ls), friendlyPort(lsp, lsp.Name)))
	if !r.hop(node, Hop{Datapath: dp.name, Type: "switch", Inport: lsp.Name}) {
		return
	}
	c := r.clone(m)
	c.Set("inport", lsp.Name)
	c.Set("outport", "")
	prevDP, prevRT := r.dp, r.rt
	r.dp, r.rt = dp, nil
	r.trace(c, lflow.Ingress, 0, node)
	r.dp, r.rt = prevDP, prevRT
}

// switchModel returns the tracer's model of switch id.
func (t *Tracer) switchModel(id, outport string) (*dpModel, error) {
	if dp := t.dps[[2]string{id, outport}]; dp != nil {
		return dp, nil
	}
	var flows *lflow.Datapath
	for _, d := range t.flows.Datapaths {
		if d.UUID == id {
			flows = d
		}
	}
	dp, err := newDPModel(t.view, id, flows, outport)
	if err != nil {
		return nil, err
	}
	t.dps[[2]string{id, outport}] = dp
	return dp, nil
}

// traceRouter is trace__ on a router datapath: the compiled router flows,
// table by table.
func (r *run) traceRouter(m *expr.Microflow, p lflow.Pipeline, table int, super *Node) {
	for {
		st, ok := r.rt.r.Layout.StageAt(p, table)
		if !ok {
			super.add(NodeTable, fmt.Sprintf("%2d. no match (implicit drop)", table))
			return
		}
		tf, tie := r.lookup(r.rt.tables[tableKey{p, table}], m)
		if tf == nil {
			super.add(NodeTable, fmt.Sprintf("%2d. %s: no match (implicit drop)", table, st.Name()))
			return
		}
		if strings.Contains(tf.f.Match, "is_chassis_resident(") {
			// a distributed gateway port's flow
			r.residency(st.Name(), tf)
		}
		fi := &FlowInfo{Stage: st.Name(), Table: table, Priority: tf.f.Priority, Match: tf.f.Match,
			Actions: tf.f.Actions, Origin: originCompiled, Source: tf.f.Source, NB: r.rt.nb[tf.f.Source]}
		for _, o := range tie {
			fi.Tie = append(fi.Tie, fmt.Sprintf("match=(%s), action=(%s)", o.f.Match, o.f.Actions))
		}
		if len(tie) > 0 {
			r.stopTie(super, fi, st.Name(), table, tf, tie)
			return
		}
		if tf.always && tf.f.Actions == "next;" {
			table++
			continue
		}
		node := super.add(NodeTable, fmt.Sprintf("%2d. %s: %s, priority %d", table, st.Name(), tf.f.Match, tf.f.Priority))
		node.Flow = fi
		if tf.err != nil {
			super.add(NodeError, fmt.Sprintf("*** %v", tf.err))
			return
		}
		if !r.actions(tf.acts, m, p, table, node, fi, 0) && r.frozen == 0 {
			// the router dropped the packet: that decided its fate
			r.terminal, r.terminalPipeline, r.terminalIsDecision = fi, dpPipe{r.rt.r.Name, p}, false
		}
		return
	}
}

// routerRows describes the NB rows behind a router's flows.
func (t *Tracer) routerRows(r *compile.Router) map[string]string {
	s := t.snap
	out := map[string]string{}
	lr := s.Routers[r.UUID]
	for _, id := range lr.StaticRoutes {
		if rt := s.StaticRoutes[id]; rt != nil {
			d := fmt.Sprintf("static route %s nexthop %s", rt.IPPrefix, rt.Nexthop)
			if rt.Policy != nil && *rt.Policy == "src-ip" {
				d += " policy src-ip"
			}
			out[id] = d + " " + nbWhere(s.Origin[id], id)
		}
	}
	for _, id := range lr.Policies {
		if p := s.Policies[id]; p != nil {
			out[id] = fmt.Sprintf("router policy priority %d match=%q action=%s %s", p.Priority, p.Match, p.Action, nbWhere(s.Origin[id], id))
		}
	}
	for name, p := range r.Ports {
		out[p.NB.UUID] = "router port " + name
	}
	return out
}

// nbWhere is "(uuid8 at file:line:col)" or "(uuid8)".
func nbWhere(origin, id string) string {
	if origin != "" && !strings.HasPrefix(origin, "NB ") {
		return "(" + shortUUID(id) + " at " + origin + ")"
	}
	return "(" + shortUUID(id) + ")"
}

// routerOutput is execute_output on a router datapath: from the ingress
// pipeline to the egress pipeline of the outport; from the egress pipeline
// out of the router port, into its peer (a switch, or a router).
func (r *run) routerOutput(m *expr.Microflow, p lflow.Pipeline, super *Node) {
	out := getString(m, "outport")
	rt := r.rt.r
	if out == "" {
		super.add(NodeError, "*** output to null logical port")
		return
	}
	port := rt.Ports[out]
	if dgp := r.rt.cr[out]; dgp != nil && p == lflow.Ingress {
		// ovn-trace's execute_output: the egress pipeline runs for the
		// chassis-redirect port's distributed port
		super.add(NodeOutput, fmt.Sprintf("/* Replacing type \"chassisredirect\" outport %q with distributed port %q. */", shortenUUID(out), shortenUUID(dgp.Name)))
		m = r.clone(m)
		m.Set("outport", dgp.Name)
		out, port = dgp.Name, dgp
	}
	if port == nil {
		super.add(NodeError, fmt.Sprintf("*** unknown port or multicast group %q", out))
		return
	}
	if p == lflow.Egress {
		super.add(NodeOutput, fmt.Sprintf("/* output to %q, type \"patch\" */", shortenUUID(out)))
		switch {
		case port.PeerLSP != nil:
			r.enterSwitch(m, port.PeerLSP, super)
		case port.PeerRouter != nil:
			r.enterRouter(m, port.PeerRouter.Name, super)
		default:
			super.add(NodeModify, fmt.Sprintf("output(%q)", shortenUUID(out)))
			r.outputs = append(r.outputs, out)
		}
		return
	}
	in := getString(m, "inport")
	if out == in && getInt(m, "flags.loopback").Sign() == 0 {
		super.add(NodeOutput, "/* omitting output because inport == outport && !flags.loopback */")
		return
	}
	e := r.clone(m)
	for _, reg := range egressClearedRegs {
		e.Set(reg, 0)
	}
	// Not a recirculation: a routing loop is bounded by maxHops and
	// maxTables (ovn-trace follows it until the TTL runs out).
	node := super.add(NodePipeline, fmt.Sprintf("egress(dp=%q, inport=%q, outport=%q)", friendlyLR(r.t.snap.Routers[rt.UUID], rt.Name), shortenUUID(in), shortenUUID(out)))
	r.trace(e, lflow.Egress, 0, node)
}

// egressClearedRegs are the registers ovn-trace clears for the egress
// pipeline: every one but the logical inport and outport.
var egressClearedRegs = []string{"xxreg0", "xxreg1", "xreg4", "flags"}

// decTTL is ovn-trace's OVNACT_DEC_TTL.
func decTTL(m *expr.Microflow, super *Node) {
	switch getInt(m, "eth.type").Uint64() {
	case 0x800, 0x86dd:
	default:
		super.add(NodeError, "*** TTL decrement of non-IP packet")
		return
	}
	ttl := getInt(m, "ip.ttl")
	if ttl.Sign() == 0 {
		super.add(NodeError, "*** TTL underflow")
		return
	}
	m.Set("ip.ttl", ttl.Int64()-1)
	super.add(NodeModify, "ip.ttl--")
}

// notModelled names the router actions aclc trace does not execute and
// what they stand for.
var notModelled = map[string]string{
	"nd_ns":               "ND solicitation for an unresolved next hop",
	"nd_na":               "ND advertisement",
	"nd_na_router":        "ND advertisement",
	"handle_dhcpv6_reply": "DHCPv6 reply",
	"chk_ecmp_nh":         "ECMP symmetric reply",
	"chk_ecmp_nh_mac":     "ECMP symmetric reply",
	"check_pkt_larger":    "gateway MTU check",
	"ct_dnat":             "NAT",
	"ct_snat":             "NAT",
}

// notModelledMark is the action of a model flow that stands for flows
// aclc does not generate (model.go's notTracedFlow): `aclc_not_traced("WHY")`
// ends the trace "not traced: WHY". It is no OVN action: northd never
// writes it, and a listing that has it was built by trace's model.
const notModelledMark = "aclc_not_traced"

// notModelledAction reports whether the statement st is one of
// notModelled: "arp { ... }", "reg9[2] = lookup_arp(...)", "get_arp(...)",
// or a model's notModelledMark.
func notModelledAction(st string) (string, bool) {
	if rest, ok := strings.CutPrefix(st, notModelledMark+"("); ok {
		if why, err := strconv.Unquote(strings.TrimSuffix(strings.TrimSpace(rest), ")")); err == nil {
			return why, true
		}
	}
	w := word(st)
	if why, ok := notModelled[w]; ok {
		return why, true
	}
	for i := 0; i < len(st); i++ {
		if st[i] == '=' && i+1 < len(st) && st[i+1] != '=' && (i == 0 || st[i-1] != '=' && st[i-1] != '!' && st[i-1] != '<' && st[i-1] != '>') {
			rhs := word(trimSpace(st[i+1:]))
			if why, ok := notModelled[rhs]; ok {
				return why, true
			}
			break
		}
	}
	return "", false
}

func trimSpace(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	return s
}

// dpPipe is one pipeline of one switch.
type dpPipe struct {
	dp string
	p  lflow.Pipeline
}

// key returns the current switch's pipeline p, remembering the order the
// trace entered them in.
func (r *run) key(p lflow.Pipeline) dpPipe {
	k := dpPipe{r.dp.name, p}
	if !slices.Contains(r.seen, k) {
		r.seen = append(r.seen, k)
	}
	return k
}

// dpName names the datapath being traced.
func (r *run) dpName() string {
	if r.rt != nil {
		return r.rt.r.Name
	}
	return r.dp.name
}

// generate is ovn-trace's execute_icmp4/icmp6/tcp_reset/sctp_abort
// without loopback (a router's own packet, as opposed to reject): the new
// packet keeps the addresses, the nested actions swap them and set the
// type and code.
func (r *run) generate(a action, m *expr.Microflow, p lflow.Pipeline, table int, super *Node, fi *FlowInfo) {
	c := r.clone(m)
	ip6 := getInt(m, "eth.type").Uint64() == 0x86dd
	name := a.name
	switch name {
	case "icmp4", "icmp4_error":
		name = "icmp4"
		setICMPUnreach(c, false)
	case "icmp6", "icmp6_error":
		name = "icmp6"
		setICMPUnreach(c, true)
	case "tcp_reset":
		c.Set("ip.proto", 6)
		c.Set("tcp.flags", 0x004)
	case "sctp_abort":
		c.Set("ip.proto", 132)
		if ip6 {
			// ovn-trace's SCTP ABORT over IPv6 is a TCP segment (23.03
			// through 26.09: execute_sctp6_abort)
			c.Set("ip.proto", 6)
		}
	case "arp":
		// execute_arp: an ARP request from the packet's addresses,
		// which the nested actions address
		c.Set("ip.ttl", 0)
		c.Set("tcp.flags", 0)
		c.Set("eth.type", 0x806)
		c.Set("arp.op", 1)
		c.Set("arp.sha", getInt(m, "eth.src"))
		c.Set("arp.tha", 0)
		c.Set("arp.spa", getInt(m, "ip4.src"))
		c.Set("arp.tpa", getInt(m, "ip4.dst"))
	}
	if name != "arp" {
		c.Set("ip.ttl", 255)
	}
	node := super.add(NodeTransformation, name)
	if r.frozen == 0 && r.rt != nil {
		r.terminal, r.terminalPipeline, r.terminalIsDecision = fi, dpPipe{r.rt.r.Name, p}, false
	}
	r.frozen++
	r.actions(a.nested, c, p, table, node, fi, 0)
	r.frozen--
}

// selectMember is ovn-trace's execute_select: the member given by
// --select-id, else (ovn-trace picks at random) the first, with a warning;
// the trace goes on from the next table.
func (r *run) selectMember(a action, m *expr.Microflow, p lflow.Pipeline, table int, super *Node) {
	var ids []int
	for _, d := range strings.Split(a.args, ",") {
		id, _, _ := strings.Cut(strings.TrimSpace(d), "=")
		if n, err := strconv.Atoi(id); err == nil {
			ids = append(ids, n)
		}
	}
	if len(ids) == 0 {
		super.add(NodeError, "*** select with no members: "+a.text)
		return
	}
	id, note := ids[0], ""
	if i := slices.Index(ids, r.opt.SelectID); r.opt.SelectID != 0 && i >= 0 {
		id = ids[i]
	} else {
		note = " /* aclc takes the first member; ovn-trace selects at random. Use --select-id to specify. */"
		r.warnf("%s: ECMP: ovn-trace selects a member at random; aclc took %d of %v (choose one with --select-id)", r.dpName(), id, ids)
	}
	c := r.clone(m)
	c.Set(a.lhs, id)
	node := super.add(NodeTransformation, fmt.Sprintf("select: %s = %d%s", a.lhs, id, note))
	r.trace(c, p, table+1, node)
}

// setICMPUnreach makes c the ICMP (v6: ICMPv6) destination unreachable
// ovn-trace starts a generated ICMP packet as: type 3 code 1 (v6: 1, 1).
func setICMPUnreach(c *expr.Microflow, v6 bool) {
	if v6 {
		c.Set("ip.proto", 58)
		c.Set("icmp6.type", 1)
		c.Set("icmp6.code", 1)
		return
	}
	c.Set("ip.proto", 1)
	c.Set("icmp4.type", 3)
	c.Set("icmp4.code", 1)
}
