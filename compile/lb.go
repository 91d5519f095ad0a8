package compile

import (
	"net/netip"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbview"
)

// buildLBPreStateful adds, for each VIP of each load balancer on the
// switch, the priority-120 ls_in_pre_stateful flow that stores the original
// destination and sends the packet to ct_lb_mark (build_lb_rules_pre_stateful),
// and the priority-130 ls_in_pre_lb empty-backend event flow when enabled;
// on a switch with other_config:enable-stateless-acl-with-lb, the flows of
// build_lb_rules_for_stateless_acl and the stateless-mode pre-stateful
// flows (25.09+; lbWithStatelessMode says which load balancers).
func (g *global) buildLBPreStateful(od *datapath, b *builder) {
	stateless := g.lbStatelessMode(od)
	for _, lb := range g.v.DatapathLBs(od, g.installLSLBFromRouter) {
		proto := nbview.LBProtocol(lb)
		lbStateless := stateless && g.lbWithStatelessMode(od, lb.UUID)
		snatIP := ""
		if ip, err := netip.ParseAddr(lb.Options["hairpin_snat_ip"]); err == nil && ip.Is4() {
			snatIP = lb.Options["hairpin_snat_ip"]
		}
		for _, v := range nbview.VIPs(lb) {
			ipStr, port := v.IP.String(), v.PortString()
			ipMatch, reg := "ip4", g.r.regs.lbIPv4
			if !v.IP.Is4() {
				ipMatch, reg = "ip6", g.r.regs.lbIPv6
			}
			if (g.controllerEvent || boolOption(lb.Options["event"], false)) &&
				len(v.Backends) == 0 && !boolOption(lb.Options["reject"], false) {
				m := ipMatch + ".dst == " + ipStr + " && " + proto
				vip := ipStr
				if port != "" {
					m += " && " + proto + ".dst == " + port
					if v.IP.Is4() {
						vip = ipStr + ":" + port
					} else {
						vip = "[" + ipStr + "]:" + port
					}
				}
				a := "trigger_event(event = \"empty_lb_backends\", vip = \"" + vip + "\", protocol = \"" + proto +
					"\", load_balancer = \"" + lb.UUID + "\");"
				b.addFrom(lflow.InPreLB, 130, m, a, lb.UUID)
			}
			a := reg + " = " + ipStr + "; "
			m := ipMatch + ".dst == " + ipStr
			if port != "" {
				a += g.r.regs.lbPort + " = " + port + "; "
				m += " && " + proto + ".dst == " + port
			}
			a += "ct_lb_mark;"
			b.addFrom(lflow.InPreStateful, 120, regbitConntrackNAT+" == 1 && "+m, a, lb.UUID)
			if !lbStateless {
				continue
			}
			hp := a // the hairpin fix stores the original destination
			if !g.r.statelessLBHp {
				hp = "ct_lb_mark;"
			}
			b.addFrom(lflow.InPreStateful, 150, m, hp, lb.UUID)
			if snatIP != "" || port != "" {
				dst := ipStr
				if snatIP != "" {
					dst = snatIP
				}
				b.addFrom(lflow.InPreStateful, 105, proto+" && "+ipMatch+".dst == "+dst, "ct_lb_mark;", lb.UUID)
			}
		}
		if lbStateless && g.r.statelessLBCt { // build_lb_rules_for_stateless_acl
			b.addFrom(lflow.OutPreLB, 115, regbitACLStateless+" == 1", regbitConntrackNAT+" = 1; next;", lb.UUID)
			b.addFrom(lflow.OutStateful, 110, regbitACLStateless+" == 1 && ct.new", "next;", lb.UUID)
		}
	}
}

// lbWithStatelessMode reports whether load balancer lb is in the
// stateless-ACL-with-LB mode on switch od, which is in the mode
// (lb_dps->ls_lb_with_stateless_mode, filled by build_lb_datapaths'
// handle_od_lb_datapath_modes): one of the switch's own load balancers,
// and from 26.09 one of its load balancer groups' too. A router's load
// balancers installed on the switch with install_ls_lb_from_router never
// are.
func (g *global) lbWithStatelessMode(od *datapath, lb string) bool {
	return lbOfStatelessMode(&g.r, g.s, od.LS, lb)
}
