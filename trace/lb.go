package trace

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// This file models the load-balancer stages of a switch that aclc does not
// compile (ls_in_ct_extract, ls_in_lb, ls_in_pre_hairpin) from the NB, per
// release: their ct_lb_mark is a conntrack recirculation the trace must
// follow. What the model does not cover ends the trace "not traced".

// The release rules of the ls_in_lb model (northd build_lb_rules,
// build_lb_vip_actions, build_lb_hairpin) are release.LBOrigDstInAction,
// LBNoCommitReset, LBCtExtract, LBFragEst and LBFromDatapath, with the
// registers compile.LBOrigDest names.

// ipProtoNumber is get_protocol_number_str.
var ipProtoNumber = map[string]string{"tcp": "6", "udp": "17", "sctp": "132"}

// has reports whether the NB's release has fact f.
func (d *dpModel) has(f *release.Fact) bool { return d.rel.Has(f) }

// modelLB adds the ls_in_lb VIP flows of the load balancers northd
// installs on the switch (build_lb_rules), and, when the switch's own load
// balancers have VIPs, the fragment flows, ls_in_ct_extract (25.09+) and
// the ls_in_pre_hairpin flow (build_lb_hairpin).
func (d *dpModel) modelLB(v *nbview.View) {
	s := v.Snapshot()
	lbs := v.SwitchLBs(d.ls, false)
	if d.has(release.LBFromDatapath) {
		lbs = v.DatapathLBs(v.Switch(d.uuid), s.GlobalOption("install_ls_lb_from_router") == "true") // (with its router ports)
	}
	for _, lb := range lbs {
		proto := nbview.LBProtocol(lb)
		if d.has(release.LBFromDatapath) && nbview.IsTemplate(lb) {
			// its VIPs come from the chassis' template variables
			d.unmodelled = fmt.Sprintf("switch %s template load balancer %s: its VIPs are instantiated per chassis", d.name, lbName(lb))
			return
		}
		for _, vip := range nbview.VIPs(lb) {
			m, a, prio := d.lbVIPFlow(lb, proto, vip)
			if why, st := lbNotModelled(lb, vip, s.GlobalOption("debug_drop_collector_set")); why != "" {
				// A packet to this VIP meets what is not modelled; the
				// switch's other packets are traced.
				if !d.hasTable(st) {
					d.add(st, 0, "1", "next;", "")
				}
				tf := d.add(st, 65535, m, "next;", lb.UUID)
				tf.acts = []action{{kind: aNotModelled, name: "load balancer " + lbName(lb) + " VIP " + vip.Key + ": " + why,
					text: "/* " + a + " (not modelled) */"}}
				continue
			}
			d.add(lflow.InLB, prio, m, a, lb.UUID)
		}
	}
	// (the stages below follow the switch's own load balancers with
	// VIPs, northd's has_lb_vip, not the routers' ones ls_in_lb has)
	vips := len(v.SwitchLBs(d.ls, true)) > 0
	if d.hasTable(lflow.InLB) || vips {
		// build_stateful: the stage's default
		d.add(lflow.InLB, 0, "1", "next;", "")
	}
	if !vips {
		return
	}
	if d.has(release.LBOrigDstInAction) {
		est := ""
		if d.has(release.LBFragEst) {
			est = "ct.est && "
		}
		d.add(lflow.InLB, 110, "ct.trk && "+est+"!ct.rpl && reg0[19] == 1 && ip4", d.origDIP4()+" = ct_nw_dst(); reg2[0..15] = ct_tp_dst(); next;", "")
		d.add(lflow.InLB, 110, "ct.trk && "+est+"!ct.rpl && reg0[19] == 1 && ip6", "xxreg1 = ct_ip6_dst(); reg2[0..15] = ct_tp_dst(); next;", "")
	}
	if d.has(release.LBCtExtract) {
		d.add(lflow.InCtExtract, 100, "ct.new && ip", "reg1[16..23] = ct_proto(); reg1[0..15] = ct_tp_dst(); next;", "")
		d.add(lflow.InCtExtract, 0, "1", "next;", "")
	}
	d.add(lflow.InPreHairpin, 100, "ip && ct.trk", "reg0[6] = chk_lb_hairpin(); reg0[12] = chk_lb_hairpin_reply(); next;", "")
	d.add(lflow.InPreHairpin, 0, "1", "next;", "")
	// build_lb_hairpin: a hairpinned packet (or its reply) is SNATted to
	// the VIP and sent back out of its inport
	why := "hairpinned load-balanced traffic: the hairpin SNAT stages are not modelled"
	d.notTracedFlow(lflow.InNATHairpin, 100, "reg0[6] == 1 || reg0[12] == 1", why)
	d.ensureDefault(lflow.InNATHairpin)
	d.notTracedFlow(lflow.InHairpin, 100, "reg0[6] == 1 || reg0[12] == 1", why)
	d.ensureDefault(lflow.InHairpin)
}

// hasTable reports whether the stage st has flows.
func (d *dpModel) hasTable(st lflow.Stage) bool {
	st = d.layout.Stage(st)
	_, ok := d.tables[tableKey{st.Pipeline(), st.Table()}]
	return ok
}

// origDIP4 is REG_ORIG_DIP_IPV4 (compile's registers).
func (d *dpModel) origDIP4() string {
	v4, _, _ := compile.LBOrigDest(d.rel)
	return v4
}

// lbVIPFlow is one VIP's ls_in_lb flow: match, actions and priority.
func (d *dpModel) lbVIPFlow(lb *nbdb.LoadBalancer, proto string, vip nbview.VIP) (string, string, int) {
	family, reg := "ip4", d.origDIP4()
	if !vip.IP.Is4() {
		family, reg = "ip6", "xxreg1"
	}
	m := "ct.new && " + family + ".dst == " + vip.IP.String()
	prio := 110
	if vip.Port != 0 {
		prio = 120
		if d.has(release.LBCtExtract) {
			m += " && reg1[16..23] == " + ipProtoNumber[proto] + " && reg1[0..15] == " + vip.PortString()
		} else {
			m += " && " + proto + ".dst == " + vip.PortString()
		}
	}
	var backends []string
	for _, b := range vip.Backends {
		backends = append(backends, b.String())
	}
	a := ""
	if !d.has(release.LBNoCommitReset) {
		a = "reg0[1] = 0; "
	}
	if d.has(release.LBOrigDstInAction) {
		a += reg + " = " + vip.IP.String() + "; "
		if vip.Port != 0 {
			a += "reg2[0..15] = " + vip.PortString() + "; "
		}
	}
	qos := lflow.OutQoSMark
	if d.layout.Has(lflow.OutQoS) {
		qos = lflow.OutQoS
	}
	switch {
	case len(backends) > 0:
		a += "ct_lb_mark(backends=" + strings.Join(backends, ",") + ");"
	case lb.Options["reject"] == "true":
		// build_lb_vip_actions clears the action (every version)
		a = "reg0 = 0; reject { outport <-> inport; next(pipeline=egress,table=" +
			strconv.Itoa(d.layout.Stage(qos).Table()) + ");};"
	default:
		a = "drop;"
	}
	return m, a, prio
}

// lbNotModelled says why the ls_in_lb flow of vip is not modelled (and
// the stage where the packet meets it), or "".
func lbNotModelled(lb *nbdb.LoadBalancer, vip nbview.VIP, dropCollector string) (string, lflow.Stage) {
	switch {
	case lb.Options["affinity_timeout"] != "":
		return "session affinity (chk_lb_aff, commit_lb_aff) is not modelled", lflow.InLBAffCheck
	case len(lb.HealthCheck) > 0:
		return "health-checked backends depend on the SB Service_Monitor status", lflow.InLB
	case len(lb.SelectionFields) > 0:
		return "selection_fields (hash_fields) are not modelled", lflow.InLB
	case lb.Options["distributed"] == "true":
		return "distributed load balancers (ct_lb_mark_local) are not modelled", lflow.InLB
	case dropCollector != "" && len(vip.Backends) == 0 && lb.Options["reject"] != "true":
		return "its drop is sampled (NB_Global options:debug_drop_collector_set), not modelled", lflow.InLB
	}
	return "", lflow.InLB
}

func lbName(lb *nbdb.LoadBalancer) string {
	if lb.Name != "" {
		return lb.Name
	}
	return shortUUID(lb.UUID)
}
