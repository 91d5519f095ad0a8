// Package nbgen generates realistic OVN Northbound databases for benchmarks
// and scale tests: switches with ports, port groups spanning several
// switches, address sets, and ACLs written the way CMSs write them
// (ovn-kubernetes network policies, Neutron security groups), with a chosen
// fraction of allow-stateless and a mix of the other verbs, logging, meters
// and labels. The same Params always give the same NB.
package nbgen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// Params sizes a generated NB.
type Params struct {
	Switches       int     // S: logical switches
	PortsPerSwitch int     // P: ports on each switch
	PortGroups     int     // G: port groups
	SwitchesPerPG  int     // how many switches each port group spans (default 3)
	AddressSets    int     // A: address sets
	AddrsPerSet    int     // K: addresses in each address set
	ACLs           int     // N: ACLs in all
	StatelessFrac  float64 // f: fraction of ACLs that are allow-stateless
	SwitchACLFrac  float64 // fraction of ACLs on switches rather than port groups (default 0.1)
	LoadBalancers  int     // load balancers, each on one switch
	Seed           uint64  // random seed
	// Shape lays out the port groups: ShapeConsecutive (the default),
	// ShapeCluster or ShapeRandomSpan.
	Shape Shape
	// ClusterACLFrac is, in ShapeCluster, the fraction of the port-group
	// ACLs on the cluster-wide port group (default 0.1).
	ClusterACLFrac float64
	// ClusterRouter joins every switch to one distributed router,
	// ovn-kubernetes' ovn_cluster_router: a router port rtos-<switch> with
	// the switch's /24 (its .254) and the switch's router-type port
	// stor-<switch>, so that traffic between switches is routed (what
	// trace benchmarks across a router need).
	ClusterRouter bool
}

// Shape is how port groups are laid out over the switches.
type Shape string

const (
	// ShapeConsecutive: each port group holds one port on each of
	// SwitchesPerPG consecutive switches.
	ShapeConsecutive Shape = "consecutive"
	// ShapeCluster is ovn-kubernetes' layout: port group "cluster" holds
	// every port and carries the default-deny ACLs (drop ip4 both ways at
	// priority 1000, ARP/ND allowed at 1001) and ClusterACLFrac of the
	// port-group ACLs (cluster-wide policies); the other port groups are
	// namespaces, each port in exactly one, pods placed on random switches.
	ShapeCluster Shape = "cluster"
	// ShapeRandomSpan is a large cluster's layout (issue 24): port group
	// "cluster" holds every port and carries the default-deny ACLs (as in
	// ShapeCluster); every other port group holds one port on each of 2–8
	// switches chosen at random (not consecutive); address sets mix pod
	// IPs with /24s and outside addresses; the port-group ACLs are on the
	// random port groups, with the matches of ShapeConsecutive ({$a, $b}
	// peer sets, $<pg>_ip4 port-group address sets, port ranges).
	ShapeRandomSpan Shape = "random-span"
)

// Shapes are the port group layouts, in the order the benchmarks run them.
var Shapes = []Shape{ShapeConsecutive, ShapeCluster, ShapeRandomSpan}

// ClusterPG is the name of the cluster-wide port group of ShapeCluster.
const ClusterPG = "cluster"

// Default returns the parameters of the 10k benchmark NB.
func Default() Params {
	return Params{Switches: 200, PortsPerSwitch: 10, PortGroups: 500, AddressSets: 1000, AddrsPerSet: 10,
		ACLs: 10000, StatelessFrac: 0.2, Seed: 1}
}

// Scale returns the parameters of the scale NBs of n ACLs in
// shape: a switch per 100 ACLs, a port group per 20, an address set per
// 10 (50k: 500 / 2,500 / 5,000).
func Scale(n int, shape Shape) Params {
	p := Default()
	p.ACLs, p.Switches, p.PortGroups, p.AddressSets = n, max(n/100, 1), max(n/20, 1), max(n/10, 1)
	p.Shape = shape
	return p
}

// Generate builds the NB described by p.
func Generate(p Params) *nbschema.Snapshot {
	if p.SwitchesPerPG <= 0 {
		p.SwitchesPerPG = 3
	}
	if p.SwitchACLFrac <= 0 {
		p.SwitchACLFrac = 0.1
	}
	if p.ClusterACLFrac <= 0 {
		p.ClusterACLFrac = 0.1
	}
	cluster := p.Shape == ShapeCluster && p.PortGroups > 0
	span := p.Shape == ShapeRandomSpan && p.PortGroups > 0
	r := rand.New(rand.NewPCG(p.Seed, p.Seed^0x9e3779b97f4a7c15))
	s := nbschema.NewSnapshot()
	id := func(table, key string) string { return nbschema.DerivedUUID(table, key) }

	meter := &nbdb.Meter{UUID: id("Meter", "acl-log"), Name: "acl-log", Unit: "pktps"}
	band := &nbdb.MeterBand{UUID: id("Meter_Band", "acl-log 0"), Action: "drop", Rate: 100}
	meter.Bands = []string{band.UUID}
	s.Meters[meter.UUID], s.MeterBands[band.UUID] = meter, band
	fair := true
	fm := &nbdb.Meter{UUID: id("Meter", "acl-log-fair"), Name: "acl-log-fair", Unit: "pktps", Fair: &fair}
	fband := &nbdb.MeterBand{UUID: id("Meter_Band", "acl-log-fair 0"), Action: "drop", Rate: 10}
	fm.Bands = []string{fband.UUID}
	s.Meters[fm.UUID], s.MeterBands[fband.UUID] = fm, fband

	sws := make([]sw, p.Switches)
	for i := range sws {
		name := fmt.Sprintf("sw%d", i)
		ls := &nbdb.LogicalSwitch{UUID: id("Logical_Switch", name), Name: name}
		for j := 0; j < p.PortsPerSwitch; j++ {
			pn := fmt.Sprintf("sw%d-p%d", i, j)
			ip := fmt.Sprintf("10.%d.%d.%d", i/250, i%250, j+1)
			lsp := &nbdb.LogicalSwitchPort{UUID: id("Logical_Switch_Port", pn), Name: pn,
				Addresses: []string{fmt.Sprintf("0a:00:%02x:%02x:%02x:%02x %s", i>>8&0xff, i&0xff, j>>8&0xff, j&0xff, ip)}}
			s.Ports[lsp.UUID] = lsp
			ls.Ports = append(ls.Ports, lsp.UUID)
			sws[i].ports = append(sws[i].ports, lsp)
		}
		sws[i].ls = ls
		s.Switches[ls.UUID] = ls
	}

	if p.ClusterRouter {
		clusterRouter(s, sws)
	}

	asNames := make([]string, p.AddressSets)
	for i := range asNames {
		name := fmt.Sprintf("as_%d", i)
		as := &nbdb.AddressSet{UUID: id("Address_Set", name), Name: name}
		for k := 0; k < p.AddrsPerSet; k++ {
			as.Addresses = append(as.Addresses, fmt.Sprintf("172.%d.%d.%d", 16+i%16, (i/16)%256, k+1))
		}
		if span {
			as.Addresses = spanAddresses(r, p, i)
		}
		s.AddressSets[as.UUID] = as
		asNames[i] = name
	}

	pgs := make([]*nbdb.PortGroup, p.PortGroups)
	for i := range pgs {
		name := fmt.Sprintf("pg_%d", i)
		if (cluster || span) && i == 0 {
			name = ClusterPG
		}
		pg := &nbdb.PortGroup{UUID: id("Port_Group", name), Name: name}
		if span {
			if i > 0 && p.Switches > 0 && p.PortsPerSwitch > 0 {
				for _, w := range randomSwitches(r, p.Switches, 2+r.IntN(7)) {
					ports := sws[w].ports
					pg.Ports = append(pg.Ports, ports[r.IntN(len(ports))].UUID)
				}
			}
		} else if !cluster && p.Switches > 0 && p.PortsPerSwitch > 0 { // clusterLayout fills the cluster shape
			start := r.IntN(p.Switches)
			for k := 0; k < p.SwitchesPerPG && k < p.Switches; k++ {
				ports := sws[(start+k)%p.Switches].ports
				pg.Ports = append(pg.Ports, ports[r.IntN(len(ports))].UUID)
			}
		}
		s.PortGroups[pg.UUID] = pg
		pgs[i] = pg
	}

	var defaults int
	if cluster {
		ports := make([][]*nbdb.LogicalSwitchPort, len(sws))
		for i := range sws {
			ports[i] = sws[i].ports
		}
		defaults = clusterLayout(r, s, pgs, ports)
	}
	if span {
		for _, w := range sws {
			for _, lsp := range w.ports {
				pgs[0].Ports = append(pgs[0].Ports, lsp.UUID)
			}
		}
		defaults = defaultDeny(s, pgs[0])
	}

	for i := 0; i < p.LoadBalancers && p.Switches > 0; i++ {
		name := fmt.Sprintf("lb_%d", i)
		proto := "tcp"
		lb := &nbdb.LoadBalancer{UUID: id("Load_Balancer", name), Name: name, Protocol: &proto,
			Vips: map[string]string{fmt.Sprintf("192.168.%d.%d:80", i/250, i%250+1): fmt.Sprintf("10.0.0.%d:8080", i%250+1)}}
		s.LoadBalancers[lb.UUID] = lb
		ls := sws[i%p.Switches].ls
		ls.LoadBalancer = append(ls.LoadBalancer, lb.UUID)
	}

	for i := 0; i < p.ACLs-defaults; i++ {
		acl := &nbdb.ACL{UUID: id("ACL", fmt.Sprint(i)), Priority: 1000 + r.IntN(2000)}
		onSwitch := len(pgs) == 0 || r.Float64() < p.SwitchACLFrac
		var port string // "@pg" or "\"port\""
		if onSwitch {
			if len(sws) == 0 {
				break
			}
			w := sws[r.IntN(len(sws))]
			w.ls.ACLs = append(w.ls.ACLs, acl.UUID)
			if len(w.ports) > 0 {
				port = fmt.Sprintf("%q", w.ports[r.IntN(len(w.ports))].Name)
			}
		} else {
			pg := pgs[r.IntN(len(pgs))]
			if cluster {
				pg = pgs[0]
				if len(pgs) > 1 && r.Float64() >= p.ClusterACLFrac {
					pg = pgs[1+r.IntN(len(pgs)-1)]
				}
			} else if span && len(pgs) > 1 {
				pg = pgs[1+r.IntN(len(pgs)-1)]
			}
			pg.ACLs = append(pg.ACLs, acl.UUID)
			port = "@" + pg.Name
		}
		if r.IntN(2) == 0 {
			acl.Direction = "to-lport"
		} else {
			acl.Direction = "from-lport"
		}
		acl.Match = match(r, acl.Direction, port, asNames, i)
		switch x := r.Float64(); {
		case x < p.StatelessFrac:
			acl.Action = "allow-stateless"
		case x < p.StatelessFrac+(1-p.StatelessFrac)*0.6:
			acl.Action = "allow-related"
		case x < p.StatelessFrac+(1-p.StatelessFrac)*0.7:
			acl.Action = "allow"
		case x < p.StatelessFrac+(1-p.StatelessFrac)*0.9:
			acl.Action = "drop"
		default:
			acl.Action = "reject"
		}
		if r.IntN(10) == 0 {
			acl.Log = true
			name := fmt.Sprintf("acl-%d", i)
			acl.Name = &name
			sev := []string{"alert", "warning", "notice", "info", "debug"}[r.IntN(5)]
			acl.Severity = &sev
			if r.IntN(2) == 0 {
				m := meter.Name
				if r.IntN(4) == 0 {
					m = fm.Name
				}
				acl.Meter = &m
			}
		}
		if r.IntN(20) == 0 && (acl.Action == "allow-related" || acl.Action == "allow") {
			acl.Label = 1 + r.IntN(1000)
		}
		s.ACLs[acl.UUID] = acl
	}
	return s
}

// sw is a generated switch and its VM ports (not its router port).
type sw struct {
	ls    *nbdb.LogicalSwitch
	ports []*nbdb.LogicalSwitchPort
}

// clusterRouter adds ovn_cluster_router with a port to each switch of
// sws, as ovn-kubernetes writes them (rtos-<node> on the router,
// stor-<node> of type router with addresses "router" on the switch):
// switch i's ports are 10.i/250.i%250.j+1, its router port .254/24.
func clusterRouter(s *nbschema.Snapshot, sws []sw) {
	id := func(table, key string) string { return nbschema.DerivedUUID(table, key) }
	lr := &nbdb.LogicalRouter{UUID: id("Logical_Router", ClusterRouterName), Name: ClusterRouterName}
	for i, w := range sws {
		name := w.ls.Name
		lrp := &nbdb.LogicalRouterPort{UUID: id("Logical_Router_Port", "rtos-"+name), Name: "rtos-" + name,
			MAC:      fmt.Sprintf("0a:58:%02x:%02x:%02x:fe", i>>16&0xff, i>>8&0xff, i&0xff),
			Networks: []string{fmt.Sprintf("10.%d.%d.254/24", i/250, i%250)}}
		s.RouterPorts[lrp.UUID] = lrp
		lr.Ports = append(lr.Ports, lrp.UUID)
		lsp := &nbdb.LogicalSwitchPort{UUID: id("Logical_Switch_Port", "stor-"+name), Name: "stor-" + name,
			Type: "router", Addresses: []string{"router"}, Options: map[string]string{"router-port": lrp.Name}}
		s.Ports[lsp.UUID] = lsp
		w.ls.Ports = append(w.ls.Ports, lsp.UUID)
	}
	s.Routers[lr.UUID] = lr
}

// ClusterRouterName is the router Params.ClusterRouter adds.
const ClusterRouterName = "ovn_cluster_router"

// clusterLayout fills ShapeCluster's port groups: pgs[0] holds every port
// and gets the default-deny ACLs, every port joins one random namespace
// (pgs[1:]). It returns how many ACLs it added.
func clusterLayout(r *rand.Rand, s *nbschema.Snapshot, pgs []*nbdb.PortGroup, ports [][]*nbdb.LogicalSwitchPort) int {
	for _, sp := range ports {
		for _, lsp := range sp {
			pgs[0].Ports = append(pgs[0].Ports, lsp.UUID)
			if len(pgs) > 1 {
				ns := pgs[1+r.IntN(len(pgs)-1)]
				ns.Ports = append(ns.Ports, lsp.UUID)
			}
		}
	}
	return defaultDeny(s, pgs[0])
}

// defaultDeny adds ovn-kubernetes' default-deny ACLs to the cluster-wide
// port group pg (drop ip4 both ways at priority 1000, ARP/ND allowed at
// 1001) and returns how many it added.
func defaultDeny(s *nbschema.Snapshot, pg *nbdb.PortGroup) int {
	defs := []struct {
		dir, match, action string
		prio               int
	}{
		{"to-lport", "outport == @" + ClusterPG + " && ip4", "drop", 1000},
		{"from-lport", "inport == @" + ClusterPG + " && ip4", "drop", 1000},
		{"to-lport", "outport == @" + ClusterPG + " && (arp || nd)", "allow", 1001},
		{"from-lport", "inport == @" + ClusterPG + " && (arp || nd)", "allow", 1001},
	}
	for i, d := range defs {
		name := fmt.Sprintf("default-%d", i)
		acl := &nbdb.ACL{UUID: nbschema.DerivedUUID("ACL", name), Name: &name, Direction: d.dir, Match: d.match, Action: d.action, Priority: d.prio}
		s.ACLs[acl.UUID] = acl
		pg.ACLs = append(pg.ACLs, acl.UUID)
	}
	return len(defs)
}

// randomSwitches picks k distinct switches of n at random (all n when
// k >= n), in the order drawn.
func randomSwitches(r *rand.Rand, n, k int) []int {
	if k >= n {
		return r.Perm(n)
	}
	out := make([]int, 0, k)
	for len(out) < k {
		w := r.IntN(n)
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// spanAddresses are the addresses of ShapeRandomSpan's address set i
// (K of them, distinct): pod IPs (those nbgen gives ports, 10.S/16.P),
// /24s inside the cluster and outside addresses, about 6:2:2.
func spanAddresses(r *rand.Rand, p Params, i int) []string {
	seen := make(map[string]bool, p.AddrsPerSet)
	out := make([]string, 0, p.AddrsPerSet)
	for tries := 0; len(out) < p.AddrsPerSet && tries < 4*p.AddrsPerSet+16; tries++ {
		var a string
		switch x := r.IntN(10); {
		case x < 6 && p.Switches > 0 && p.PortsPerSwitch > 0:
			w, j := r.IntN(p.Switches), r.IntN(p.PortsPerSwitch)
			a = fmt.Sprintf("10.%d.%d.%d", w/250, w%250, j+1)
		case x < 8:
			a = fmt.Sprintf("10.%d.%d.0/24", 128+r.IntN(128), r.IntN(256))
		default:
			a = fmt.Sprintf("%d.%d.%d.%d", []int{198, 203, 100, 8}[i%4], r.IntN(256), r.IntN(256), 1+r.IntN(254))
		}
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}

// wellKnownPorts are the destination ports network policies name most.
var wellKnownPorts = []int{22, 53, 80, 443, 2379, 3306, 5432, 6379, 6443, 8080, 8443, 9090, 9200, 27017}

// match writes an ACL match in the style of ovn-kubernetes and Neutron.
func match(r *rand.Rand, dir, port string, as []string, i int) string {
	portField := "outport"
	ipField := "ip4.src" // the peer's address
	if dir == "from-lport" {
		portField, ipField = "inport", "ip4.dst"
	}
	prefix := ""
	if port != "" {
		prefix = portField + " == " + port + " && "
	}
	anyAS := func() string { return as[r.IntN(len(as))] }
	switch r.IntN(8) {
	case 0, 1:
		// ovn-kubernetes network policy: peers from a namespace or pod
		// selector address set, one named port.
		if len(as) > 0 {
			return fmt.Sprintf("%sip4 && %s == $%s && tcp && tcp.dst == %d", prefix, ipField, anyAS(), wellKnownPorts[r.IntN(len(wellKnownPorts))])
		}
		fallthrough
	case 2:
		// Neutron security group rule: remote CIDR and a port range.
		lo := 1000 + r.IntN(30000)
		return fmt.Sprintf("%sip4 && %s == 10.%d.%d.0/24 && udp && %d <= udp.dst <= %d", prefix, ipField, r.IntN(256), r.IntN(256), lo, lo+r.IntN(1000))
	case 3:
		// ovn-kubernetes policy with several peers and a port list.
		if len(as) > 1 {
			return fmt.Sprintf("%sip4 && %s == {$%s, $%s} && tcp && tcp.dst == {80, 443, %d}", prefix, ipField, anyAS(), anyAS(), 1024+i%60000)
		}
		return fmt.Sprintf("%sip4 && tcp && tcp.dst == {80, 443, %d}", prefix, 1024+i%60000)
	case 4:
		// Neutron remote security group: the port group's own address set.
		if pg, ok := strings.CutPrefix(port, "@"); ok {
			return fmt.Sprintf("%sip4 && %s == $%s_ip4", prefix, ipField, pg)
		}
		return fmt.Sprintf("%sip4 && %s == 10.%d.0.0/16", prefix, ipField, r.IntN(256))
	case 5:
		return fmt.Sprintf("%sip4 && icmp4", prefix)
	case 6:
		// ovn-kubernetes egress firewall style: a port range to a CIDR.
		lo := 1 + r.IntN(60000)
		return fmt.Sprintf("%sip4 && %s == 192.168.%d.0/24 && tcp && tcp.dst >= %d && tcp.dst <= %d", prefix, ipField, r.IntN(256), lo, lo+r.IntN(500))
	default:
		return fmt.Sprintf("%sip6 && tcp && tcp.dst == %d", prefix, 1+i%65535)
	}
}
