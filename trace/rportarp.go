package trace

import (
	"maps"
	"slices"
	"strconv"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// This file models the L2 lookup flows northd writes on a switch for the
// routers attached to it (build_lswitch_rport_arp_req_flows and
// build_lswitch_rport_arp_req_self_orig_flow): an ARP request for a router
// port's IPv4 address goes to that router port (and, on a switch with
// other ports, is flooded to them too, clone { }), and the router's own
// broadcast ARP requests are flooded to every port but the router ports
// (_MC_flood_l2). Routers with NAT or load balancers, whose external IPs,
// VIPs and MACs add flows, and IPv6 neighbour solicitations are left to
// the not-traced flows of unmodelled.go.

// simpleRouter reports whether the flows the switch's L2 lookup has for
// router r are only those of its ports' own networks and MAC: r has no
// NAT and no load balancers.
func simpleRouter(r *nbdb.LogicalRouter) bool {
	return r != nil && len(r.Nat) == 0 && len(r.LoadBalancer) == 0 && len(r.LoadBalancerGroup) == 0
}

// modelRouterARP adds, for each router port of the switch whose router is
// simple, the priority-80 flows for ARP requests for its peer's IPv4
// addresses and the priority-75 flood of the peer's own requests.
func (d *dpModel) modelRouterARP(v *nbview.View) {
	routerPorts := 0
	for _, p := range d.ports {
		if p.Type == "router" && v.RouterPortPeer(p) != nil {
			routerPorts++
		}
	}
	others := routerPorts != len(d.ls.Ports) // od->router_ports vs the NB's ports
	for _, name := range slices.Sorted(maps.Keys(d.ports)) {
		p := d.ports[name]
		lrp := v.RouterPortPeer(p)
		if p.Type != "router" || lrp == nil || (lrp.Enabled != nil && !*lrp.Enabled) || !simpleRouter(v.RouterOfPort(lrp.Name)) {
			continue
		}
		mac, v4, _ := compile.RouterPortNetworks(lrp)
		if mac == "" {
			continue
		}
		cr, hasCR := v.SwitchChassisRedirect(p)
		for _, ip := range v4 {
			m := "flags[1] == 0 && arp.op == 1 && arp.tpa == " + ip
			if d.has(release.RportARPBroadcast) {
				m = "flags[1] == 0 && eth.dst == ff:ff:ff:ff:ff:ff && arp.op == 1 && arp.tpa == " + ip
			}
			if hasCR {
				d.add(lflow.InL2Lkup, 80, m+" && is_chassis_resident("+strconv.Quote(cr)+")", d.toRouterPort(p.Name, others), p.UUID)
				d.add(lflow.InL2Lkup, 80, m+" && !is_chassis_resident("+strconv.Quote(cr)+")", d.toRouterPort(cr, others), p.UUID)
			} else {
				d.add(lflow.InL2Lkup, 80, m, d.toRouterPort(p.Name, others), p.UUID)
			}
			if others && d.has(release.RportARPUnknown) {
				// the router's own gratuitous ARP for the address
				d.add(lflow.InL2Lkup, 90, m+" && arp.spa == "+ip, `outport = "_MC_flood_l2"; output;`, p.UUID)
			}
		}
		if others {
			bcast := ""
			if d.has(release.SelfOrigBroadcast) {
				bcast = " && eth.dst == ff:ff:ff:ff:ff:ff"
			}
			d.add(lflow.InL2Lkup, 75, "eth.src == {"+mac+"}"+bcast+" && (arp.op == 1 || rarp.op == 3 || nd_ns)",
				`outport = "_MC_flood_l2"; output;`, p.UUID)
		}
	}
}

// toRouterPort is the action of an ARP request for a router port's
// address: to the port, and to the switch's other ports when it has some
// (_MC_flood_l2; _MC_unknown from release.RportARPUnknown).
func (d *dpModel) toRouterPort(port string, others bool) string {
	if others {
		group := "_MC_flood_l2"
		if d.has(release.RportARPUnknown) {
			group = "_MC_unknown"
		}
		return "clone {outport = " + strconv.Quote(port) + "; output; }; outport = \"" + group + "\"; output;"
	}
	return "outport = " + strconv.Quote(port) + "; output;"
}
