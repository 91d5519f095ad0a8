package compile

import (
	"strconv"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema/nbdb"
)

const (
	regbitNFEgressLoopback = "reg8[23]"
	regTunOFPort           = "reg5[16..31]"
	// regbitNFOrigInport receives nf_lookup_orig_inport()'s result
	// (26.09).
	regbitNFOrigInport = "reg8[24]"
)

// buildNetworkFunction is build_network_function (26.03): the
// pre-network-function and network-function stages' fixed flows, and the
// flows of each network function group an ACL of the switch (its own,
// then its port groups') redirects to, once per group and direction. (Its
// ls_in_l2_lkup flow is outside the ACL stages.)
func (g *global) buildNetworkFunction(od *datapath, b *builder) {
	if !g.r.nf {
		return
	}
	for _, st := range [2]lflow.Stage{lflow.InPreNF, lflow.OutPreNF} {
		b.add(st, 0, "1", "next;")
		b.add(st, 1, regbitNFEnabled+" == 1 && "+regbitNFOrigDir+" == 1", regNFID+" = 0; next;")
	}
	for _, st := range [2]lflow.Stage{lflow.InNF, lflow.OutNF} {
		b.add(st, 100, regbitNFEnabled+" == 1 && eth.mcast", "next;")
		b.add(st, 0, "1", "next;")
		b.add(st, 1, regbitNFEnabled+" == 1", g.dropAction)
	}
	hasNFG := func(acl *nbdb.ACL) bool { return acl.NetworkFunctionGroup != nil }
	if !g.anyApplied(od, hasNFG, func(sh *pgShared) bool { return sh.nfGroups }) {
		return
	}
	seen := [2]map[int]bool{{}, {}}
	for _, acl := range g.v.AppliedACLs(od) {
		nfg := g.aclNFGroup(acl)
		if nfg == nil {
			continue
		}
		ingress := acl.Direction == "from-lport"
		dir := 0
		if ingress {
			dir = 1
		}
		if seen[dir][nfg.ID] {
			continue
		}
		seen[dir][nfg.ID] = true
		g.considerNetworkFunction(od, b, nfg, ingress)
	}
}

// considerNetworkFunction is consider_network_function: a vtap group's
// flows (26.09) or an inline group's.
func (g *global) considerNetworkFunction(od *datapath, b *builder, nfg *nfGroup, ingress bool) {
	if nfg.Vtap {
		g.considerNetworkFunctionVtap(od, b, nfg, ingress)
	} else {
		g.considerNetworkFunctionInline(od, b, nfg, ingress)
	}
}

// nfGroupMatch matches the packets an ACL of group nfg sent to a network
// function, in their original direction.
func nfGroupMatch(nfg *nfGroup) string {
	return regbitNFEnabled + " == 1 && " + regbitNFOrigDir + " == 1 && " + regNFGroupID + " == " + strconv.Itoa(nfg.ID)
}

// l2LookupAction resubmits a packet to ls_in_l2_lkup, which outputs it to
// the outport set (NETWORK_FUNCTION_EGRESS_LOOPBACK).
func l2LookupAction(b *builder) string {
	return regbitNFEgressLoopback + " = 1; next(pipeline=ingress, table=" + strconv.Itoa(b.lay.Stage(lflow.InL2Lkup).Table()) + ");"
}

// considerNetworkFunctionInline is consider_network_function (26.03;
// consider_network_function_inline from 26.09): redirect the group's
// traffic to its active network function's ports on this switch.
func (g *global) considerNetworkFunctionInline(od *datapath, b *builder, nfg *nfGroup, ingress bool) {
	preNF, fwd, rev := lflow.OutPreNF, lflow.OutNF, lflow.InNF
	if ingress {
		preNF, fwd, rev = lflow.InPreNF, lflow.InNF, lflow.OutNF
	}
	if g.r.nfOrigInport && len(od.LocalnetPorts) == 0 {
		// Traffic not sent to a function learns its original inport
		// too, whether or not the group has an active function; not on
		// a switch with a localnet port (observed on 26.09.0: neither
		// its own nor its port groups' ACLs give the flows there).
		b.add(lflow.InNF, 50, "ip4 && "+regbitNFEnabled+" == 0", "nf_learn_orig_inport(ipv6 = false); next;")
		b.add(lflow.InNF, 50, "ip6 && "+regbitNFEnabled+" == 0", "nf_learn_orig_inport(ipv6 = true); next;")
	}
	group := nfGroupMatch(nfg)
	if nfg.FailOpen {
		// network_function_configure_fail_open_flows
		b.add(preNF, 10, group, regbitNFEnabled+" = 0; "+regNFID+" = 0; next;")
	}
	nf := nfg.Active
	if nf == nil || nf.OutPort == "" {
		return // northd: "No active network function available" / "No outport configured"
	}
	in, out := g.portOrChild(od, nf.InPort), g.portOrChild(od, nf.OutPort)
	if in == nil || out == nil {
		return // northd: "Ports not found for network_function"
	}
	inKey, outKey := strconv.Quote(in.Name), strconv.Quote(out.Name)
	redirect, reverse := outKey, inKey
	if ingress {
		redirect, reverse = inKey, outKey
	}
	l2 := l2LookupAction(b)
	id := strconv.Itoa(nf.ID)
	b.add(preNF, 99, group, regNFID+" = "+id+"; next;")
	fwdAct, revAct := "outport = "+redirect+"; "+l2, "outport = "+reverse+"; output;"
	if ingress {
		fwdAct, revAct = "outport = "+redirect+"; output;", "outport = "+reverse+"; "+l2
	}
	fwdMatch := regbitNFEnabled + " == 1 && " + regbitNFOrigDir + " == 1 && " + regNFID + " == " + id
	if g.r.nfOrigInport {
		b.add(fwd, 99, fwdMatch+" && ip4", "nf_learn_orig_inport(ipv6 = false); "+fwdAct)
		b.add(fwd, 99, fwdMatch+" && ip6", "nf_learn_orig_inport(ipv6 = true); "+fwdAct)
	} else {
		b.add(fwd, 99, fwdMatch, fwdAct)
	}
	b.add(rev, 99, regbitNFEnabled+" == 1 && "+regbitNFOrigDir+" == 0 && ct_label.nf_id == "+id, revAct)
	for _, k := range [2]string{inKey, outKey} {
		b.add(lflow.InNF, 100, "inport == "+k, regTunOFPort+" = ct_label.tun_if_id; next;")
		b.add(lflow.OutNF, 100, "outport == "+k, "next;")
	}
	// Packets coming back from the function skip the egress stages they
	// went through already; from 26.09 they (and those the function
	// sends out of its outport) look up their original inport.
	skip := "next(pipeline=egress, table=" + strconv.Itoa(b.lay.Stage(lflow.OutNF).Table()+1) + ");"
	if g.r.nfOrigInport {
		b.add(lflow.OutPreACL, 115, "inport == "+inKey, regbitNFOrigInport+" = nf_lookup_orig_inport(); "+skip)
		b.add(lflow.OutNF, 2, "inport == "+outKey, regbitNFOrigInport+" = nf_lookup_orig_inport(); next;")
	} else {
		b.add(lflow.OutPreACL, 110, "inport == "+inKey, skip)
	}
	// build_lswitch_stateful_nf, for both ports.
	for _, k := range [2]string{outKey, inKey} {
		b.add(lflow.OutStateful, 120, "outport == "+k+" && "+regbitACLLabel+" == 0",
			"ct_commit { "+ctBlocked+" = 0; ct_mark.allow_established = "+regbitACLPersistID+"; ct_label.acl_id = "+regACLID+"; "+
				"ct_label.tun_if_id = "+regTunOFPort+"; }; next;")
		b.add(lflow.OutStateful, 120, "outport == "+k+" && "+regbitACLLabel+" == 1",
			"ct_commit { "+ctBlocked+" = 0; ct_mark.allow_established = "+regbitACLPersistID+"; ct_label.acl_id = "+regACLID+"; "+
				"ct_mark.obs_stage = "+regbitACLObsStage+"; ct_mark.obs_collector_id = "+regObsCollectorIDEst+"; "+
				"ct_label.obs_point_id = "+regObsPointIDEst+"; ct_label.tun_if_id = "+regTunOFPort+"; }; next;")
	}
}

// considerNetworkFunctionVtap is consider_network_function_vtap (26.09):
// the group's traffic is mirrored to its active function's one port (a
// clone) while the packet goes on; the group always fails open; the
// function's port sends nothing into the switch and skips conntrack.
func (g *global) considerNetworkFunctionVtap(od *datapath, b *builder, nfg *nfGroup, ingress bool) {
	preNF, fwd, rev := lflow.OutPreNF, lflow.OutNF, lflow.InNF
	if ingress {
		preNF, fwd, rev = lflow.InPreNF, lflow.InNF, lflow.OutNF
	}
	group := nfGroupMatch(nfg)
	b.add(preNF, 10, group, regbitNFEnabled+" = 0; "+regNFID+" = 0; next;")
	nf := nfg.Active
	if nf == nil || nf.OutPort != "" {
		return // northd: "No active network function available" / "Outport is not supported for vtap mode"
	}
	in := g.portOrChild(od, nf.InPort)
	if in == nil {
		return // northd: "Port not found for network_function"
	}
	key := strconv.Quote(in.Name)
	id := strconv.Itoa(nf.ID)
	b.add(preNF, 99, group, regNFID+" = "+id+"; next;")
	toPort := "clone {outport = " + key + "; output;}; next;"
	viaL2 := "clone {outport = " + key + "; " + l2LookupAction(b) + "}; next;"
	fwdAct, revAct := viaL2, toPort
	if ingress {
		fwdAct, revAct = toPort, viaL2
	}
	b.add(fwd, 99, regbitNFEnabled+" == 1 && "+regbitNFOrigDir+" == 1 && "+regNFID+" == "+id, fwdAct)
	b.add(rev, 99, regbitNFEnabled+" == 1 && "+regbitNFOrigDir+" == 0 && ct_label.nf_id == "+id, revAct)
	b.add(lflow.InNF, 100, "inport == "+key, "drop;")
	b.add(lflow.OutNF, 100, "outport == "+key, "next;")
	b.add(lflow.OutPreACL, 110, "ip && outport == "+key, "ct_clear; next;")
}

// portOrChild is ovn_port_find_port_or_child: the switch's port called
// name, or one whose parent_name is name (northd takes the first in its
// hash order; aclc the first in column order).
func (g *global) portOrChild(od *datapath, name string) *nbdb.LogicalSwitchPort {
	var child *nbdb.LogicalSwitchPort
	for _, lsp := range g.v.Ports(od) {
		if lsp.Name == name {
			return lsp
		}
		if child == nil && lsp.ParentName != nil && *lsp.ParentName == name {
			child = lsp
		}
	}
	return child
}
