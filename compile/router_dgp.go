package compile

import (
	"fmt"
	"strconv"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/release"
)

// Distributed gateway ports (northd's l3dgw ports): a router port with
// gateway_chassis or an HA chassis group. northd gives each a
// chassis-redirect port cr-NAME, the port's instance on its gateway
// chassis, and writes the port's flows so that what must happen once
// (ARP and ND replies, MAC learning, admission of traffic to the port's
// MAC) happens only where is_chassis_resident(cr-NAME) holds, and
// traffic routed out of the port goes to cr-NAME (lr_in_gw_redirect).
// These are the flows of a router without NAT and load balancers (those
// are not compiled): a router with load balancers may be distributed
// (od->is_distributed), which changes which of them northd writes.

// gatewayPorts returns the router's distributed gateway ports in NB order
// (od->l3dgw_ports).
func (b *routerBuilder) gatewayPorts() []*RouterPort {
	var out []*RouterPort
	for _, p := range b.ports() {
		if p.Gateway {
			out = append(out, p)
		}
	}
	return out
}

// chassisResidentCheck is add_lrp_chassis_resident_check for the ARP
// reply of port p whose peer switch has a localnet port: " &&
// is_chassis_resident(CR)" with the port's own chassis-redirect port
// for a gateway port, the router's only gateway port's for a port with
// reside-on-redirect-chassis, else "".
func (b *routerBuilder) chassisResidentCheck(p *RouterPort) string {
	if p.Gateway {
		return " && is_chassis_resident(" + p.CRKey + ")"
	}
	if gws := b.gatewayPorts(); p.NB.Options["reside-on-redirect-chassis"] == "true" && len(gws) == 1 {
		return " && is_chassis_resident(" + gws[0].CRKey + ")"
	}
	return ""
}

// peerHasLocalnet reports whether port p's peer is a port of a switch
// with a localnet port (!vector_is_empty(&op->peer->od->localnet_ports)).
func (b *routerBuilder) peerHasLocalnet(p *RouterPort) bool {
	if p.PeerLSP == nil {
		return false
	}
	for _, pid := range b.s.Switches[p.PeerSwitch].Ports {
		if lsp := b.s.Ports[pid]; lsp != nil && lsp.Type == "localnet" {
			return true
		}
	}
	return false
}

// arpReplyResidence is what northd appends to the ARP reply match of port
// p (build_lrouter_ipv4_ip_input): on a router with gateway ports, for a
// port whose peer switch has a localnet port, the chassis-resident check.
func (b *routerBuilder) arpReplyResidence(p *RouterPort) string {
	if len(b.gatewayPorts()) == 0 || !b.peerHasLocalnet(p) {
		return ""
	}
	return b.chassisResidentCheck(p)
}

// gatewayResidence is " && is_chassis_resident(CR)" for a gateway port,
// "" for another: the admission of the port's MAC
// (consider_l3dgw_port_is_centralized) and its ND replies.
func gatewayResidence(p *RouterPort) string {
	if !p.Gateway {
		return ""
	}
	return " && is_chassis_resident(" + p.CRKey + ")"
}

// lookupResidence is the residence check of a gateway port's
// ARP-request lookups in lr_in_lookup_neighbor (but on the releases with
// RouterDGPARPOnSwitch, where the peer switch checks it).
func (b *routerBuilder) lookupResidence(p *RouterPort) string {
	if b.rel.Has(release.RouterDGPARPOnSwitch) {
		return ""
	}
	return gatewayResidence(p)
}

// buildGatewayPMTUDFlow is build_lrouter_icmp_packet_toobig_admin_flows
// (RouterPMTUDDrop): an ICMP too-big for a gateway port's MAC that came
// in from a tunnel off the gateway chassis turns around to the port.
func (b *routerBuilder) buildGatewayPMTUDFlow(p *RouterPort) {
	if !p.Gateway || !b.rel.Has(release.RouterPMTUDDrop) {
		return
	}
	b.add(lflow.LRInAdmission, 120,
		fmt.Sprintf("((ip4 && icmp4.type == 3 && icmp4.code == 4) || (ip6 && icmp6.type == 2 && icmp6.code == 0)) && eth.dst == %s && !is_chassis_resident(%s) && flags.tunnel_rx == 1", p.NB.MAC, p.CRKey),
		"outport <-> inport; inport = "+p.Key+"; next;", "")
}

// buildGatewayNDSkip is the gateway port's part of
// build_neigh_learning_flows_for_lrouter_port (RouterDGPNDSkip):
// multicast ND off the gateway chassis is not learned.
func (b *routerBuilder) buildGatewayNDSkip(p *RouterPort) {
	if !p.Gateway || !b.rel.Has(release.RouterDGPNDSkip) {
		return
	}
	b.add(lflow.LRInLookupNeighbor, 120,
		fmt.Sprintf("inport == %s && (nd_na || nd_ns) && eth.mcast && !is_chassis_resident(%s)", p.Key, p.CRKey),
		"reg9[2] = 1; next;", p.NB.UUID)
}

// buildGatewayRedirectFlows is build_gateway_redirect_flows_for_lrouter:
// traffic routed out of a gateway port goes to its chassis-redirect port.
func (b *routerBuilder) buildGatewayRedirectFlows() {
	for _, p := range b.gatewayPorts() {
		b.add(lflow.LRInGWRedirect, 50, "outport == "+p.Key, "outport = "+p.CRKey+"; next;", p.NB.UUID)
	}
	b.add(lflow.LRInGWRedirect, 0, "1", "next;", "")
}

// crKey is the JSON key of port name's chassis-redirect port
// (ovn_chassis_redirect_name).
func crKey(name string) string { return strconv.Quote("cr-" + name) }
