package compile

import (
	"slices"
	"strconv"
	"sync"

	"github.com/aclc/aclc/lflow"
)

// Register bits and fields northd uses in the ACL stages (every version
// aclc verifies; the later versions' additions are named where used).
const (
	regbitConntrackDefrag = "reg0[0]"
	regbitConntrackCommit = "reg0[1]"
	regbitConntrackNAT    = "reg0[2]"
	regbitHintAllowNew    = "reg0[7]"
	regbitHintAllow       = "reg0[8]"
	regbitHintDrop        = "reg0[9]"
	regbitHintBlock       = "reg0[10]"
	regbitACLLabel        = "reg0[13]"
	regbitACLStateless    = "reg0[16]"
	regbitHintAllowRel    = "reg0[17]"
	regLabel              = "reg3"

	// aclPriorityOffset is OVN_ACL_PRI_OFFSET: an ACL of priority P becomes
	// flows of priority P+1000.
	aclPriorityOffset = 1000

	// With no Chassis rows (or chassis that support them) northd uses
	// ct_mark.blocked, ct_lb_mark and ct_commit_nat.
	ctBlocked = "ct_mark.blocked"

	ipv6CtOmitMatch = "nd || nd_ra || nd_rs || mldv1 || mldv2"
)

// builder collects the flows of one datapath, placing each stage kind in
// the target release's layout.
type builder struct {
	lay   *lflow.Layout
	flows []lflow.Flow
	// runs are shared flow lists, each sorted, that belong to the
	// datapath too (a port group's flows in a full Compile).
	runs [][]lflow.Flow
}

// addRun adds the sorted, shared flows of run (not copied, not modified).
func (b *builder) addRun(run []lflow.Flow) {
	if len(run) > 0 {
		b.runs = append(b.runs, run)
	}
}

func (b *builder) add(st lflow.Stage, prio int, match, actions string) {
	b.flows = append(b.flows, lflow.Flow{Stage: b.lay.Stage(st), Priority: prio, Match: match, Actions: actions})
}

func (b *builder) addFrom(st lflow.Stage, prio int, match, actions, source string) {
	b.flows = append(b.flows, lflow.Flow{Stage: b.lay.Stage(st), Priority: prio, Match: match, Actions: actions, Source: source})
}

func (g *global) compileSwitch(id string) (*lflow.Datapath, []Problem) {
	od := g.v.Switch(id)
	n := len(od.ACLs)
	if g.shared == nil {
		for _, pg := range od.PortGroups {
			n += len(pg.ACLs)
		}
	}
	b := &builder{lay: g.r.layout}
	if g.shared != nil {
		// Full Compile: the switch's own flows are merged into a new
		// slice below; reuse the buffer.
		bp := flowsPool.Get().(*[]lflow.Flow)
		defer func() { *bp = b.flows[:0]; flowsPool.Put(bp) }()
		b.flows = slices.Grow((*bp)[:0], 64+3*n)
	} else {
		b.flows = make([]lflow.Flow, 0, 64+3*n)
	}
	g.buildPreACLs(od, b)
	g.buildPreLB(od, b)
	g.buildPreStateful(od, b)
	g.buildACLHints(od, b)
	g.buildACLs(od, b)
	g.buildStateful(od, b)
	g.buildLBPreStateful(od, b)
	g.buildNetworkFunction(od, b)
	g.buildMirror(od, b)
	flows := b.flows
	if g.shared != nil {
		// Full Compile: the shared runs are sorted; sort the switch's own
		// flows and merge, which leaves the datapath sorted.
		flows = mergeSorted(append(b.runs, compactFlows(sortFlows(flows))))
		clear(b.flows[:cap(b.flows)]) // the pooled buffer holds no strings
	}
	dp := &lflow.Datapath{Name: od.LS.Name, Name2: od.LS.ExternalIDs["neutron:network_name"], UUID: id, Flows: flows}
	return dp, g.switchProblems(od)
}

// flowsPool holds the buffers of compileSwitch's own flows in a full
// Compile.
var flowsPool = sync.Pool{New: func() any { return new([]lflow.Flow) }}

// skipPortFromConntrack is northd's skip_port_from_conntrack.
func (g *global) skipPortFromConntrack(b *builder, name string, hasStatefulACL bool, in, out lflow.Stage, prio int) {
	key := strconv.Quote(name)
	egress := "next;"
	if !hasStatefulACL {
		egress = "ct_clear; next;"
		if g.r.pktSampled {
			egress = "flags.pkt_sampled = 0; ct_clear; next;"
		}
	}
	b.add(in, prio, "ip && inport == "+key, "next;")
	b.add(out, prio, "ip && outport == "+key, egress)
}

// localnetKeepsCt is skip_port_from_conntrack's choice for a localnet
// port: its egress flow keeps the conntrack state ("next;") only on a
// switch with stateful ACLs, and from 26.09 never (traffic leaving by a
// localnet port must not carry the ingress zone's state into
// ls_out_acl_eval).
func (g *global) localnetKeepsCt(hasStatefulACL bool) bool {
	return hasStatefulACL && !g.r.localnetCtClear
}

// skipEVPNFromConntrack is northd's skip_evpn_from_conntrack: a switch with
// a valid other_config:dynamic-routing-vni has EVPN remote VTEPs, which
// have no conntrack zone.
func (g *global) skipEVPNFromConntrack(od *datapath, b *builder, hasStatefulACL bool, in, out lflow.Stage, prio int) {
	if !g.r.evpn {
		return
	}
	vni, err := strconv.ParseInt(od.LS.OtherConfig["dynamic-routing-vni"], 10, 64)
	if err != nil || vni < 0 || vni > 1<<24-1 {
		return
	}
	egress := "next;"
	if !hasStatefulACL {
		egress = "flags.pkt_sampled = 0; ct_clear; next;"
	}
	b.add(in, prio, "from_evpn_vtep", "next;")
	b.add(out, prio, "to_evpn_vtep", egress)
}

// switchPorts are the switch's ports of type "switch" (od->switch_ports),
// on releases that have them.
func (g *global) switchPorts(od *datapath) []string {
	if !g.r.switchPorts {
		return nil
	}
	var out []string
	for _, p := range od.SwitchPorts {
		out = append(out, p.Name)
	}
	return out
}

// buildStatelessFilters adds the pre-ACL flow of every allow-stateless ACL
// of the switch and of its port groups: it sets reg0[16] so that pre-LB
// and pre-stateful skip conntrack.
func (g *global) buildStatelessFilters(od *datapath, b *builder) {
	noOut := g.skipsOutFilter(od)
	add := func(id string) {
		acl, ok := g.s.ACLs[id]
		if !ok {
			return
		}
		if f, ok := statelessFilter(acl, noOut); ok {
			f.Source = id
			f.Stage = b.lay.Stage(f.Stage)
			b.flows = append(b.flows, f)
		}
	}
	for _, id := range od.LS.ACLs {
		add(id)
	}
	for _, pg := range od.PortGroups {
		if g.shared[pg.UUID] != nil {
			continue // in the port group's run (pgShared.aclStageFlows)
		}
		for _, id := range pg.ACLs {
			add(id)
		}
	}
}

// icmpTooBig matches ICMP "fragmentation needed" / "packet too big"
// arriving from a tunnel. northd spells it with and without a space after
// "||" in pre-ACL and pre-LB.
const (
	icmpTooBigPreACL = "((ip4 && icmp4.type == 3 && icmp4.code == 4) || (ip6 && icmp6.type == 2 && icmp6.code == 0)) && flags.tunnel_rx == 1"
	icmpTooBigPreLB  = "((ip4 && icmp4.type == 3 && icmp4.code == 4) ||(ip6 && icmp6.type == 2 && icmp6.code == 0)) && flags.tunnel_rx == 1"
)

// buildPreACLs is build_pre_acls and build_ls_stateful_rec_pre_acls.
func (g *global) buildPreACLs(od *datapath, b *builder) {
	b.add(lflow.InPreACL, 0, "1", "next;")
	b.add(lflow.OutPreACL, 0, "1", "next;")
	b.add(lflow.InPreACL, 110, "eth.dst == $svc_monitor_mac", "next;")
	b.add(lflow.OutPreACL, 110, "eth.src == $svc_monitor_mac", "next;")
	if od.HasStatefulACL {
		for _, p := range od.RouterPorts {
			g.skipPortFromConntrack(b, p.Name, true, lflow.InPreACL, lflow.OutPreACL, 110)
		}
		for _, name := range g.switchPorts(od) {
			g.skipPortFromConntrack(b, name, true, lflow.InPreACL, lflow.OutPreACL, 110)
		}
		for _, p := range od.LocalnetPorts {
			g.skipPortFromConntrack(b, p.Name, g.localnetKeepsCt(true), lflow.InPreACL, lflow.OutPreACL, 110)
		}
		g.skipEVPNFromConntrack(od, b, true, lflow.InPreACL, lflow.OutPreACL, 110)
		g.buildStatelessFilters(od, b)
		const nd = "nd || nd_rs || nd_ra || mldv1 || mldv2 || (udp && udp.src == 546 && udp.dst == 547)"
		b.add(lflow.InPreACL, 110, nd, "next;")
		b.add(lflow.OutPreACL, 110, nd, "next;")
		if !g.aclCtTranslation() {
			b.add(lflow.InPreACL, 110, "eth.mcast", "next;")
			b.add(lflow.OutPreACL, 110, "eth.mcast", "next;")
		}
		if g.r.icmpTooBig {
			b.add(lflow.InPreACL, 110, icmpTooBigPreACL, "next;")
		}
		b.add(lflow.InPreACL, 100, "ip", regbitConntrackDefrag+" = 1; next;")
		b.add(lflow.OutPreACL, 100, "ip", regbitConntrackDefrag+" = 1; next;")
	} else if od.HasLBVIP {
		g.buildStatelessFilters(od, b)
	}
}

// aclCtTranslation is NB_Global options:acl_ct_translation, on releases
// that read it.
func (g *global) aclCtTranslation() bool {
	return g.r.ctTranslation && boolOption(g.s.GlobalOption("acl_ct_translation"), false)
}

// buildPreLB is build_pre_lb and build_ls_stateful_rec_pre_lb.
func (g *global) buildPreLB(od *datapath, b *builder) {
	g.buildInterconnMcastSnoopFlows(od, b)
	b.add(lflow.InPreLB, 110, "eth.mcast", "next;")
	b.add(lflow.OutPreLB, 110, "eth.mcast", "next;")
	const nd = "nd || nd_rs || nd_ra || mldv1 || mldv2"
	b.add(lflow.InPreLB, 110, nd, "next;")
	b.add(lflow.OutPreLB, 110, nd, "next;")
	if g.r.icmpTooBig {
		b.add(lflow.InPreLB, 110, icmpTooBigPreLB, "next;")
	}
	b.add(lflow.InPreLB, 110, "eth.dst == $svc_monitor_mac", "next;")
	b.add(lflow.OutPreLB, 110, "eth.src == $svc_monitor_mac", "next;")
	b.add(lflow.InPreLB, 0, "1", "next;")
	b.add(lflow.OutPreLB, 0, "1", "next;")
	for _, p := range od.RouterPorts {
		g.skipPortFromConntrack(b, p.Name, od.HasStatefulACL, lflow.InPreLB, lflow.OutPreLB, 110)
	}
	for _, name := range g.switchPorts(od) {
		g.skipPortFromConntrack(b, name, true, lflow.InPreLB, lflow.OutPreLB, 110)
	}
	if !od.HasLBVIP {
		for _, p := range od.LocalnetPorts {
			g.skipPortFromConntrack(b, p.Name, g.localnetKeepsCt(od.HasStatefulACL), lflow.InPreLB, lflow.OutPreLB, 110)
		}
	}
	g.skipEVPNFromConntrack(od, b, od.HasStatefulACL, lflow.InPreLB, lflow.OutPreLB, 110)
	b.add(lflow.InPreLB, 110, regbitACLStateless+" == 1", "next;")
	b.add(lflow.OutPreLB, 110, regbitACLStateless+" == 1", "next;")
	if od.HasLBVIP {
		b.add(lflow.InPreLB, 100, "ip", regbitConntrackNAT+" = 1; next;")
		b.add(lflow.OutPreLB, 100, "ip", regbitConntrackNAT+" = 1; next;")
	}
}

// buildInterconnMcastSnoopFlows is build_interconn_mcast_snoop_flows: a
// transit switch (other_config:interconn-ts) with multicast snooping
// punts IGMP and MLD from its remote ports to the controller.
func (g *global) buildInterconnMcastSnoopFlows(od *datapath, b *builder) {
	if _, ts := od.LS.OtherConfig["interconn-ts"]; !ts || !boolOption(od.LS.OtherConfig["mcast_snoop"], false) {
		return
	}
	loop := ""
	if g.r.igmpLoopback {
		loop = " && flags.igmp_loopback == 0"
	}
	for _, lsp := range g.v.Ports(od) {
		if lsp.Type != "remote" {
			continue
		}
		key := strconv.Quote(lsp.Name)
		b.addFrom(lflow.OutPreLB, 120, "inport == "+key+" && igmp"+loop, "clone { igmp; }; next;", lsp.UUID)
		b.addFrom(lflow.OutPreLB, 120, "inport == "+key+" && (mldv1 || mldv2)"+loop, "clone { igmp; }; next;", lsp.UUID)
	}
}

func (g *global) buildPreStateful(od *datapath, b *builder) {
	b.add(lflow.InPreStateful, 0, "1", "next;")
	b.add(lflow.OutPreStateful, 0, "1", "next;")
	if g.r.ipFrag {
		b.add(lflow.InPreStateful, 115, regbitConntrackNAT+" == 1 && ip.is_frag", regbitIPFrag+" = 1; ct_lb_mark;")
	}
	b.add(lflow.InPreStateful, 110, regbitConntrackNAT+" == 1", "ct_lb_mark;")
	b.add(lflow.OutPreStateful, 110, regbitConntrackNAT+" == 1", "ct_lb_mark;")
	b.add(lflow.InPreStateful, 100, regbitConntrackDefrag+" == 1", "ct_next;")
	b.add(lflow.OutPreStateful, 100, regbitConntrackDefrag+" == 1", "ct_next;")
}

func (g *global) buildACLHints(od *datapath, b *builder) {
	for _, st := range [2]lflow.Stage{lflow.InACLHint, lflow.OutACLHint} {
		if !od.HasACLs && !od.HasLBVIP {
			b.add(st, 65535, "1", "next;")
		} else {
			b.add(st, 0, "1", "next;")
		}
		if !od.HasStatefulACL && !od.HasLBVIP {
			continue
		}
		commit := ""
		if g.r.commitInHint {
			commit = regbitConntrackCommit + " = 1; "
		}
		b.add(st, 7, "ct.new && !ct.est", regbitHintAllowNew+" = 1; "+regbitHintDrop+" = 1; "+commit+"next;")
		b.add(st, 6, "!ct.new && ct.est && !ct.rpl && "+ctBlocked+" == 1", regbitHintAllowNew+" = 1; "+regbitHintDrop+" = 1; "+commit+"next;")
		b.add(st, 5, "!ct.trk", regbitHintAllow+" = 1; "+regbitHintDrop+" = 1; next;")
		b.add(st, 4, "!ct.new && ct.est && !ct.rpl && "+ctBlocked+" == 0", regbitHintAllow+" = 1; "+regbitHintBlock+" = 1; next;")
		b.add(st, 3, "!ct.est", regbitHintDrop+" = 1; next;")
		b.add(st, 2, "ct.est && "+ctBlocked+" == 1", regbitHintDrop+" = 1; next;")
		b.add(st, 1, "ct.est && "+ctBlocked+" == 0", regbitHintBlock+" = 1; next;")
	}
}

// buildStateful is build_stateful: the commits of the stateful stages.
func (g *global) buildStateful(od *datapath, b *builder) {
	b.add(lflow.InStateful, 0, "1", "next;")
	b.add(lflow.OutStateful, 0, "1", "next;")
	commitLabel := regbitConntrackCommit + " == 1 && " + regbitACLLabel + " == 1"
	commitPlain := regbitConntrackCommit + " == 1 && " + regbitACLLabel + " == 0"
	if !g.r.sampling {
		withLabel := "ct_commit { " + ctBlocked + " = 0; ct_label.label = " + regLabel + "; }; next;"
		plain := "ct_commit { " + ctBlocked + " = 0; }; next;"
		for _, st := range [2]lflow.Stage{lflow.InStateful, lflow.OutStateful} {
			b.add(st, 100, commitLabel, withLabel)
			b.add(st, 100, commitPlain, plain)
		}
		return
	}
	persist, nf := "", ""
	if g.r.persist {
		persist = "ct_mark.allow_established = " + regbitACLPersistID + "; "
	}
	aclID := ""
	if g.r.persist {
		aclID = "ct_label.acl_id = " + regACLID + "; "
	}
	if g.r.nf {
		nf = "ct_label.nf = 0; ct_label.nf_id = 0; "
	}
	withLabel := "ct_commit { " + ctBlocked + " = 0; " + persist +
		"ct_mark.obs_stage = " + regbitACLObsStage + "; ct_mark.obs_collector_id = " + regObsCollectorIDEst + "; " +
		"ct_label.obs_point_id = " + regObsPointIDEst + "; " + aclID + nf + "}; next;"
	plain := "ct_commit { " + ctBlocked + " = 0; " + persist + aclID + nf + "}; next;"
	for _, st := range [2]lflow.Stage{lflow.InStateful, lflow.OutStateful} {
		b.add(st, 100, commitLabel, withLabel)
		b.add(st, 100, commitPlain, plain)
	}
	if !g.r.nf {
		return
	}
	// With a network function group: commit its id in the label.
	nfPlain := "ct_commit { " + ctBlocked + " = 0; " + persist + aclID + "ct_label.nf = 1; ct_label.nf_id = " + regNFID + "; }; next;"
	nfLabel := "ct_commit { " + ctBlocked + " = 0; " + persist +
		"ct_mark.obs_stage = " + regbitACLObsStage + "; ct_mark.obs_collector_id = " + regObsCollectorIDEst + "; " +
		"ct_label.obs_point_id = " + regObsPointIDEst + "; " + aclID + "ct_label.nf = 1; ct_label.nf_id = " + regNFID + "; }; next;"
	for _, st := range [2]lflow.Stage{lflow.InStateful, lflow.OutStateful} {
		b.add(st, 110, commitPlain+" && "+regbitNFEnabled+" == 1", nfPlain)
		b.add(st, 110, commitLabel+" && "+regbitNFEnabled+" == 1", nfLabel)
	}
}
