package trace

import (
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/internal/ethaddr"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// This file holds the not-traced flows of the switch stages the tracer
// models by hand: where northd writes flows there that the model does not
// reproduce byte for byte, a flow of the model at a priority no lower
// than theirs ends the trace "not traced" for (a superset of) their
// packets, so that no packet is answered by a flow northd did not write.
// TestModelCoversNorthd proves it against each live release's northd.

// modelUnmodelled adds the not-traced flows of switch d (after modelARP
// and modelL2, whose stages they join).
func (d *dpModel) modelUnmodelled(v *nbview.View) {
	if d.has(release.EVPN) && d.unmodelled == "" {
		// northd's skip_evpn_from_conntrack condition: the switch has
		// remote VTEPs (get_remote_fdb, the ARP/ND pre-lookup, reg9[5])
		if vni, err := strconv.ParseInt(d.ls.OtherConfig["dynamic-routing-vni"], 10, 64); err == nil && vni >= 0 && vni <= 1<<24-1 {
			d.unmodelled = "switch " + d.name + ": EVPN remote VTEPs (other_config:dynamic-routing-vni): its remote FDB and ARP/ND stages are not modelled"
			return
		}
	}
	routed := false // a router port with a peer: the router's addresses
	v6 := false     // an IPv6 address northd answers ND for
	for _, name := range slices.Sorted(maps.Keys(d.ports)) {
		p := d.ports[name]
		if p.Type == "router" && v.RouterPortPeer(p) != nil {
			routed = true
		}
		for _, a := range p.Addresses {
			if a == "dynamic" && p.DynamicAddresses != nil {
				a = *p.DynamicAddresses
			}
			for _, f := range strings.Fields(a)[min(1, len(strings.Fields(a))):] {
				if ip, err := netip.ParseAddr(strings.SplitN(f, "/", 2)[0]); err == nil && ip.Is6() {
					v6 = true
				}
			}
		}
	}
	if routed || v6 {
		// build_lswitch_arp_nd_responder_known_ips: nd_na / nd_na_router
		// replies for the ports' IPv6 and the routers' link-local
		// addresses (priority 100 skips and 50 replies)
		d.notTracedFlow(lflow.InARPRsp, 110, "nd_ns",
			"IPv6 neighbor solicitation: the ND responder (nd_na, nd_na_router) is not modelled")
		d.ensureDefault(lflow.InARPRsp)
	}
	// build_lswitch_input_port_sec_od and _op (ICMP "too big" from a
	// tunnel): no traced packet arrives from a tunnel
	if compile.Dialect(d.rel).Valid("flags.tunnel_rx == 1", d.res) == nil {
		d.notTracedFlow(lflow.InCheckPortSec, 120, "flags.tunnel_rx == 1",
			"packet received from a tunnel (flags.tunnel_rx): northd's ICMP \"too big\" handling is not modelled")
	}
	if d.has(release.LocalnetARPResponder) {
		// build_lswitch_from_localnet_op
		for _, name := range slices.Sorted(maps.Keys(d.ports)) {
			if p := d.ports[name]; p.Type == "localnet" {
				d.add(lflow.InLookupFDB, 50, "inport == "+strconv.Quote(name), "flags.localnet = 1; next;", p.UUID)
				d.ensureDefault(lflow.InLookupFDB)
			}
		}
	}
	if d.ls.OtherConfig["mcast_snoop"] == "true" {
		// build_lswitch_destination_lookup_bmcast and the IGMP groups
		d.notTracedFlow(lflow.InL2Lkup, 100, "ip4.mcast || ip6.mcast || igmp || mldv1 || mldv2",
			"multicast on a switch with mcast_snoop: IGMP/MLD snooping and its groups are not modelled")
	}
	// build_lswitch_destination_lookup_bmcast: health-check replies to
	// the service monitor MAC go to handle_svc_check()
	d.notTracedFlow(lflow.InL2Lkup, 110, "eth.dst == $svc_monitor_mac",
		"packet to the service monitor MAC: handle_svc_check() is not modelled")
	if routed {
		// build_lswitch_rport_arp_req_flows and the self-originated
		// (G)ARP flows: requests for the routers' addresses go to the
		// router port (and the rest of the switch), the routers' own
		// requests to _MC_flood_l2. A superset of those addresses: every
		// network, NAT external IP and VIP of the routers, every MAC of
		// their ports and NATs.
		// (rportarp.go models those of routers without NAT or load
		// balancers)
		d.modelRouterARP(v)
		ips, macs := routerAddresses(v, d.ports)
		why := "ARP/ND request for or from the address of a router with NAT or load balancers at the L2 lookup: northd's flows for its addresses are not modelled"
		if len(ips) > 0 {
			d.notTracedFlow(lflow.InL2Lkup, 90, "arp.op == 1 && arp.tpa == {"+strings.Join(ips, ", ")+"}", why)
		}
		if len(macs) > 0 {
			d.notTracedFlow(lflow.InL2Lkup, 90, "eth.src == {"+strings.Join(macs, ", ")+"} && (arp.op == 1 || rarp.op == 3 || nd_ns)", why)
		}
		d.notTracedFlow(lflow.InL2Lkup, 90, "nd_ns", "IPv6 neighbor solicitation at the L2 lookup of a switch attached to a router: northd's flows for the routers' addresses are not modelled")
	}
	for _, name := range slices.Sorted(maps.Keys(d.ports)) {
		p := d.ports[name]
		if p.Type != "router" {
			continue
		}
		lrp := v.RouterPortPeer(p)
		if lrp == nil {
			continue
		}
		r := v.RouterOfPort(lrp.Name)
		if nbview.IsGatewayPort(lrp) && r != nil && (len(r.LoadBalancer) > 0 || len(r.LoadBalancerGroup) > 0) {
			// the distributed gateway port's MAC is looked up only on
			// the chassis of its chassis-redirect port, and from 26.03
			// not when a distributed load balancer makes the router
			// distributed (modelRouterL2 models the rest)
			if mac, err := ethaddr.Parse(strings.Fields(lrp.MAC + " ")[0]); err == nil {
				match := "eth.dst == " + mac.String()
				if proxy, ok := d.arpProxyMAC(p); ok {
					match = "eth.dst == {" + proxy + ", " + mac.String() + "}"
				}
				d.notTracedFlow(lflow.InL2Lkup, 50, match,
					"packet to distributed gateway port "+lrp.Name+"'s MAC on a router with load balancers: is_chassis_resident(\"cr-"+lrp.Name+"\") and the router's distributed load balancers are not modelled")
			}
		}
		if r == nil {
			continue
		}
		for _, id := range r.Nat {
			n := v.Snapshot().NATs[id]
			if n == nil || n.ExternalMAC == nil || n.LogicalPort == nil {
				continue
			}
			if mac, err := ethaddr.Parse(*n.ExternalMAC); err == nil {
				d.notTracedFlow(lflow.InL2Lkup, 50, "eth.dst == "+mac.String(),
					"packet to floating IP "+n.ExternalIP+"'s MAC (distributed NAT on "+*n.LogicalPort+" of router "+r.Name+"): not modelled")
			}
		}
	}
	// build_lswitch_input_port_sec_op and the L2 lookup of a disabled
	// port: northd drops its packets and those to its MACs
	for _, name := range slices.Sorted(maps.Keys(d.ports)) {
		p := d.ports[name]
		if p.Enabled == nil || *p.Enabled {
			continue
		}
		why := "port " + name + " is disabled: northd's flows for it are not modelled"
		d.notTracedFlow(lflow.InCheckPortSec, 100, "inport == "+strconv.Quote(name), why)
		for _, mac := range d.disabledMACs[name] {
			d.notTracedFlow(lflow.InL2Lkup, 50, "eth.dst == "+mac, why)
		}
		d.notTracedFlow(lflow.InL2Unknown, 50, "outport == "+strconv.Quote(name), why)
		if ips := portIPv4s(p.Addresses, p.DynamicAddresses); len(ips) > 0 {
			d.notTracedFlow(lflow.InARPRsp, 100, "arp.op == 1 && arp.tpa == {"+strings.Join(ips, ", ")+"}", why)
			d.ensureDefault(lflow.InARPRsp)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(d.ports)) {
		p := d.ports[name]
		switch {
		case p.Type == "external":
			// (its L2 lookup flows depend on the chassis)
			for _, mac := range portMACs(p.Addresses, p.DynamicAddresses) {
				d.notTracedFlow(lflow.InL2Lkup, 50, "eth.dst == "+mac,
					"packet to external port "+name+"'s MAC: northd's flows for external ports are not modelled")
			}
		case p.Type == "router" && !slices.Contains(p.Addresses, "router") && !d.has(release.RouterL2PeerMAC):
			// a router port without "router" among its addresses: some
			// releases look up its peer's MAC all the same (from
			// release.RouterL2PeerMAC on, modelRouterL2 models it)
			if lrp := v.RouterPortPeer(p); lrp != nil {
				for _, mac := range portMACs([]string{lrp.MAC}, nil) {
					d.notTracedFlow(lflow.InL2Lkup, 50, "eth.dst == "+mac,
						"packet to router port "+name+"'s peer MAC (its addresses lack \"router\"): the L2 lookup differs by release")
				}
			}
		}
	}
	// build_lswitch_arp_nd_responder_known_ips for a port of type
	// virtual: the (gratuitous) ARP or ND of its virtual IP from each
	// virtual parent on the switch calls bind_vport() (keepalived's and
	// Octavia's VIPs, Neutron's allowed-address-pairs)
	for _, name := range slices.Sorted(maps.Keys(d.ports)) {
		p := d.ports[name]
		vip, err := netip.ParseAddr(p.Options["virtual-ip"])
		if p.Type != "virtual" || err != nil {
			continue
		}
		match := "arp.spa == " + vip.String()
		if vip.Is6() {
			match = "(nd_ns || nd_na) && nd.target == " + vip.String()
		}
		for _, parent := range strings.Split(p.Options["virtual-parents"], ",") {
			if d.ports[parent] == nil {
				continue // (northd: only a parent on the same switch)
			}
			d.notTracedFlow(lflow.InARPRsp, 100, "inport == "+strconv.Quote(parent)+" && "+match,
				"ARP/ND of virtual port "+name+"'s IP "+vip.String()+" from its virtual parent "+parent+": bind_vport() is not modelled")
			d.ensureDefault(lflow.InARPRsp)
		}
	}
}

// ensureDefault adds northd's priority-0 `next;' to a stage the model
// now has flows in, unless it has it.
func (d *dpModel) ensureDefault(st lflow.Stage) {
	st = d.layout.Stage(st)
	for _, tf := range d.tables[tableKey{st.Pipeline(), st.Table()}] {
		if tf.f.Priority == 0 && tf.f.Match == "1" {
			return
		}
	}
	d.add(st, 0, "1", "next;", "")
}

// portMACs returns the MACs (as northd prints them) of a port's address
// entries.
func portMACs(addrs []string, dynamic *string) []string {
	var out []string
	for _, a := range addrs {
		if a == "dynamic" && dynamic != nil {
			a = *dynamic
		}
		if f := strings.Fields(a); len(f) > 0 {
			if mac, err := ethaddr.Parse(f[0]); err == nil {
				out = append(out, mac.String())
			}
		}
	}
	return out
}

// portIPv4s returns the IPv4 addresses of a port's address entries.
func portIPv4s(addrs []string, dynamic *string) []string {
	var out []string
	for _, a := range addrs {
		if a == "dynamic" && dynamic != nil {
			a = *dynamic
		}
		f := strings.Fields(a)
		for _, x := range f[min(1, len(f)):] {
			if ip, err := netip.ParseAddr(strings.SplitN(x, "/", 2)[0]); err == nil && ip.Is4() {
				out = append(out, ip.String())
			}
		}
	}
	return out
}

// routerAddresses returns the IPv4 addresses (networks, NAT external IPs,
// load balancer VIPs) and the MACs (ports, NAT external MACs) of the
// routers with NAT or load balancers whose ports are peers of ports,
// sorted.
func routerAddresses(v *nbview.View, ports map[string]*nbdb.LogicalSwitchPort) (ips, macs []string) {
	s := v.Snapshot()
	ipSet, macSet := map[string]bool{}, map[string]bool{}
	addIP := func(a string) {
		if ip, err := netip.ParseAddr(strings.SplitN(a, "/", 2)[0]); err == nil && ip.Is4() {
			ipSet[ip.String()] = true
		}
	}
	addMAC := func(a string) {
		if mac, err := ethaddr.Parse(a); err == nil {
			macSet[mac.String()] = true
		}
	}
	seen := map[string]bool{}
	for _, p := range ports {
		lrp := v.RouterPortPeer(p)
		if p.Type != "router" || lrp == nil {
			continue
		}
		r := v.RouterOfPort(lrp.Name)
		if r == nil || seen[r.UUID] || simpleRouter(r) {
			continue
		}
		seen[r.UUID] = true
		for _, id := range r.Ports {
			if rp := s.RouterPorts[id]; rp != nil {
				addMAC(rp.MAC)
				for _, n := range rp.Networks {
					addIP(n)
				}
			}
		}
		for _, id := range r.Nat {
			if n := s.NATs[id]; n != nil {
				addIP(n.ExternalIP)
				if n.ExternalMAC != nil {
					addMAC(*n.ExternalMAC)
				}
			}
		}
		lbs := slices.Clone(r.LoadBalancer)
		for _, g := range r.LoadBalancerGroup {
			if grp := s.LBGroups[g]; grp != nil {
				lbs = append(lbs, grp.LoadBalancer...)
			}
		}
		for _, id := range lbs {
			if lb := s.LoadBalancers[id]; lb != nil {
				for _, vip := range nbview.VIPs(lb) {
					addIP(vip.IP.String())
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(ipSet)), slices.Sorted(maps.Keys(macSet))
}
