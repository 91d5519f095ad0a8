package reach

import (
	"cmp"
	"fmt"
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
}

// swModel is one switch's space, sets and tables.
type swModel struct {
	m      *pset.Manager
	conv   *pset.Converter
	res    svcMonitor
	meta   map[string]pset.Bits
	tables map[tableKey]*table
}

// switchModel returns the model of switch id, whose ports are ports (in
// name order), made on first use.
func (e *Engine) switchModel(id string, ports []string) (*swModel, error) {
	if sm := e.models[id]; sm != nil {
		return sm, nil
	}
	sp, err := pset.NewSpace(e.dialect, ports, "")
	if err != nil {
		return nil, err
	}
	res, err := e.view.Resolver(id)
	if err != nil {
		return nil, err
	}
	sm := &swModel{m: pset.NewManager(sp), res: svcMonitor{Resolver: res, mac: e.snap.GlobalOption("svc_monitor_mac")},
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
	// packets enter the switch (inport == from, outport == to, metadata
	// zero).
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
		models: map[string]*swModel{}}, nil
}

// Ports returns the names of the ports of each switch (by switch name),
// in name order: the pairs Reach can be asked about.
func (e *Engine) Ports() map[string][]string {
	out := map[string][]string{}
	for _, id := range nbschema.SortedKeys(e.snap.Switches) {
		sw := e.view.SwitchFlags(id)
		var names []string
		for _, p := range e.view.Ports(sw) {
			names = append(names, p.Name)
		}
		slices.Sort(names)
		out[sw.LS.Name] = names
	}
	return out
}

// Reach computes the parts of the traffic from port from to port to of
// one switch. The error is an *InputError for a bad question and a
// *NotExactError when the pair as a whole cannot be executed exactly.
func (e *Engine) Reach(from, to string, opt Options) (*Result, error) {
	if opt.CT == 0 {
		opt.CT = DefaultCT
	}
	if opt.MaxRecirculations <= 0 {
		opt.MaxRecirculations = 16
	}
	fid, ok := e.view.PortByName(from)
	if !ok {
		return nil, inputErrorf("unknown port %q", from)
	}
	tid, ok := e.view.PortByName(to)
	if !ok {
		return nil, inputErrorf("unknown port %q", to)
	}
	swID := e.view.PortSwitch(fid)
	if e.view.PortSwitch(tid) != swID {
		return nil, inputErrorf("ports %q and %q are on different switches", from, to)
	}
	if from == to {
		return nil, inputErrorf("from and to are the same port %q (OVN does not output a packet to its inport)", from)
	}
	sw := e.view.SwitchFlags(swID)
	var ports []string
	for _, p := range e.view.Ports(sw) {
		ports = append(ports, p.Name)
	}
	slices.Sort(ports)
	notExact := func(why string) error {
		return &NotExactError{Switch: sw.LS.Name, From: from, To: to, Reason: why}
	}
	if why := e.unmodelled(sw); why != "" {
		return nil, notExact(why)
	}
	for _, id := range []string{fid, tid} {
		p := e.snap.Ports[id]
		switch {
		case p.Type != "":
			return nil, notExact(fmt.Sprintf("port %s is of type %q (only plain VIF ports are modelled)", p.Name, p.Type))
		case len(p.PortSecurity) > 0:
			return nil, notExact("port " + p.Name + " has port_security, which the port security stages check and reach does not model")
		case p.Enabled != nil && !*p.Enabled:
			return nil, notExact("port " + p.Name + " is disabled")
		case len(e.view.LportMirrors(sw.LS, p)) > 0:
			return nil, notExact("port " + p.Name + " is mirrored (the mirror stages are not modelled)")
		}
	}
	sm, err := e.switchModel(swID, ports)
	if err != nil {
		return nil, err
	}
	x := &exec{swModel: sm, e: e, opt: opt, parts: map[key]*Part{}}
	in, err := x.entering(from, to)
	if err != nil {
		return nil, err
	}
	// What stages aclc does not compile decide for some packets: those
	// packets form not-exact parts.
	aside := []struct{ match, why string }{
		{"arp || nd", "ARP and ND packets are answered by the ARP/ND responder (ls_in_arp_rsp), which reach does not model"},
	}
	if e.hasDNS(sw) {
		aside = append(aside, struct{ match, why string }{"udp && udp.dst == 53", "DNS queries go through ls_in_dns_lookup (dns_lookup()), which reach does not model"})
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
	for _, a := range aside {
		s, err := x.conv.Match(a.match)
		if err != nil {
			return nil, err
		}
		if part := x.m.And(in, s); part != pset.Empty {
			x.end(&state{set: part}, NotExact, "", a.why)
		}
		in = x.m.Diff(in, s)
	}
	r := &Result{Switch: sw.LS.Name, From: from, To: to, Manager: x.m, Entering: r0}
	x.run(&state{set: in, pipe: lflow.Ingress})
	for _, k := range x.order {
		p := x.parts[k]
		w, _ := x.m.Witness(p.Set)
		p.Witness = w.String()
		x.describe(p, r0)
		r.Parts = append(r.Parts, p)
	}
	return r, nil
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
		lbs = e.view.DatapathLBs(sw, e.snap.GlobalOption("install_ls_lb_from_router") == "true")
	}
	if len(lbs) > 0 {
		return "the switch has load balancers (ls_in_lb and the hairpin stages are not modelled)"
	}
	if sw.TierContest != nil {
		return "whether northd evaluates the switch's ACL tiers depends on its hash table order (FDP-1154)"
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
	for _, name := range append([]string{"ct_state"}, egressCleared...) {
		if _, ok := x.meta[name]; !ok {
			return fmt.Errorf("reach: the dialect of OVN %s has no field %s", rel, name)
		}
	}
	return nil
}

// entering returns the packets from sends to to as they enter the
// switch: metadata zero.
func (x *swModel) entering(from, to string) (pset.Set, error) {
	s, err := x.conv.Match("inport == " + strconv.Quote(from) + " && outport == " + strconv.Quote(to))
	if err != nil {
		return pset.Empty, err
	}
	for _, b := range x.meta {
		s = x.m.And(s, x.m.Value(b, new(big.Int)))
	}
	return s, nil
}

// initial returns the entering packets of a final state: the metadata
// forgotten and zeroed (actions write only metadata, so the header is as
// it entered).
func (x *swModel) initial(s pset.Set) pset.Set {
	for _, b := range x.meta {
		s = x.m.Assign(s, b, new(big.Int))
	}
	return s
}
