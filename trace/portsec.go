package trace

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/internal/ethaddr"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// modelPortSec adds the port security flows the release's northd writes
// for every switch (build_lswitch_input_port_sec_od,
// build_lswitch_output_port_sec_od and the per-port check_*_port_sec()
// calls; the router-port bit from release.FromRouterPortBit on).
func (d *dpModel) modelPortSec() {
	d.add(lflow.InCheckPortSec, 100, "eth.src[40]", "drop;", "")
	if !nbview.VLANPassthru(d.ls) {
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

// checkPortSec is ovn-trace's execute_check_in_port_sec (in) or
// execute_check_out_port_sec (!in): 1 when the port has port security and
// the packet violates it, else 0 (nbview's rules: PortSecPacket.Allowed).
func (r *run) checkPortSec(m *expr.Microflow, in bool) int {
	name := getString(m, "outport")
	if in {
		name = getString(m, "inport")
	}
	p := r.dp.ports[name]
	if p == nil {
		return 0
	}
	if portSecPacket(m).Allowed(nbview.PortSecurityEntries(p), in) {
		return 0
	}
	return 1
}

// portSecPacket reads what port security checks of the microflow.
func portSecPacket(m *expr.Microflow) nbview.PortSecPacket {
	u := func(f string) uint64 { return getInt(m, f).Uint64() }
	return nbview.PortSecPacket{
		EthSrc: macOf(m, "eth.src"), EthDst: macOf(m, "eth.dst"), EthType: uint16(u("eth.type")), IPProto: uint8(u("ip.proto")),
		IP4Src: ipOf(m, "ip4.src"), IP4Dst: ipOf(m, "ip4.dst"), IP6Src: ipOf(m, "ip6.src"), IP6Dst: ipOf(m, "ip6.dst"),
		UDPSrc: uint16(u("udp.src")), UDPDst: uint16(u("udp.dst")), ARPSha: macOf(m, "arp.sha"), ARPSpa: ipOf(m, "arp.spa"),
		ICMP6Type: uint8(u("icmp6.type")), NDSll: macOf(m, "nd.sll"), NDTll: macOf(m, "nd.tll"), NDTarget: ipOf(m, "nd.target"),
	}
}

func macOf(m *expr.Microflow, field string) ethaddr.Addr {
	var a ethaddr.Addr
	getInt(m, field).FillBytes(a[:])
	return a
}
