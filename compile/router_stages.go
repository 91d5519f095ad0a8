package compile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/release"
)

// buildNewStageDefaults adds the default flow of each router stage that
// came after 23.03 and holds nothing else on the routers aclc compiles
// (no DHCP relay, NAT or load balancers): the "1, next;" flows of
// lr_in_dhcp_relay_req, lr_in_post_unsnat and lr_in_ct_extract
// (build_lr_nat_defrag_and_lb_default_flows), lr_in_dhcp_relay_resp_chk
// and lr_in_dhcp_relay_resp (build_lswitch_and_lrouter_iterate_by_lr's
// DHCP relay defaults). Each is there when the release's layout has the
// stage.
func (b *routerBuilder) buildNewStageDefaults() {
	for _, st := range []lflow.RouterStage{lflow.LRInDHCPRelayReq, lflow.LRInPostUnsnat, lflow.LRInCtExtract,
		lflow.LRInDHCPRelayRespChk, lflow.LRInDHCPRelayResp} {
		if b.r.Layout.Has(st) {
			b.add(st, 0, "1", "next;", "")
		}
	}
}

// buildECMPStatefulEgrFlows is build_ecmp_stateful_egr_flows_for_lrouter
// (RouterECMPStatefulEgr): lr_in_ecmp_stateful_egr outputs the packet.
func (b *routerBuilder) buildECMPStatefulEgrFlows() {
	if b.rel.Has(release.RouterECMPStatefulEgr) {
		b.add(lflow.LRInECMPStatefulEgr, 0, "1", "output;", "")
	}
}

// buildECMPStatefulEgrFlowsPort is
// build_ecmp_stateful_egr_flows_for_lrouter_port: traffic of an ECMP
// symmetric-reply route commits the next hop's MAC and the port's tunnel
// key. Its match needs reg9[10], which only routes with
// options:ecmp_symmetric_reply set (aclc compiles none), so the flow is
// for byte identity only.
func (b *routerBuilder) buildECMPStatefulEgrFlowsPort(p *RouterPort) {
	if !b.rel.Has(release.RouterECMPStatefulEgr) {
		return
	}
	b.add(lflow.LRInECMPStatefulEgr, 100, "reg9[10] == 1 && ip && outport == "+p.Key,
		fmt.Sprintf("ct_commit { ct_label.ecmp_reply_eth = eth.dst; ct_mark.ecmp_reply_port = %d;}; output;", b.portKey(p)), p.NB.UUID)
}

// buildECMPStatefulEgrFlowsCR is buildECMPStatefulEgrFlowsPort for the
// chassis-redirect ports. northd numbers them after the router ports
// (they are created after them), in the order of a set of the gateway
// ports hashed by their addresses in its memory: with one gateway port
// its key is the router's ports + 1; with more aclc numbers them in NB
// order and says so in Router.CRKeysUnknown (only these flows print the
// keys, and they need reg9[10], which no compiled router sets).
func (b *routerBuilder) buildECMPStatefulEgrFlowsCR() {
	if !b.rel.Has(release.RouterECMPStatefulEgr) {
		return
	}
	gws := b.gatewayPorts()
	b.r.CRKeysUnknown = len(gws) > 1
	for i, p := range gws {
		b.add(lflow.LRInECMPStatefulEgr, 100, "reg9[10] == 1 && ip && outport == "+p.CRKey,
			fmt.Sprintf("ct_commit { ct_label.ecmp_reply_eth = eth.dst; ct_mark.ecmp_reply_port = %d;}; output;", len(b.lr.Ports)+1+i), "")
	}
}

// portKey is the tunnel key northd gives router port p on a router whose
// ports are all new to it (ovn_port_allocate_key): 1, 2, ... in the order
// of the router's ports column, which the IDL keeps sorted by UUID. A
// router whose ports came and went over time may have other keys in its
// SB; only the ECMP symmetric-reply flows above print them.
func (b *routerBuilder) portKey(p *RouterPort) int {
	ids := slices.Clone(b.lr.Ports)
	slices.SortFunc(ids, strings.Compare)
	return slices.Index(ids, p.NB.UUID) + 1
}

// buildNetworkIDFlows is build_lrouter_network_id_flows
// (RouterNetworkID): each network of each port gets its index as
// flags.network_id (IPv6: but the link-local address).
func (b *routerBuilder) buildNetworkIDFlows() {
	if !b.rel.Has(release.RouterNetworkID) {
		return
	}
	for _, p := range b.ports() {
		for i, n := range p.V4 {
			b.add(lflow.LRInNetworkID, 110, fmt.Sprintf("outport == %s && ip4 && reg0 == %s/%d", p.Key, n.addrS(), n.plen),
				fmt.Sprintf("flags.network_id = %d; next;", networkID(i)), "")
		}
		for i, n := range p.V6[:len(p.V6)-1] {
			b.add(lflow.LRInNetworkID, 110, fmt.Sprintf("outport == %s && ip6 && xxreg0 == %s/%d", p.Key, n.addrS(), n.plen),
				fmt.Sprintf("flags.network_id = %d; next;", networkID(i)), "")
		}
	}
	b.add(lflow.LRInNetworkID, 105, "1", "flags.network_id = 0; next;", "")
	b.add(lflow.LRInNetworkID, 0, "1", "next;", "")
}

// networkID is the flags.network_id of a port's i-th network: 0 past
// OVN_MAX_NETWORK_ID (15).
func networkID(i int) int {
	if i > 15 {
		return 0
	}
	return i
}
