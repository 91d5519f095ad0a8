package trace_test

import (
	"context"
	"fmt"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// TestTopologySweep traces, on every topology fixture (what
// ovn-kubernetes and Neutron write: testdata/topologies) and every live
// release that can express it, the packets of a real cluster's day with
// the real ovn-trace and with aclc trace on the same live NB: east-west
// on one switch (TCP to a service port with no conntrack, new and replies;
// one of SSH, UDP DNS and ICMP echo, in turn per pair, with no conntrack
// and new), across the switch's router to the first VM of every other
// switch and to the outside, to a load balancer VIP, ARP requests for a
// neighbour and for the gateway, a DHCP discover, and
// traffic arriving from the physical network at a localnet port for the
// router; on a dual-stack switch also TCP over IPv6 (east-west and
// routed), a DHCPv6 solicit and a router solicitation; for a port of type
// virtual, its parents' gratuitous ARP of the VIP and ARP and TCP for the
// VIP from the other VMs; on a switch with ports of unknown addresses (port
// security disabled), TCP to a MAC no port has and, from such a port,
// another host's packet; TCP to a port of type remote (a pod on another
// node). aclc must give ovn-trace's --minimal text, conntrack actions
// and verdict, or say "not traced" where ovn-trace's path goes into what
// aclc does not model (checkNotTraced). The counts per release are
// logged; issue 22's target is ≥ 95% identical.
func TestTopologySweep(t *testing.T) {
	files, _ := filepath.Glob("../testdata/topologies/*.yaml")
	if len(files) == 0 {
		t.Fatal("no topology fixtures")
	}
	run := func(t *testing.T, sb *ovnsandbox.Sandbox, r *release.Release) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
		defer cancel()
		total, notTraced := 0, 0
		for _, fx := range files {
			t.Run(strings.TrimSuffix(filepath.Base(fx), ".yaml"), func(t *testing.T) {
				live, tr := liveTopology(t, ctx, sb, fx, r)
				if live == nil {
					return
				}
				for _, p := range topologyPackets(live) {
					total++
					t.Run(p.name, func(t *testing.T) {
						if sweepOneLB(t, ctx, sb, tr, p.flow, p.ct, p.lbDst) {
							notTraced++
						}
					})
				}
			})
		}
		t.Logf("OVN %s: %d packets over %d topologies: %d identical to ovn-trace (%.0f%%), %d not traced (each checked against ovn-trace's path)",
			r.Name(), total, len(files), total-notTraced, 100*float64(total-notTraced)/float64(max(total, 1)), notTraced)
	}
	t.Run("23.03.1", func(t *testing.T) { run(t, startSandbox(t), release.MustLookup("23.03.1")) })
	forEachRelease(t, run)
}

// sweepPacket is one packet of a sweep: a microflow and its --ct states.
type sweepPacket struct {
	name, flow string
	ct         []string
	lbDst      string // --lb-dst, for a packet to a VIP
}

// gateway is the router port a switch's router port leads to: its MAC and
// first IPv4 address.
type gateway struct{ mac, ip4 string }

func gatewayOf(snap *nbschema.Snapshot, sw string) (gateway, bool) {
	for _, pid := range snap.Switches[sw].Ports {
		if g, ok := peerOf(snap, snap.Ports[pid]); ok {
			return g, true
		}
	}
	return gateway{}, false
}

// peerOf is the router port a switch port of type router leads to.
func peerOf(snap *nbschema.Snapshot, p *nbdb.LogicalSwitchPort) (gateway, bool) {
	if p == nil || p.Type != "router" {
		return gateway{}, false
	}
	for _, rp := range snap.RouterPorts {
		if rp.Name != p.Options["router-port"] {
			continue
		}
		g := gateway{mac: rp.MAC}
		for _, n := range rp.Networks {
			if pf, err := netip.ParsePrefix(n); err == nil && pf.Addr().Is4() {
				g.ip4 = pf.Addr().String()
				break
			}
		}
		return g, true
	}
	return gateway{}, false
}

// vipOf is one IPv4 TCP VIP of a load balancer on the switch (its own or
// its groups'), as IP and port, with its backends (IP:PORT), if any.
func vipOf(snap *nbschema.Snapshot, sw string) (ip, port string, backends []string, ok bool) {
	ls := snap.Switches[sw]
	lbs := append([]string{}, ls.LoadBalancer...)
	for _, gid := range ls.LoadBalancerGroup {
		if g := snap.LBGroups[gid]; g != nil {
			lbs = append(lbs, g.LoadBalancer...)
		}
	}
	for _, id := range lbs {
		lb := snap.LoadBalancers[id]
		if lb == nil || (lb.Protocol != nil && *lb.Protocol != "tcp") {
			continue
		}
		for _, vip := range nbschema.SortedKeys(lb.Vips) {
			if ap, err := netip.ParseAddrPort(vip); err == nil && ap.Addr().Is4() {
				return ap.Addr().String(), fmt.Sprint(ap.Port()), strings.Split(lb.Vips[vip], ","), true
			}
		}
	}
	return "", "", nil, false
}

// virtualPort is a port of type virtual: its MAC, IPv4 VIP and parents.
type virtualPort struct {
	name, mac, ip4 string
	parents        []string
}

// virtualPorts lists the ports of type virtual of switch sw with an IPv4
// virtual-ip.
func virtualPorts(snap *nbschema.Snapshot, sw string) []virtualPort {
	var out []virtualPort
	for _, pid := range snap.Switches[sw].Ports {
		p := snap.Ports[pid]
		if p == nil || p.Type != "virtual" || len(p.Addresses) == 0 {
			continue
		}
		ip, err := netip.ParseAddr(p.Options["virtual-ip"])
		if err != nil || !ip.Is4() {
			continue
		}
		out = append(out, virtualPort{name: p.Name, mac: strings.Fields(p.Addresses[0])[0], ip4: ip.String(), parents: strings.Split(p.Options["virtual-parents"], ",")})
	}
	return out
}

// remoteAddrs are the addresses of switch sw's ports of type remote with
// an IPv4 address (an ovn-kubernetes pod on another node of a layer2
// network).
func remoteAddrs(snap *nbschema.Snapshot, sw string) []portAddr {
	var out []portAddr
	for _, pid := range snap.Switches[sw].Ports {
		p := snap.Ports[pid]
		if p == nil || p.Type != "remote" || len(p.Addresses) == 0 {
			continue
		}
		f := strings.Fields(p.Addresses[0])
		for _, x := range f[1:] {
			if ip, err := netip.ParseAddr(x); err == nil && ip.Is4() {
				out = append(out, portAddr{name: p.Name, mac: f[0], ip4: x})
				break
			}
		}
	}
	return out
}

// unknownPorts lists the ports of switch sw with "unknown" among their
// addresses, localnet ports aside.
func unknownPorts(snap *nbschema.Snapshot, sw string) []string {
	var out []string
	for _, pid := range snap.Switches[sw].Ports {
		if p := snap.Ports[pid]; p != nil && p.Type != "localnet" && slices.Contains(p.Addresses, "unknown") {
			out = append(out, p.Name)
		}
	}
	return out
}

// topologyPackets are the sweep's packets over snap (see
// TestTopologySweep).
func topologyPackets(snap *nbschema.Snapshot) []sweepPacket {
	var out []sweepPacket
	add := func(name, flow string, cts ...[]string) {
		if len(cts) == 0 {
			cts = [][]string{nil}
		}
		for _, ct := range cts {
			out = append(out, sweepPacket{name: name + "/" + strings.Join(ct, "+"), flow: flow, ct: ct})
		}
	}
	states := [][]string{nil, {"new", "new", "new", "new"}, {"est,rpl", "est,rpl", "est,rpl", "est,rpl"}}
	switches := nbschema.SortedKeys(snap.Switches)
	for _, sw := range switches {
		vms := realAddrs(snap, sw)
		pair := 0 // east-west pairs so far
		gw, hasGW := gatewayOf(snap, sw)
		for _, a := range vms {
			if a.ip4 == "" {
				continue
			}
			// east-west on the switch
			arped := false
			for _, b := range vms {
				if b.name == a.name || b.ip4 == "" {
					continue
				}
				base := fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip4.src == %s && ip4.dst == %s && ip.ttl == 64`, a.name, a.mac, b.mac, a.ip4, b.ip4)
				add(a.name+">"+b.name+"/tcp-8080", base+" && tcp && tcp.dst == 8080", states...)
				// SSH, DNS and ICMP in turn: each pair one of them
				// (a switch of three VMs sends each twice)
				l4 := []string{"tcp && tcp.dst == 22", "udp && udp.dst == 53", "icmp4 && icmp4.type == 8"}[pair%3]
				pair++
				add(a.name+">"+b.name+"/"+l4, base+" && "+l4, states[:2]...)
				if !arped {
					// (one neighbour per VM: the responder's flows
					// differ only in the address)
					arped = true
					add(a.name+">"+b.name+"/arp", fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == ff:ff:ff:ff:ff:ff && arp.op == 1 && arp.sha == %s && arp.spa == %s && arp.tpa == %s`, a.name, a.mac, a.mac, a.ip4, b.ip4))
				}
				if a.ip6 != "" && b.ip6 != "" {
					add(a.name+">"+b.name+"/tcp6-8080", fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip6.src == %s && ip6.dst == %s && ip.ttl == 64 && tcp && tcp.dst == 8080`, a.name, a.mac, b.mac, a.ip6, b.ip6), states[:2]...)
				}
			}
			if a.ip6 != "" {
				// DHCPv6 solicit and router solicitation of a
				// dual-stack VM
				add(a.name+"/dhcpv6-solicit", fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == 33:33:00:01:00:02 && ip6.src == %s && ip6.dst == ff02::1:2 && ip.ttl == 1 && udp && udp.src == 546 && udp.dst == 547`, a.name, a.mac, a.ip6))
				add(a.name+"/router-solicit", fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == 33:33:00:00:00:02 && ip6.src == %s && ip6.dst == ff02::2 && ip.ttl == 255 && icmp6 && icmp6.type == 133 && icmp6.code == 0`, a.name, a.mac, a.ip6))
			}
			// a virtual port's VIP (keepalived, Octavia): its parents'
			// gratuitous ARP, and TCP to it from the other VMs
			for _, vp := range virtualPorts(snap, sw) {
				if slices.Contains(vp.parents, a.name) {
					add(a.name+">"+vp.name+"/garp", fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == ff:ff:ff:ff:ff:ff && arp.op == 1 && arp.sha == %s && arp.spa == %s && arp.tpa == %s`, a.name, a.mac, a.mac, vp.ip4, vp.ip4))
					continue
				}
				add(a.name+">"+vp.name+"/arp", fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == ff:ff:ff:ff:ff:ff && arp.op == 1 && arp.sha == %s && arp.spa == %s && arp.tpa == %s`, a.name, a.mac, a.mac, a.ip4, vp.ip4))
				add(a.name+">"+vp.name+"/tcp-8080", fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip4.src == %s && ip4.dst == %s && ip.ttl == 64 && tcp && tcp.dst == 8080`, a.name, a.mac, vp.mac, a.ip4, vp.ip4), states[:2]...)
			}
			for _, b := range remoteAddrs(snap, sw) {
				// a port on another node (interconnect): out
				// through the tunnel
				add(a.name+">"+b.name+"/remote", fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip4.src == %s && ip4.dst == %s && ip.ttl == 64 && tcp && tcp.dst == 8080`, a.name, a.mac, b.mac, a.ip4, b.ip4), states[1])
			}
			if unknown := unknownPorts(snap, sw); len(unknown) > 0 {
				// a MAC no port has: to the ports with unknown
				// addresses (and their FDB)
				add(a.name+">unknown-mac", fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == 52:54:00:ff:ff:01 && ip4.src == %s && ip4.dst == 198.51.100.9 && ip.ttl == 64 && tcp && tcp.dst == 8080`, a.name, a.mac, a.ip4), states[1])
				if slices.Contains(unknown, a.name) {
					// what a port without port security forwards:
					// another host's MAC and address
					for _, b := range vms {
						if b.name != a.name {
							add(a.name+">"+b.name+"/forwarded", fmt.Sprintf(`inport == %q && eth.src == 52:54:00:ee:ee:01 && eth.dst == %s && ip4.src == 198.51.100.7 && ip4.dst == %s && ip.ttl == 64 && tcp && tcp.dst == 8080`, a.name, b.mac, b.ip4), states[1])
							break
						}
					}
				}
			}
			add(a.name+"/dhcp-discover", fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == ff:ff:ff:ff:ff:ff && ip4.src == 0.0.0.0 && ip4.dst == 255.255.255.255 && ip.ttl == 64 && udp && udp.src == 68 && udp.dst == 67`, a.name, a.mac))
			if ip, port, backends, ok := vipOf(snap, sw); ok {
				dst := a.mac // any unicast MAC: the VIP is load-balanced before the L2 lookup
				if hasGW {
					dst = gw.mac
				}
				flow := fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip4.src == %s && ip4.dst == %s && ip.ttl == 64 && tcp && tcp.dst == %s`, a.name, a.mac, dst, a.ip4, ip, port)
				add(a.name+">vip", flow)
				for _, b := range backends {
					// each backend in turn: ovn-trace picks one at random
					// without --lb-dst
					out = append(out, sweepPacket{name: a.name + ">vip>" + b + "/new", flow: flow, ct: states[1], lbDst: b})
				}
			}
			if !hasGW {
				continue
			}
			if gw.ip4 != "" {
				add(a.name+">gw/arp", fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == ff:ff:ff:ff:ff:ff && arp.op == 1 && arp.sha == %s && arp.spa == %s && arp.tpa == %s`, a.name, a.mac, a.mac, a.ip4, gw.ip4))
			}
			// across the router: the first VM of every other switch
			// (the paths to the others differ only at the last
			// switch's egress), and the outside
			for _, sw2 := range switches {
				if sw2 == sw {
					continue
				}
				for _, b := range realAddrs(snap, sw2) {
					if b.ip4 == "" {
						continue
					}
					base := fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip4.src == %s && ip4.dst == %s && ip.ttl == 64`, a.name, a.mac, gw.mac, a.ip4, b.ip4)
					add(a.name+">"+b.name+"/routed", base+" && tcp && tcp.dst == 8080", states[:2]...)
					if a.ip6 != "" && b.ip6 != "" {
						add(a.name+">"+b.name+"/routed6", fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip6.src == %s && ip6.dst == %s && ip.ttl == 64 && tcp && tcp.dst == 8080`, a.name, a.mac, gw.mac, a.ip6, b.ip6), states[1])
					}
					break
				}
			}
			add(a.name+">outside", fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip4.src == %s && ip4.dst == 8.8.8.8 && ip.ttl == 64 && tcp && tcp.dst == 443`, a.name, a.mac, gw.mac, a.ip4), states[:2]...)
		}
		// from the physical network, at a localnet port, to the router
		// ports of the switch (a NodePort, a floating IP, SNAT replies)
		for _, pid := range snap.Switches[sw].Ports {
			ln := snap.Ports[pid]
			if ln == nil || ln.Type != "localnet" {
				continue
			}
			for _, pid2 := range snap.Switches[sw].Ports {
				rp := snap.Ports[pid2]
				if rp == nil || rp.Type != "router" {
					continue
				}
				g, ok := peerOf(snap, rp)
				if !ok || g.ip4 == "" {
					continue
				}
				base := fmt.Sprintf(`inport == %q && eth.src == 52:54:00:00:00:01 && eth.dst == %s && ip4.src == 192.0.2.200 && ip4.dst == %s && ip.ttl == 64`, ln.Name, g.mac, g.ip4)
				add(ln.Name+">"+rp.Name, base+" && tcp && tcp.dst == 30080", states[:2]...)
				add(ln.Name+">"+rp.Name+"/arp", fmt.Sprintf(`inport == %q && eth.src == 52:54:00:00:00:01 && eth.dst == ff:ff:ff:ff:ff:ff && arp.op == 1 && arp.sha == 52:54:00:00:00:01 && arp.spa == 192.0.2.200 && arp.tpa == %s`, ln.Name, g.ip4))
			}
		}
	}
	return out
}
