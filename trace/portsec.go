package trace

import (
	"maps"
	"math/big"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/internal/ethaddr"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// psAddr is one port_security entry: a MAC and the IPs allowed with it
// (OVN's struct lport_addresses; only the addresses, not the prefixes, are
// compared, as in ovn-trace).
type psAddr struct {
	mac      *big.Int
	ip4, ip6 []netip.Addr
}

func parsePortSecurity(p *nbdb.LogicalSwitchPort) []psAddr {
	var out []psAddr
	for _, s := range p.PortSecurity {
		f := strings.Fields(s)
		if len(f) == 0 {
			continue
		}
		m, err := ethaddr.Parse(f[0])
		if err != nil {
			continue
		}
		a := psAddr{mac: new(big.Int).SetBytes(m[:])}
		for _, ipf := range f[1:] {
			ipStr, _, _ := strings.Cut(ipf, "/")
			ip, err := netip.ParseAddr(ipStr)
			switch {
			case err != nil:
			case ip.Is4():
				a.ip4 = append(a.ip4, ip)
			default:
				a.ip6 = append(a.ip6, ip)
			}
		}
		out = append(out, a)
	}
	return out
}

// modelPortSec adds the port security flows the release's northd writes
// for every switch (build_lswitch_input_port_sec_od,
// build_lswitch_output_port_sec_od and the per-port check_*_port_sec()
// calls; the router-port bit from release.FromRouterPortBit on).
func (d *dpModel) modelPortSec() {
	d.add(lflow.InCheckPortSec, 100, "eth.src[40]", "drop;", "")
	if !strings.EqualFold(d.ls.OtherConfig["vlan-passthru"], "true") {
		// (a VLAN-transparent switch passes tagged packets)
		d.add(lflow.InCheckPortSec, 100, "vlan.present", "drop;", "")
	}
	d.add(lflow.InCheckPortSec, 50, "1", "reg0[15] = check_in_port_sec(); next;", "")
	if d.has(release.FromRouterPortBit) {
		// build_lswitch_input_port_sec_op: a router port's packets are
		// marked, not checked
		for _, name := range slices.Sorted(maps.Keys(d.ports)) {
			if p := d.ports[name]; p.Type == "router" && (p.Enabled == nil || *p.Enabled) {
				d.add(lflow.InCheckPortSec, 70, "inport == "+strconv.Quote(name), "reg0[18] = 1; next;", p.UUID)
			}
		}
	}
	d.add(lflow.InApplyPortSec, 50, "reg0[15] == 1", "drop;", "")
	d.add(lflow.InApplyPortSec, 0, "1", "next;", "")
	if d.has(release.ExtPortInportRewrite) {
		d.notTracedExternalFromLocalnet()
	}
	d.add(lflow.OutCheckPortSec, 100, "eth.mcast", "reg0[15] = 0; next;", "")
	d.add(lflow.OutCheckPortSec, 0, "1", "reg0[15] = check_out_port_sec(); next;", "")
	d.add(lflow.OutApplyPortSec, 50, "reg0[15] == 1", "drop;", "")
	d.add(lflow.OutApplyPortSec, 0, "1", "output;", "")
}

// notTracedExternalFromLocalnet ends the trace of a packet from a localnet
// port whose source is an external port's MAC: northd rewrites its inport
// to the external port (release.ExtPortInportRewrite), which aclc does not
// generate.
func (d *dpModel) notTracedExternalFromLocalnet() {
	for _, ln := range slices.Sorted(maps.Keys(d.ports)) {
		if d.ports[ln].Type != "localnet" {
			continue
		}
		for _, ext := range slices.Sorted(maps.Keys(d.ports)) {
			p := d.ports[ext]
			if p.Type != "external" {
				continue
			}
			for _, a := range p.Addresses {
				f := strings.Fields(a)
				if len(f) == 0 {
					continue
				}
				if mac, err := ethaddr.Parse(f[0]); err == nil {
					d.notTracedFlow(lflow.InCheckPortSec, 75, "inport == "+strconv.Quote(ln)+" && eth.src == "+mac.String(),
						"packet from localnet port "+ln+" with external port "+ext+"'s MAC: northd rewrites its inport")
				}
			}
		}
	}
}

func addrOf(m *expr.Microflow, field string) netip.Addr {
	n := getInt(m, field)
	if strings.HasPrefix(field, "ip4") {
		var b [4]byte
		n.FillBytes(b[:])
		return netip.AddrFrom4(b)
	}
	var b [16]byte
	n.FillBytes(b[:])
	return netip.AddrFrom16(b)
}

// lla is the IPv6 link-local address derived from a MAC (EUI-64).
func lla(mac *big.Int) netip.Addr {
	var m [6]byte
	mac.FillBytes(m[:])
	return netip.AddrFrom16([16]byte{0xfe, 0x80, 8: m[0] ^ 2, 9: m[1], 10: m[2], 11: 0xff, 12: 0xfe, 13: m[3], 14: m[4], 15: m[5]})
}

// checkPortSec is ovn-trace's execute_check_in_port_sec (in) or
// execute_check_out_port_sec (!in): 1 when the port has port security and
// the packet violates it, else 0.
func (r *run) checkPortSec(m *expr.Microflow, in bool) int {
	name := getString(m, "outport")
	if in {
		name = getString(m, "inport")
	}
	p := r.dp.ports[name]
	if p == nil {
		return 0
	}
	ps := parsePortSecurity(p)
	if len(ps) == 0 {
		return 0
	}
	ethField := "eth.dst"
	if in {
		ethField = "eth.src"
	}
	eth := getInt(m, ethField)
	etype := getInt(m, "eth.type").Uint64()
	allow := false
	for _, a := range ps {
		if eth.Cmp(a.mac) != 0 {
			continue
		}
		switch {
		case etype == 0x800 && in:
			allow = r.inIP4(m, a)
		case etype == 0x806 && in:
			allow = getInt(m, "arp.sha").Cmp(a.mac) == 0 && (len(a.ip4) == 0 || containsAddr(a.ip4, addrOf(m, "ip4.src"), m, "arp.spa"))
		case etype == 0x86dd && in:
			allow = inIP6(m, a)
		case etype == 0x800:
			allow = outIP4(m, a)
		case etype == 0x86dd:
			allow = outIP6(m, a)
		default:
			allow = true
		}
		break
	}
	if allow {
		return 0
	}
	return 1
}

func containsAddr(list []netip.Addr, _ netip.Addr, m *expr.Microflow, field string) bool {
	got := getInt(m, field)
	for _, a := range list {
		if new(big.Int).SetBytes(a.AsSlice()).Cmp(got) == 0 {
			return true
		}
	}
	return false
}

func (r *run) inIP4(m *expr.Microflow, a psAddr) bool {
	if len(a.ip4) == 0 && len(a.ip6) == 0 {
		return true
	}
	src := addrOf(m, "ip4.src")
	for _, ip := range a.ip4 {
		if ip == src {
			return true
		}
	}
	// DHCP discover/request from 0.0.0.0 to the broadcast address.
	return getInt(m, "ip.proto").Uint64() == 17 && getInt(m, "udp.src").Uint64() == 68 &&
		getInt(m, "udp.dst").Uint64() == 67 && src == netip.IPv4Unspecified() &&
		addrOf(m, "ip4.dst") == netip.AddrFrom4([4]byte{255, 255, 255, 255})
}

func inIP6(m *expr.Microflow, a psAddr) bool {
	if len(a.ip4) == 0 && len(a.ip6) == 0 {
		return true
	}
	src := addrOf(m, "ip6.src")
	passed := false
	for _, ip := range a.ip6 {
		if ip == src {
			passed = true
		}
	}
	if !passed && src != lla(a.mac) {
		return false
	}
	if getInt(m, "ip.proto").Uint64() == 58 {
		zero := new(big.Int)
		switch getInt(m, "icmp6.type").Uint64() {
		case 135:
			if sll := getInt(m, "nd.sll"); sll.Cmp(zero) != 0 && sll.Cmp(a.mac) != 0 {
				return false
			}
		case 136:
			if tll := getInt(m, "nd.tll"); tll.Cmp(zero) != 0 && tll.Cmp(a.mac) != 0 {
				return false
			}
			if len(a.ip6) > 0 {
				target := addrOf(m, "nd.target")
				ok := target == lla(a.mac)
				for _, ip := range a.ip6 {
					ok = ok || ip == target
				}
				if !ok {
					return false
				}
			}
		}
	}
	return true
}

func outIP4(m *expr.Microflow, a psAddr) bool {
	if len(a.ip4) == 0 && len(a.ip6) == 0 {
		return true
	}
	if len(a.ip4) == 0 {
		return false
	}
	dst := addrOf(m, "ip4.dst")
	for _, ip := range a.ip4 {
		if ip == dst {
			return true
		}
	}
	b := dst.As4()
	return dst == netip.AddrFrom4([4]byte{255, 255, 255, 255}) || b[0]&0xf0 == 0xe0
}

func outIP6(m *expr.Microflow, a psAddr) bool {
	if len(a.ip4) == 0 && len(a.ip6) == 0 {
		return true
	}
	if len(a.ip6) == 0 {
		return false
	}
	dst := addrOf(m, "ip6.dst")
	for _, ip := range a.ip6 {
		if ip == dst {
			return true
		}
	}
	return dst == lla(a.mac) || dst.As16()[0] == 0xff
}
