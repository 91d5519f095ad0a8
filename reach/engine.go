package reach

import (
	"cmp"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/pset"
	"github.com/aclc/aclc/release"
)

// This file holds the Engine: the NB view and compiled flows it answers
// from, and Reach, which sets up one pair's symbolic execution.

// Engine answers reachability questions about the flows compiled from one
// NB snapshot. It is not safe for concurrent use.
type Engine struct {
	snap    *nbschema.Snapshot
	view    *nbview.View
	flows   *lflow.Listing
	layout  *lflow.Layout
	dialect *expr.Dialect
	// models are the switches' tables and sets, by switch UUID: the
	// pairs of a switch share them (a flow's match is converted once).
	models map[string]*swModel
	// join is joined's answer, made on first use.
	join map[string]string
	// shared are the Managers ShareManager gave, by switch name.
	shared map[string]*pset.Manager
}

// ShareManager makes the engine keep the sets of switch name in m
// instead of a Manager of its own, so that they can be compared with
// the sets of another engine given the same m (package diff compares two
// NBs so): m's Space must be over the engine's dialect and list every
// port of the switch (it may list more). Call it before the switch's
// first Reach.
func (e *Engine) ShareManager(name string, m *pset.Manager) error {
	if m.Space().Dialect() != e.dialect {
		return fmt.Errorf("reach: switch %s: the shared space is over another dialect than OVN %s's", name, e.snap.Release.Name())
	}
	for id, sm := range e.models {
		if sm.m != m && e.snap.Switches[id].Name == name {
			return fmt.Errorf("reach: switch %s: its sets are already in a Manager of their own", name)
		}
	}
	e.shared[name] = m
	return nil
}

// swModel is one switch's space, sets and tables.
type swModel struct {
	m    *pset.Manager
	conv *pset.Converter
	res  svcMonitor
	meta map[string]pset.Bits
	// metaBits are meta's bits, metaZero the set where they are all 0.
	metaBits []pset.Bits
	metaZero pset.Set
	tables   map[tableKey]*table
}

// switchModel returns the model of switch id, whose ports are ports (in
// name order), made on first use.
func (e *Engine) switchModel(id string, ports []string) (*swModel, error) {
	if sm := e.models[id]; sm != nil {
		return sm, nil
	}
	m := e.shared[e.snap.Switches[id].Name]
	if m != nil {
		for _, p := range ports {
			if !slices.Contains(m.Space().Ports(), p) {
				return nil, fmt.Errorf("reach: switch %s: port %s is not in the shared space", e.snap.Switches[id].Name, p)
			}
		}
	} else {
		sp, err := pset.NewSpace(e.dialect, ports, "")
		if err != nil {
			return nil, err
		}
		m = pset.NewManager(sp)
	}
	res, err := e.view.Resolver(id)
	if err != nil {
		return nil, err
	}
	sm := &swModel{m: m, res: svcMonitor{Resolver: res, mac: e.snap.GlobalOption("svc_monitor_mac")},
		tables: map[tableKey]*table{}}
	sm.conv = sm.m.Converter(sm.res)
	for _, d := range e.flows.Datapaths {
		if d.UUID == id {
			for _, f := range d.Flows {
				if f.Stage.IsACLStage() {
					k := tableKey{f.Stage.Pipeline(), f.Stage.Table()}
					if sm.tables[k] == nil {
						sm.tables[k] = &table{}
					}
					sm.tables[k].flows = append(sm.tables[k].flows, &flow{f: f})
				}
			}
		}
	}
	for _, t := range sm.tables {
		slices.SortStableFunc(t.flows, func(a, b *flow) int {
			if c := cmp.Compare(b.f.Priority, a.f.Priority); c != 0 {
				return c
			}
			return lflow.Compare(a.f, b.f)
		})
	}
	if err := sm.initMeta(e.snap.Release.Name()); err != nil {
		return nil, err
	}
	e.models[id] = sm
	return sm, nil
}

// Options tune one question.
type Options struct {
	// CT is the ct_state every conntrack recirculation gives the packet;
	// 0 means new|trk, the first packet of a connection.
	CT uint32
	// MaxRecirculations bounds the recirculations of a path (default
	// 16); a longer path is not exact.
	MaxRecirculations int
	// ExecuteAside runs the packets that stages reach does not model
	// decide (ARP/ND, DNS queries) through the ACL stages too, instead of
	// making them a not-exact part at once: their parts get the ACL
	// stages' verdict and carry the reason in Part.Aside. What happens to
	// them after the ACL stages is still not known, so such a verdict is
	// not the packets' fate; it says only whether two NBs' ACL stages
	// treat them alike (package diff uses it so).
	ExecuteAside bool
	// Within, when Restricted, limits the packets considered to those of
	// Within (a set of the switch's Manager, as ShareManager gave it):
	// the parts then partition Entering ∩ Within.
	Within     pset.Set
	Restricted bool
	// MatchTerms bounds the terms of a part's Match (default
	// pset.DefaultMaxTerms); negative: no Match (for callers that only
	// need the sets).
	MatchTerms int
}

// DefaultCT is new|trk (OVS's ct_state bits: new is bit 0, trk bit 5).
const DefaultCT = 0x21

// Result is the answer for one (from, to) pair.
type Result struct {
	Switch, From, To string
	// Manager holds the parts' sets; the Results of one switch's pairs
	// share it (and it grows with each).
	Manager *pset.Manager
	// Entering is the packets considered: what from sends to to as the
	// packets enter the switch (inport == from, outport naming no port
	// until the L2 lookup sets it to to, metadata zero).
	Entering pset.Set
	// Parts partition Entering, in the order their paths were found.
	Parts []*Part
}

// New returns an engine over snap; flows is what compile.CompileWith
// produced for snap's release (compiled here when nil).
func New(snap *nbschema.Snapshot, flows *lflow.Listing) (*Engine, error) {
	if flows == nil {
		flows = compile.CompileWith(snap, compile.Options{Release: snap.Release}).Flows
	}
	l, ok := lflow.LayoutFor(snap.Release.Series())
	if !ok {
		return nil, fmt.Errorf("reach: no stage layout for OVN %s", snap.Release.Name())
	}
	return &Engine{snap: snap, view: nbview.NewFor(snap, snap.Release), flows: flows, layout: l, dialect: compile.Dialect(snap.Release),
		models: map[string]*swModel{}, shared: map[string]*pset.Manager{}}, nil
}

// Ports returns the names of the ports of each switch (by switch name),
// in name order: the pairs Reach can be asked about.
func (e *Engine) Ports() map[string][]string {
	out := map[string][]string{}
	for _, id := range nbschema.SortedKeys(e.snap.Switches) {
		out[e.snap.Switches[id].Name] = e.portsOf(id)
	}
	return out
}

// Reach computes the parts of the traffic from port from to port to of
// one switch. The error is an *InputError for a bad question and a
// *NotExactError when the pair as a whole cannot be executed exactly.
func (e *Engine) Reach(from, to string, opt Options) (*Result, error) {
	rs, errs := e.ReachFrom(from, []string{to}, opt)
	return rs[0], errs[0]
}

// ReachFrom answers the pairs (from, to) for every to of tos, which must
// be ports of from's switch: results[i] and errs[i] are what Reach(from,
// tos[i]) returns. The pairs share the switch's model (its tables
// converted once); each is its own execution, since the packet's outport
// is set only by the L2 lookup, after the ingress stages (sharing the
// ingress part across destinations is left to do).
func (e *Engine) ReachFrom(from string, tos []string, opt Options) (results []*Result, errs []error) {
	results, errs = make([]*Result, len(tos)), make([]error, len(tos))
	if opt.CT == 0 {
		opt.CT = DefaultCT
	}
	if opt.MaxRecirculations <= 0 {
		opt.MaxRecirculations = 16
	}
	fail := func(err error) ([]*Result, []error) {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		return results, errs
	}
	fid, ok := e.view.PortByName(from)
	if !ok {
		return fail(inputErrorf("unknown port %q", from))
	}
	swID := e.view.PortSwitch(fid)
	sw := e.view.SwitchFlags(swID)
	var good []string // the tos the execution answers
	for i, to := range tos {
		tid, ok := e.view.PortByName(to)
		switch {
		case !ok:
			errs[i] = inputErrorf("unknown port %q", to)
		case e.view.PortSwitch(tid) != swID:
			errs[i] = inputErrorf("ports %q and %q are on different switches", from, to)
		case from == to:
			errs[i] = inputErrorf("from and to are the same port %q (OVN does not output a packet to its inport)", from)
		default:
			if why := e.portUnmodelled(sw, tid); why != "" {
				errs[i] = &NotExactError{Switch: sw.LS.Name, From: from, To: to, Reason: why}
			} else {
				good = append(good, to)
			}
		}
	}
	why := e.unmodelled(sw)
	if why == "" {
		why = e.portUnmodelled(sw, fid)
	}
	if why != "" {
		for i, to := range tos {
			if errs[i] == nil {
				errs[i] = &NotExactError{Switch: sw.LS.Name, From: from, To: to, Reason: why}
			}
		}
		return results, errs
	}
	if len(good) == 0 {
		return results, errs
	}
	byTo, err := e.reachAll(sw, from, good, opt)
	if err != nil {
		return fail(err)
	}
	for i, to := range tos {
		if errs[i] == nil {
			results[i] = byTo[to]
		}
	}
	return results, errs
}

// portUnmodelled says why reach cannot execute a pair with port id
// exactly, or "".
func (e *Engine) portUnmodelled(sw *nbview.Switch, id string) string {
	p := e.snap.Ports[id]
	switch {
	case p.Type != "":
		return fmt.Sprintf("port %s is of type %q (only plain VIF ports are modelled)", p.Name, p.Type)
	case p.Enabled != nil && !*p.Enabled:
		return "port " + p.Name + " is disabled"
	case len(e.view.LportMirrors(sw.LS, p)) > 0:
		return "port " + p.Name + " is mirrored (the mirror stages are not modelled)"
	}
	return ""
}

// reachAll answers the pairs (from, to) for every to of tos (ports of
// switch sw that reach can model).
func (e *Engine) reachAll(sw *nbview.Switch, from string, tos []string, opt Options) (map[string]*Result, error) {
	sm, err := e.switchModel(sw.ID, e.portsOf(sw.ID))
	if err != nil {
		return nil, err
	}
	out := make(map[string]*Result, len(tos))
	for _, to := range tos {
		r, err := e.reachOne(sm, sw, from, to, opt)
		if err != nil {
			return nil, err
		}
		out[to] = r
	}
	return out, nil
}

// reachOne executes the packets from sends to to, with the switch's model
// sm.
func (e *Engine) reachOne(sm *swModel, sw *nbview.Switch, from, to string, opt Options) (*Result, error) {
	fid, _ := e.view.PortByName(from)
	tid, _ := e.view.PortByName(to)
	x := &exec{swModel: sm, e: e, opt: opt, to: to, parts: map[key]*Part{}}
	in, err := x.entering(from)
	if err != nil {
		return nil, err
	}
	if opt.Restricted {
		in = x.m.And(in, opt.Within)
	}
	// What stages aclc does not compile decide for some packets: those
	// packets form not-exact parts.
	aside := []struct{ match, why string }{
		{"arp || nd", "ARP and ND packets are answered by the ARP/ND responder (ls_in_arp_rsp), which reach does not model"},
	}
	if e.hasDNS(sw) {
		aside = append(aside, struct{ match, why string }{"udp && udp.dst == 53", "DNS queries go through ls_in_dns_lookup (dns_lookup()), which reach does not model"})
	}
	// What package trace ends "not traced" in the stages after the ACLs
	// (trace/unmodelled.go), or models but reach does not: OVN's DHCP
	// responder answers the port's requests (trace/dhcp.go),
	// handle_svc_check() takes what goes to the service monitor MAC,
	// IGMP/MLD snooping decides multicast.
	if p := e.snap.Ports[fid]; p.Dhcpv4Options != nil || p.Dhcpv6Options != nil {
		aside = append(aside, struct{ match, why string }{"(udp.src == 68 && udp.dst == 67) || (udp.src == 546 && udp.dst == 547)",
			"DHCP requests of port " + from + ", which has DHCP options, are answered by OVN's DHCP responder (ls_in_dhcp_options), which reach does not model"})
	}
	aside = append(aside, struct{ match, why string }{"eth.dst == $svc_monitor_mac", "packets to the service monitor MAC go to handle_svc_check() (ls_in_l2_lkup), which reach does not model"})
	if sw.LS.OtherConfig["mcast_snoop"] == "true" {
		aside = append(aside, struct{ match, why string }{"ip4.mcast || ip6.mcast || igmp || mldv1 || mldv2", "multicast on a switch with mcast_snoop follows IGMP/MLD snooping (ls_in_l2_lkup), which reach does not model"})
	}
	r0 := in
	// The port security stage's fixed flows drop a multicast source and
	// a VLAN tag whatever the port (northd build_lswitch_input_port_sec).
	psec, err := x.conv.Match("eth.src[40] || vlan.present")
	if err != nil {
		return nil, err
	}
	x.end(&state{set: x.m.And(in, psec)}, Drop, e.layout.Stage(lflow.InCheckPortSec).Name(), "")
	in = x.m.Diff(in, psec)
	// Port security: what from's drops at ingress (check_in_port_sec()),
	// what to's drops at egress (check_out_port_sec(), after the
	// ACLs; eth.mcast passes), both before any stage the aside list
	// names.
	if ps, ok := nbview.PortSecurityOf(e.snap.Ports[fid], true); ok {
		allowed, err := x.portSecurity(ps)
		if err != nil {
			return nil, fmt.Errorf("port security of %s: %w", from, err)
		}
		x.end(&state{set: x.m.Diff(in, allowed)}, Drop, e.layout.Stage(lflow.InApplyPortSec).Name(), "")
		in = x.m.And(in, allowed)
		aside = append(aside, struct{ match, why string }{nbview.PortSecurityND,
			"ICMPv6 neighbor solicitations and advertisements: port security also checks their link-layer options and target, which reach does not model"})
	}
	x.outDeny = pset.Empty
	if ps, ok := nbview.PortSecurityOf(e.snap.Ports[tid], false); ok {
		allowed, err := x.portSecurity(ps)
		if err != nil {
			return nil, fmt.Errorf("port security of %s: %w", to, err)
		}
		mcast, err := x.conv.Match("eth.mcast")
		if err != nil {
			return nil, err
		}
		x.outDeny = x.m.Not(x.m.Or(allowed, mcast))
	}
	for _, a := range aside {
		s, err := x.conv.Match(a.match)
		if err != nil {
			return nil, err
		}
		if part := x.m.And(in, s); part != pset.Empty {
			if opt.ExecuteAside {
				x.run(&state{set: part, pipe: lflow.Ingress, aside: a.why})
			} else {
				x.end(&state{set: part}, NotExact, "", a.why)
			}
		}
		in = x.m.Diff(in, s)
	}
	x.run(&state{set: in, pipe: lflow.Ingress})
	wc, err := x.newWitnessChooser(sw, e.snap.Ports[fid], e.snap.Ports[tid])
	if err != nil {
		return nil, err
	}
	r := &Result{Switch: sw.LS.Name, From: from, To: to, Manager: x.m, Entering: r0}
	for _, k := range x.order {
		p := x.parts[k]
		wc.choose(p, to)
		x.describe(p, r0)
		r.Parts = append(r.Parts, p)
	}
	return r, nil
}

// portSecurity is the set of packets ps lets through.
func (x *exec) portSecurity(ps nbview.PortSecurity) (pset.Set, error) {
	var sets [3]pset.Set
	for i, m := range []string{ps.Typed, ps.Other, ps.Known} {
		s, err := x.conv.Match(m)
		if err != nil {
			return pset.Empty, err
		}
		sets[i] = s
	}
	return x.m.Or(sets[0], x.m.Diff(sets[1], sets[2])), nil
}

// describe sets p's Match: its set within the pair's entering packets.
func (x *exec) describe(p *Part, entering pset.Set) {
	if x.opt.MatchTerms < 0 {
		return
	}
	d, err := x.m.Describe(p.Set, entering, pset.DescribeOptions{MaxTerms: x.opt.MatchTerms})
	if err != nil {
		p.MatchError = err.Error()
		return
	}
	p.Match = d
}

// unmodelled says why a switch's stages that aclc does not compile decide
// more than reach models: load balancers, northd-undecided tiers.
func (e *Engine) unmodelled(sw *nbview.Switch) string {
	lbs := e.view.SwitchLBs(sw.LS, false)
	if e.snap.Release.Has(release.LBFromDatapath) {
		lbs = e.view.DatapathLBs(e.view.Switch(sw.ID), e.snap.GlobalOption("install_ls_lb_from_router") == "true") // (with its router ports)
	}
	if len(lbs) > 0 {
		return "the switch has load balancers (ls_in_lb and the hairpin stages are not modelled)"
	}
	if sw.TierContest != nil {
		return "whether northd evaluates the switch's ACL tiers depends on its hash table order (FDP-1154)"
	}
	if e.snap.Release.Has(release.EVPN) {
		if vni, err := strconv.ParseInt(sw.LS.OtherConfig["dynamic-routing-vni"], 10, 64); err == nil && vni >= 0 && vni <= 1<<24-1 {
			return "the switch has EVPN remote VTEPs (other_config:dynamic-routing-vni): its remote FDB and ARP/ND stages are not modelled"
		}
	}
	return ""
}

// hasDNS reports whether the switch has DNS records (northd then writes
// dns_lookup flows).
func (e *Engine) hasDNS(sw *nbview.Switch) bool {
	for _, id := range sw.LS.DNSRecords {
		if d := e.snap.DNS[id]; d != nil && len(d.Records) > 0 {
			return true
		}
	}
	return false
}

// svcMonitor adds the address set northd writes for $svc_monitor_mac, as
// package trace does.
type svcMonitor struct {
	expr.Resolver
	mac string
}

// AddressSet implements expr.Resolver.
func (s svcMonitor) AddressSet(name string) ([]string, bool) {
	if name == "svc_monitor_mac" {
		if s.mac == "" {
			return nil, true
		}
		return []string{s.mac}, true
	}
	return s.Resolver.AddressSet(name)
}

// metaRoots are the root fields that are metadata: zero when a packet
// enters the switch, the only fields actions may write.
var metaRoots = []string{"ct_state", "ct_mark", "ct_label", "flags", "xreg4", "xxreg0", "xxreg1", "pkt.mark"}

// egressCleared are the registers cleared between ingress and egress.
var egressCleared = []string{"xxreg0", "xxreg1", "xreg4", "flags"}

// initMeta resolves the metadata roots of the space.
func (x *swModel) initMeta(rel string) error {
	x.meta = map[string]pset.Bits{}
	for _, name := range metaRoots {
		b, err := x.m.Space().FieldBits(name)
		if err != nil {
			continue // not a field of this release
		}
		x.meta[name] = b
	}
	x.metaZero = x.m.All()
	for _, name := range slices.Sorted(maps.Keys(x.meta)) {
		b := x.meta[name]
		x.metaBits = append(x.metaBits, b)
		x.metaZero = x.m.And(x.metaZero, x.m.Value(b, new(big.Int)))
	}
	for _, name := range append([]string{"ct_state"}, egressCleared...) {
		if _, ok := x.meta[name]; !ok {
			return fmt.Errorf("reach: the dialect of OVN %s has no field %s", rel, name)
		}
	}
	return nil
}

// entering returns the packets from sends to to as they enter the
// switch: inport from, the other string fields naming no port (outport is
// set by the L2 lookup, after the ingress ACL stages) and the metadata
// zero.
func (x *swModel) entering(from string) (pset.Set, error) {
	s, err := x.m.PortIs("inport", from)
	if err != nil {
		return pset.Empty, err
	}
	for _, name := range x.m.Space().PortFields() {
		if name == "inport" {
			continue
		}
		none, err := x.m.PortIs(name, "")
		if err != nil {
			return pset.Empty, err
		}
		s = x.m.And(s, none)
	}
	for _, b := range x.meta {
		s = x.m.And(s, x.m.Value(b, new(big.Int)))
	}
	return s, nil
}

// initial returns the entering packets of a final state: the metadata
// forgotten and zeroed, outport forgotten and none (actions write only
// metadata, so the header is as it entered).
func (x *swModel) initial(s pset.Set) pset.Set {
	s = x.m.And(x.m.ExistsAll(s, x.metaBits), x.metaZero)
	s, err := x.m.AssignPort(s, "outport", "")
	if err != nil {
		panic("reach: outport is a string field of every space: " + err.Error())
	}
	return s
}
