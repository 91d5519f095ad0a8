package compile

import (
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbview"
)

// buildLBPreStateful adds, for each VIP of each load balancer on the
// switch, the priority-120 ls_in_pre_stateful flow that stores the original
// destination and sends the packet to ct_lb_mark (build_lb_rules_pre_stateful),
// and the priority-130 ls_in_pre_lb empty-backend event flow when enabled.
func (g *global) buildLBPreStateful(od *datapath, b *builder) {
	for _, lb := range g.v.SwitchLBs(od.LS, false) {
		proto := nbview.LBProtocol(lb)
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
			m := regbitConntrackNAT + " == 1 && " + ipMatch + ".dst == " + ipStr
			if port != "" {
				a += g.r.regs.lbPort + " = " + port + "; "
				m += " && " + proto + ".dst == " + port
			}
			a += "ct_lb_mark;"
			b.addFrom(lflow.InPreStateful, 120, m, a, lb.UUID)
		}
	}
}
