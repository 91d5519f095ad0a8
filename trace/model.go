package trace

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/internal/ethaddr"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// Flow origins.
const (
	originCompiled = "compiled"
	originModelled = "modelled"
)

// tflow is one flow of a datapath, ready to be matched and executed.
type tflow struct {
	f      lflow.Flow
	origin string
	always bool       // matches every packet (modelled --outport flow)
	match  *expr.Expr // parsed on first use (parsed reports whether tried)
	parsed bool
	err    error // why the match or the actions do not parse
	acts   []action
	// prereqs are what the actions add to the match (ct_commit: ip).
	prereqs []string
}

type tableKey struct {
	p     lflow.Pipeline
	table int
}

// dpModel is one logical switch as the tracer sees it.
type dpModel struct {
	name, uuid string
	ls         *nbdb.LogicalSwitch
	layout     *lflow.Layout // the stage layout of the NB's release
	rel        *release.Release
	// unmodelled names what the tracer cannot model on this release
	// (the packet is then not traced); "" when all is modelled.
	unmodelled string
	res        expr.Resolver
	ports      map[string]*nbdb.LogicalSwitchPort // by name
	tables     map[tableKey][]*tflow
	modelled   []string // names of the non-ACL stages given modelled flows
	// disabledMACs are the MACs of each disabled port (modelL2).
	disabledMACs map[string][]string
}

// withSvcMonitor adds the address set ovn-northd writes to the SB for
// $svc_monitor_mac (NB_Global options:svc_monitor_mac; northd picks a
// random MAC when unset, which no traced packet carries).
type withSvcMonitor struct {
	expr.Resolver
	mac string
}

// AddressSet implements expr.Resolver, adding svc_monitor_mac.
func (w withSvcMonitor) AddressSet(name string) ([]string, bool) {
	if name == "svc_monitor_mac" {
		if w.mac == "" {
			return nil, true
		}
		return []string{w.mac}, true
	}
	return w.Resolver.AddressSet(name)
}

func newDPModel(v *nbview.View, id string, flows *lflow.Datapath, outport string) (*dpModel, error) {
	s := v.Snapshot()
	ls := s.Switches[id]
	r, err := v.Resolver(id)
	if err != nil {
		return nil, err
	}
	d := &dpModel{
		name: ls.Name, uuid: id, ls: ls,
		res:          withSvcMonitor{Resolver: r, mac: s.GlobalOption("svc_monitor_mac")},
		ports:        map[string]*nbdb.LogicalSwitchPort{},
		tables:       map[tableKey][]*tflow{},
		disabledMACs: map[string][]string{},
		layout:       layoutOf(s),
		rel:          s.Release,
	}
	sw := v.SwitchFlags(id)
	for _, p := range v.Ports(sw) {
		d.ports[p.Name] = p
	}
	if flows != nil {
		for _, f := range flows.Flows {
			if f.Stage.IsACLStage() {
				d.addFlow(f, originCompiled)
			}
		}
	}
	d.modelLB(v)
	if sw.TierContest != nil && d.unmodelled == "" {
		// nbview.Switch.TierContest: the flows are one of northd's
		// possible outcomes, and the verdict may differ with the other.
		var names []string
		for _, pg := range sw.TierContest {
			names = append(names, strconv.Quote(s.PortGroups[pg].Name))
		}
		d.unmodelled = fmt.Sprintf("switch %s: whether OVN %s's northd evaluates its ACL tiers depends on the order of port groups %s in its hash table, not on the NB (FDP-1154; aclc compile reports northd-undecided)",
			d.name, d.rel.Name(), strings.Join(names, ", "))
	}
	d.modelDNS(s)
	d.modelDHCP(s)
	d.modelARP(v)
	d.modelMirror(v)
	d.modelL2(v, outport)
	d.modelUnmodelled(v)
	d.modelPortSec()
	for k, fs := range d.tables {
		slices.SortStableFunc(fs, func(a, b *tflow) int {
			if c := cmp.Compare(b.f.Priority, a.f.Priority); c != 0 {
				return c
			}
			return lflow.Compare(a.f, b.f)
		})
		d.tables[k] = fs
	}
	return d, nil
}

func (d *dpModel) addFlow(f lflow.Flow, origin string) *tflow {
	tf := newTflow(f, origin)
	k := tableKey{f.Stage.Pipeline(), f.Stage.Table()}
	d.tables[k] = append(d.tables[k], tf)
	return tf
}

// add adds a modelled flow for a stage aclc does not compile.
func (d *dpModel) add(st lflow.Stage, prio int, match, actions, source string) *tflow {
	st = d.layout.Stage(st)
	if !slices.Contains(d.modelled, st.Name()) {
		d.modelled = append(d.modelled, st.Name())
	}
	return d.addFlow(lflow.Flow{Stage: st, Priority: prio, Match: match, Actions: actions, Source: source}, originModelled)
}

// modelL2 adds the ls_in_l2_lkup flows that pick the output port: the
// explicit one if outport is given, else one per port MAC address (northd
// build_lswitch_ip_unicast_lookup), multicast to the flood group, and the
// default: no FDB entry (get_fdb gives "none"), so ls_in_l2_unknown sends
// the packet to the ports with "unknown" addresses, or drops it.
func (d *dpModel) modelL2(v *nbview.View, outport string) {
	if outport != "" {
		tf := d.add(lflow.InL2Lkup, 65535, "1", "outport = "+strconv.Quote(outport)+"; output;", "")
		tf.f.Match = "1 /* --outport or the microflow's outport */"
		return
	}
	if d.has(release.NetworkFunction) {
		// build_network_function: a packet the egress network-function
		// stage sends back to the ingress pipeline keeps its outport
		d.add(lflow.InL2Lkup, 100, "reg8[23] == 1", "output;", "")
	}
	d.modelFlood()
	macs := map[string][]*nbdb.LogicalSwitchPort{} // the ports of each MAC, in name order
	for _, name := range slices.Sorted(maps.Keys(d.ports)) {
		p := d.ports[name]
		if rp := v.RouterPortPeer(p); p.Type == "router" && rp != nil && d.has(release.RouterL2PeerMAC) && (p.Enabled == nil || *p.Enabled) {
			d.modelRouterL2(v, p, rp) // (its addresses are not read)
			continue
		}
		for _, a := range p.Addresses {
			if a == "dynamic" && p.DynamicAddresses != nil {
				a = *p.DynamicAddresses
			}
			f := strings.Fields(a)
			if len(f) == 0 {
				continue
			}
			// northd scans the start of the entry (or of the peer's
			// MAC) and prints what it read.
			var mac ethaddr.Addr
			ok := false
			if f[0] == "router" {
				if rp := v.RouterPortPeer(p); rp != nil {
					if p.Enabled == nil || *p.Enabled {
						d.modelRouterL2(v, p, rp)
						continue
					}
					mac, _, ok = ethaddr.Scan(rp.MAC)
				}
			} else {
				mac, _, ok = ethaddr.Scan(a)
			}
			if !ok {
				continue
			}
			if p.Type == "external" {
				continue // (unmodelled.go)
			}
			if p.Enabled != nil && !*p.Enabled {
				// (northd drops what is sent to it: unmodelled.go)
				d.disabledMACs[p.Name] = append(d.disabledMACs[p.Name], mac.String())
				continue
			}
			macs[mac.String()] = append(macs[mac.String()], p)
		}
	}
	for _, mac := range slices.Sorted(maps.Keys(macs)) {
		for _, p := range macs[mac] {
			if len(d.disabledMACs) > 0 && slices.ContainsFunc(slices.Collect(maps.Values(d.disabledMACs)), func(ms []string) bool { return slices.Contains(ms, mac) }) {
				continue // a disabled port's MAC: not traced
			}
			match := "eth.dst == " + mac
			if proxy, ok := d.arpProxyMAC(p); ok {
				// one flow for both MACs (northd build_lswitch_ip_unicast_lookup)
				match = "eth.dst == { " + proxy + ", " + mac + " }"
			}
			d.add(lflow.InL2Lkup, 50, match, "outport = "+strconv.Quote(p.Name)+"; output;", p.UUID)
		}
	}
	d.add(lflow.InL2Lkup, 0, "1", "outport = get_fdb(eth.dst); next;", "")
	if len(d.unknownPorts()) > 0 {
		d.add(lflow.InL2Unknown, 50, `outport == "none"`, `outport = "_MC_unknown"; output;`, "")
	} else {
		d.add(lflow.InL2Unknown, 50, `outport == "none"`, "drop;", "")
	}
	d.add(lflow.InL2Unknown, 0, "1", "output;", "")
}

// modelRouterL2 adds the ls_in_l2_lkup flows of switch port p of type
// router for its peer rp's MAC (northd build_lswitch_ip_unicast_lookup):
// one flow to p, with the arp_proxy MAC; when rp's router has distributed
// gateway ports and the switch a localnet port, only on the chassis of the
// gateway port's chassis-redirect port (rp's own, or, for a port with
// reside-on-redirect-chassis, the router's only one); when p has a
// switch-side chassis-redirect port (release.SwitchChassisRedirect), to
// that port off its chassis. ovn-trace takes every port as resident on its
// chassis (is_chassis_resident() is true), and so does the tracer, which
// says so when such a flow decides (run.residency). A router with load
// balancers is left to unmodelled.go: from 26.03 a distributed load
// balancer makes northd treat the router as distributed.
func (d *dpModel) modelRouterL2(v *nbview.View, p *nbdb.LogicalSwitchPort, rp *nbdb.LogicalRouterPort) {
	hw, _, ok := ethaddr.Scan(rp.MAC)
	if !ok {
		return
	}
	mac := hw.String()
	r := v.RouterOfPort(rp.Name)
	if nbview.IsGatewayPort(rp) && r != nil && (len(r.LoadBalancer) > 0 || len(r.LoadBalancerGroup) > 0) {
		return // (not traced: unmodelled.go)
	}
	match := "eth.dst == " + mac
	if proxy, ok := d.arpProxyMAC(p); ok {
		match = "eth.dst == { " + proxy + ", " + mac + " }"
	}
	var dgps []*nbdb.LogicalRouterPort
	if r != nil {
		dgps = v.GatewayPorts(r)
	}
	localnet := false
	for _, q := range d.ports {
		localnet = localnet || q.Type == "localnet"
	}
	out := "outport = " + strconv.Quote(p.Name) + "; output;"
	switch cr, hasCR := v.SwitchChassisRedirect(p); {
	case len(dgps) > 0 && localnet:
		if nbview.IsGatewayPort(rp) {
			match += " && is_chassis_resident(" + strconv.Quote("cr-"+rp.Name) + ")"
		} else if rp.Options["reside-on-redirect-chassis"] == "true" && len(dgps) == 1 {
			match += " && is_chassis_resident(" + strconv.Quote("cr-"+dgps[0].Name) + ")"
		}
	case hasCR:
		d.add(lflow.InL2Lkup, 50, "eth.dst == "+mac+" && !is_chassis_resident("+strconv.Quote(cr)+")", "outport = "+strconv.Quote(cr)+"; output;", p.UUID)
		match += " && is_chassis_resident(" + strconv.Quote(cr) + ")"
	}
	d.add(lflow.InL2Lkup, 50, match, out, p.UUID)
}

// arpProxyMAC is the MAC a router port's arp_proxy option starts with,
// which the L2 lookup sends to that port with the router port's own MAC
// (release.ARPProxyMAC; northd parses the option with extract_addresses:
// a MAC, then IPs and networks).
func (d *dpModel) arpProxyMAC(p *nbdb.LogicalSwitchPort) (string, bool) {
	opt := p.Options["arp_proxy"]
	if p.Type != "router" || opt == "" || !d.has(release.ARPProxyMAC) {
		return "", false
	}
	mac, err := ethaddr.Parse(strings.Fields(opt)[0])
	if err != nil {
		return "", false
	}
	return mac.String(), true
}

// unknownPorts returns, in name order, the enabled ports with "unknown"
// among their addresses or of type switch (the _MC_unknown group).
func (d *dpModel) unknownPorts() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(d.ports)) {
		p := d.ports[name]
		if p.Enabled != nil && !*p.Enabled {
			continue
		}
		// (25.03+: northd counts a port of type switch as having
		// unknown addresses)
		if slices.Contains(p.Addresses, "unknown") || p.Type == "switch" {
			out = append(out, name)
		}
	}
	return out
}

// parse parses the flow's match once, on first use: a trace only looks at
// the flows of the tables it visits, so big NBs stay cheap to trace.
func (tf *tflow) parse(d *expr.Dialect, r expr.Resolver) {
	if tf.parsed || tf.always {
		return
	}
	tf.parsed = true
	if tf.err != nil {
		return
	}
	if e, err := d.Parse(tf.matchText(), r); err != nil {
		tf.err = fmt.Errorf("match does not parse (ovn-controller would not install the flow): %w", err)
	} else {
		tf.match = e
	}
}

// modelDNS adds the ls_in_dns_lookup flow of a switch with DNS records
// (build_lswitch_dns_lookup_and_response); ovn-trace does not implement
// dns_lookup() (it reports so and yields 0), so the response flow never
// matches.
func (d *dpModel) modelDNS(s *nbschema.Snapshot) {
	for _, id := range d.ls.DNSRecords {
		if dns := s.DNS[id]; dns != nil && len(dns.Records) > 0 {
			d.add(lflow.InDNSLookup, 100, "udp.dst == 53", "reg0[4] = dns_lookup(); next;", "")
			d.add(lflow.InDNSLookup, 0, "1", "next;", "")
			return
		}
	}
}

// notTracedFlow adds a flow of stage st at priority prio that ends the
// trace "not traced: WHY" for the packets match covers: flows northd writes
// there that aclc does not generate and would otherwise answer for. The
// trace prefixes WHY with the switch's name and ends it with the stage.
func (d *dpModel) notTracedFlow(st lflow.Stage, prio int, match, why string) {
	d.add(st, prio, match, notModelledMark+"("+strconv.Quote(why)+");", "")
}

// modelARP adds the ls_in_arp_rsp flows that answer ARP requests for the
// IPv4 addresses of the switch's ports (northd
// build_lswitch_arp_nd_responder_known_ips; IPv6 ND is not modelled).
// What the responder does with requests from a localnet port differs from
// version to version (a skip flow until the resident-chassis condition of
// upstream 20ee3d9a0 / 39ca8ea00 / 6a360b624 in 24.03.9, 25.09.4 and
// 26.03.2; 26.03.0–26.03.1's external-ARP rules in port security), and so
// does the proxy responder of arp_proxy ports (modelARPProxy).
func (d *dpModel) modelARP(v *nbview.View) {
	any := false      // a flow in the stage: it then needs its priority-0 next
	localnet := false // the switch has a localnet port
	var localnets []string
	var answered []string // the IPv4 addresses the responder answers
	defer func() {
		for _, name := range localnets {
			what := "(arp.op == 1 || nd_ns)"
			if d.has(release.LocalnetARPResponder) {
				// only the requests a reply flow matches depend on
				// the chassis (flags.localnet); the others go on
				what = "(nd_ns || (arp.op == 1 && arp.tpa == {" + strings.Join(answered, ", ") + "}))"
				if len(answered) == 0 {
					what = "nd_ns"
				}
			}
			d.notTracedFlow(lflow.InARPRsp, 65535, "inport == "+strconv.Quote(name)+" && "+what,
				"ARP/ND request from localnet port "+name+": the responder's localnet rule depends on the version and the chassis")
		}
	}()
	for _, name := range slices.Sorted(maps.Keys(d.ports)) {
		if p := d.ports[name]; p.Type == "localnet" {
			any, localnet = true, true
			localnets = append(localnets, name)
		}
	}
	hasProxy, proxied := d.modelARPProxy(v)
	any = any || proxied
	for _, name := range slices.Sorted(maps.Keys(d.ports)) {
		p := d.ports[name]
		if nbview.VLANPassthru(d.ls) {
			break // (northd: no responder on a VLAN-transparent switch)
		}
		if (p.Type != "" && p.Type != "router" && p.Type != "localport" && p.Type != "remote") || (p.Enabled != nil && !*p.Enabled) || slices.Contains(p.Addresses, "unknown") {
			continue // (northd: no responder for a port with "unknown" addresses)
		}
		for _, a := range p.Addresses {
			if a == "dynamic" && p.DynamicAddresses != nil {
				a = *p.DynamicAddresses
			}
			if a == "router" && p.Type == "router" {
				// the peer router port's MAC and IPv4 addresses
				// (northd's lsp_addrs for "router")
				if a = ""; v.RouterPortPeer(p) != nil {
					rp := v.RouterPortPeer(p)
					a = rp.MAC
					for _, n := range rp.Networks {
						a += " " + n
					}
				}
			}
			f := strings.Fields(a)
			if len(f) < 2 {
				continue
			}
			hw, err := ethaddr.Parse(f[0]) // extract_addresses, printed as ETH_ADDR_FMT
			if err != nil {
				continue
			}
			mac := hw.String()
			for _, ipf := range f[1:] {
				ip, err := netip.ParseAddr(strings.SplitN(ipf, "/", 2)[0])
				if err != nil || !ip.Is4() {
					continue
				}
				m := "arp.tpa == " + ip.String() + " && arp.op == 1"
				if hasProxy && d.has(release.ARPProxyUnicast) {
					// a unicast request goes to its target, not to the
					// proxy responder
					d.add(lflow.InARPRsp, 50, m+" && eth.dst == "+mac, "next;", p.UUID)
				}
				if d.has(release.ARPRspBroadcastOnly) {
					m += " && eth.dst == ff:ff:ff:ff:ff:ff"
				}
				d.add(lflow.InARPRsp, 100, m+" && inport == "+strconv.Quote(name), "next;", p.UUID)
				if localnet && d.has(release.LocalnetARPResponder) {
					// build_lswitch_arp_nd_local_resp_match: a localnet
					// port's requests (not traced above) need residency
					m += " && ((flags.localnet == 1 && is_chassis_resident(" + strconv.Quote(name) + ")) || flags.localnet == 0)"
				}
				answered = append(answered, ip.String())
				d.add(lflow.InARPRsp, 50, m, "eth.dst = eth.src; eth.src = "+mac+"; arp.op = 2; /* ARP reply */ arp.tha = arp.sha; arp.sha = "+mac+
					"; arp.tpa = arp.spa; arp.spa = "+ip.String()+"; outport = inport; flags.loopback = 1; output;", p.UUID)
				any = true
			}
		}
	}
	if any {
		d.add(lflow.InARPRsp, 0, "1", "next;", "")
	}
}

// modelMirror adds, on a switch with lport mirrors (25.09+), the mirror
// stages' flows: northd's priority-0 next in ls_in_mirror and
// ls_out_mirror, and for each mirrored port and direction a flow that ends
// the trace "not traced": the mirror() copies to the serving port, and
// the rules' matches, are not modelled (build_mirror_lflows).
func (d *dpModel) modelMirror(v *nbview.View) {
	any := false
	for _, name := range slices.Sorted(maps.Keys(d.ports)) {
		p := d.ports[name]
		for _, m := range v.LportMirrors(d.ls, p) {
			any = true
			why := "port " + name + " is mirrored to " + m.Serving + " (mirror " + m.Mirror.Name + "): the mirror stages are not modelled"
			if m.Mirror.Filter != nbdb.MirrorFilterToLport {
				d.notTracedFlow(lflow.InMirror, 100, "inport == "+strconv.Quote(name), why)
			}
			if m.Mirror.Filter != nbdb.MirrorFilterFromLport {
				d.notTracedFlow(lflow.OutMirror, 100, "outport == "+strconv.Quote(name), why)
			}
		}
	}
	if any {
		d.add(lflow.InMirror, 0, "1", "next;", "")
		d.add(lflow.OutMirror, 0, "1", "next;", "")
	}
}

// layoutOf returns the stage layout of the snapshot's release.
func layoutOf(s *nbschema.Snapshot) *lflow.Layout {
	l, ok := lflow.LayoutFor(s.Release.Series())
	if !ok {
		panic("trace: no stage layout for OVN " + s.Release.Name())
	}
	return l
}
