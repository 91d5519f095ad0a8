package compile

import (
	"slices"
	"strconv"

	"github.com/aclc/aclc/lflow"
)

// Register bits and fields northd 23.03 uses in the ACL stages.
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
	regOrigDIPv4          = "reg1"
	regOrigDIPv6          = "xxreg1"
	regOrigTPDport        = "reg2[0..15]"
	regLabel              = "reg3"

	// aclPriorityOffset is OVN_ACL_PRI_OFFSET: an ACL of priority P becomes
	// flows of priority P+1000.
	aclPriorityOffset = 1000

	// With no Chassis rows (or chassis that support them) northd uses
	// ct_mark.blocked, ct_lb_mark and ct_commit_nat.
	ctBlocked = "ct_mark.blocked"

	ipv6CtOmitMatch = "nd || nd_ra || nd_rs || mldv1 || mldv2"
)

// builder collects the flows of one datapath.
type builder struct {
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
	b.flows = append(b.flows, lflow.Flow{Stage: st, Priority: prio, Match: match, Actions: actions})
}

func (b *builder) addFrom(st lflow.Stage, prio int, match, actions, source string) {
	b.flows = append(b.flows, lflow.Flow{Stage: st, Priority: prio, Match: match, Actions: actions, Source: source})
}

func (g *global) compileSwitch(id string) (*lflow.Datapath, []Problem) {
	od := g.datapath(id)
	n := len(od.acls)
	if g.shared == nil {
		for _, pg := range od.pgs {
			n += len(pg.ACLs)
		}
	}
	b := &builder{flows: make([]lflow.Flow, 0, 64+3*n)}
	g.buildPreACLs(od, b)
	g.buildPreLB(od, b)
	g.buildPreStateful(od, b)
	g.buildACLHints(od, b)
	g.buildACLs(od, b)
	g.buildStateful(od, b)
	g.buildLBPreStateful(od, b)
	flows := b.flows
	if g.shared != nil {
		// Full Compile: the shared runs are sorted; sort the switch's own
		// flows and merge, which leaves the datapath sorted.
		slices.SortFunc(flows, lflow.Compare)
		flows = mergeSorted(append(b.runs, flows))
	}
	dp := &lflow.Datapath{Name: od.ls.Name, Name2: od.ls.ExternalIDs["neutron:network_name"], UUID: id, Flows: flows}
	return dp, g.switchProblems(od)
}

// skipPortFromConntrack is northd's skip_port_from_conntrack.
func (g *global) skipPortFromConntrack(od *datapath, b *builder, name string, in, out lflow.Stage, prio int) {
	key := strconv.Quote(name)
	egress := "ct_clear; next;"
	if od.hasStatefulACL {
		egress = "next;"
	}
	b.add(in, prio, "ip && inport == "+key, "next;")
	b.add(out, prio, "ip && outport == "+key, egress)
}

// buildStatelessFilters adds the pre-ACL flow of every allow-stateless ACL
// of the switch and of its port groups: it sets reg0[16] so that pre-LB
// and pre-stateful skip conntrack.
func (g *global) buildStatelessFilters(od *datapath, b *builder) {
	add := func(id string) {
		acl, ok := g.s.ACLs[id]
		if !ok {
			return
		}
		if f, ok := statelessFilter(acl); ok {
			f.Source = id
			b.flows = append(b.flows, f)
		}
	}
	for _, id := range od.ls.ACLs {
		add(id)
	}
	for _, pg := range od.pgs {
		if sh := g.shared[pg.UUID]; sh != nil {
			b.addRun(sh.statelessFlows(g))
			continue
		}
		for _, id := range pg.ACLs {
			add(id)
		}
	}
}

func (g *global) buildPreACLs(od *datapath, b *builder) {
	b.add(lflow.InPreACL, 0, "1", "next;")
	b.add(lflow.OutPreACL, 0, "1", "next;")
	b.add(lflow.InPreACL, 110, "eth.dst == $svc_monitor_mac", "next;")
	b.add(lflow.OutPreACL, 110, "eth.src == $svc_monitor_mac", "next;")
	if od.hasStatefulACL {
		for _, p := range od.routerPorts {
			g.skipPortFromConntrack(od, b, p.Name, lflow.InPreACL, lflow.OutPreACL, 110)
		}
		for _, p := range od.localnetPorts {
			g.skipPortFromConntrack(od, b, p.Name, lflow.InPreACL, lflow.OutPreACL, 110)
		}
		g.buildStatelessFilters(od, b)
		const nd = "nd || nd_rs || nd_ra || mldv1 || mldv2 || (udp && udp.src == 546 && udp.dst == 547)"
		b.add(lflow.InPreACL, 110, nd, "next;")
		b.add(lflow.OutPreACL, 110, nd, "next;")
		b.add(lflow.InPreACL, 110, "eth.mcast", "next;")
		b.add(lflow.OutPreACL, 110, "eth.mcast", "next;")
		b.add(lflow.InPreACL, 100, "ip", regbitConntrackDefrag+" = 1; next;")
		b.add(lflow.OutPreACL, 100, "ip", regbitConntrackDefrag+" = 1; next;")
	} else if od.hasLBVIP {
		g.buildStatelessFilters(od, b)
	}
}

func (g *global) buildPreLB(od *datapath, b *builder) {
	b.add(lflow.InPreLB, 110, "eth.mcast", "next;")
	b.add(lflow.OutPreLB, 110, "eth.mcast", "next;")
	const nd = "nd || nd_rs || nd_ra || mldv1 || mldv2"
	b.add(lflow.InPreLB, 110, nd, "next;")
	b.add(lflow.OutPreLB, 110, nd, "next;")
	b.add(lflow.InPreLB, 110, "eth.dst == $svc_monitor_mac", "next;")
	b.add(lflow.OutPreLB, 110, "eth.src == $svc_monitor_mac", "next;")
	b.add(lflow.InPreLB, 0, "1", "next;")
	b.add(lflow.OutPreLB, 0, "1", "next;")
	for _, p := range od.routerPorts {
		g.skipPortFromConntrack(od, b, p.Name, lflow.InPreLB, lflow.OutPreLB, 110)
	}
	if !od.hasLBVIP {
		for _, p := range od.localnetPorts {
			g.skipPortFromConntrack(od, b, p.Name, lflow.InPreLB, lflow.OutPreLB, 110)
		}
	}
	b.add(lflow.InPreLB, 110, regbitACLStateless+" == 1", "next;")
	b.add(lflow.OutPreLB, 110, regbitACLStateless+" == 1", "next;")
	if od.hasLBVIP {
		b.add(lflow.InPreLB, 100, "ip", regbitConntrackNAT+" = 1; next;")
		b.add(lflow.OutPreLB, 100, "ip", regbitConntrackNAT+" = 1; next;")
	}
}

func (g *global) buildPreStateful(od *datapath, b *builder) {
	b.add(lflow.InPreStateful, 0, "1", "next;")
	b.add(lflow.OutPreStateful, 0, "1", "next;")
	b.add(lflow.InPreStateful, 110, regbitConntrackNAT+" == 1", "ct_lb_mark;")
	b.add(lflow.OutPreStateful, 110, regbitConntrackNAT+" == 1", "ct_lb_mark;")
	b.add(lflow.InPreStateful, 100, regbitConntrackDefrag+" == 1", "ct_next;")
	b.add(lflow.OutPreStateful, 100, regbitConntrackDefrag+" == 1", "ct_next;")
}

func (g *global) buildACLHints(od *datapath, b *builder) {
	for _, st := range [2]lflow.Stage{lflow.InACLHint, lflow.OutACLHint} {
		if !od.hasACLs && !od.hasLBVIP {
			b.add(st, 65535, "1", "next;")
		} else {
			b.add(st, 0, "1", "next;")
		}
		if !od.hasStatefulACL && !od.hasLBVIP {
			continue
		}
		b.add(st, 7, "ct.new && !ct.est", regbitHintAllowNew+" = 1; "+regbitHintDrop+" = 1; next;")
		b.add(st, 6, "!ct.new && ct.est && !ct.rpl && "+ctBlocked+" == 1", regbitHintAllowNew+" = 1; "+regbitHintDrop+" = 1; next;")
		b.add(st, 5, "!ct.trk", regbitHintAllow+" = 1; "+regbitHintDrop+" = 1; next;")
		b.add(st, 4, "!ct.new && ct.est && !ct.rpl && "+ctBlocked+" == 0", regbitHintAllow+" = 1; "+regbitHintBlock+" = 1; next;")
		b.add(st, 3, "!ct.est", regbitHintDrop+" = 1; next;")
		b.add(st, 2, "ct.est && "+ctBlocked+" == 1", regbitHintDrop+" = 1; next;")
		b.add(st, 1, "ct.est && "+ctBlocked+" == 0", regbitHintBlock+" = 1; next;")
	}
}

func (g *global) buildStateful(od *datapath, b *builder) {
	b.add(lflow.InStateful, 0, "1", "next;")
	b.add(lflow.OutStateful, 0, "1", "next;")
	withLabel := "ct_commit { " + ctBlocked + " = 0; ct_label.label = " + regLabel + "; }; next;"
	b.add(lflow.InStateful, 100, regbitConntrackCommit+" == 1 && "+regbitACLLabel+" == 1", withLabel)
	b.add(lflow.OutStateful, 100, regbitConntrackCommit+" == 1 && "+regbitACLLabel+" == 1", withLabel)
	plain := "ct_commit { " + ctBlocked + " = 0; }; next;"
	b.add(lflow.InStateful, 100, regbitConntrackCommit+" == 1 && "+regbitACLLabel+" == 0", plain)
	b.add(lflow.OutStateful, 100, regbitConntrackCommit+" == 1 && "+regbitACLLabel+" == 0", plain)
}
