package trace

import (
	"fmt"
	"math/big"
	"net/netip"
	"strings"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// This file holds the action interpreter (ovn-trace trace_actions): the
// register, next, conntrack, load-balancer, reject and output actions.

// actions executes acts (ovn-trace trace_actions); it reports whether the
// packet was passed on (next, output, a recirculation, a generated packet).
func (r *run) actions(acts []action, m *expr.Microflow, p lflow.Pipeline, table int, super *Node, fi *FlowInfo, st lflow.Stage) bool {
	if len(acts) == 0 {
		super.add(NodeAction, "drop;")
		return false
	}
	passed := false
	for _, a := range acts {
		text := a.text
		if a.kind == aNext && a.hasPipeline && a.pipeline == p && a.table >= 0 {
			// ovn-trace prints a jump within the pipeline as next(N).
			text = fmt.Sprintf("next(%d);", a.table)
		}
		super.add(NodeAction, text)
		switch a.kind {
		case aNoop, aDrop:
		case aNext:
			np, nt := p, table+1
			if a.table >= 0 {
				nt = a.table
			}
			sup := super
			if a.hasPipeline && a.pipeline != p {
				if !r.recirculate(super) {
					return true
				}
				np = a.pipeline
				port := getString(m, "inport")
				dir := "inport"
				if np == lflow.Egress {
					port, dir = getString(m, "outport"), "outport"
				}
				sup = super.add(NodePipeline, fmt.Sprintf("%s(dp=%q, %s=%q)", np, friendlyDP(r.dp.ls), dir, r.fport(port)))
			}
			r.trace(m, np, nt, sup)
			passed = true
		case aOutput:
			r.output(m, p, super)
			passed = true
		case aLoad:
			if strings.HasPrefix(a.rhs, "get_fdb(") {
				// No FDB is modelled: no MAC was learnt.
				m.Set(a.lhs, "none")
				continue
			}
			v, err := value(m, a.rhs)
			if err == nil {
				err = m.Set(a.lhs, v)
			}
			if err != nil {
				super.add(NodeError, fmt.Sprintf("*** %s: %v", a.text, err))
				continue
			}
			if !isRegister(a.lhs) {
				text := a.lhs + " = " + a.rhs
				if n, ok := v.(*big.Int); ok {
					// a move: ovn-trace prints the value moved
					text = a.lhs + " = " + movedValue(a.rhs, n)
				}
				super.add(NodeModify, text)
			}
		case aExchange:
			va, err1 := m.Get(a.lhs)
			vb, err2 := m.Get(a.rhs)
			if err1 != nil || err2 != nil {
				super.add(NodeError, fmt.Sprintf("*** %s: cannot exchange", a.text))
				continue
			}
			if !isRegister(a.lhs) {
				// ovn-trace's summarize_move, once per direction
				for _, mv := range [][2]string{{a.lhs, a.rhs}, {a.rhs, a.lhs}} {
					if n, ok := map[string]any{a.lhs: va, a.rhs: vb}[mv[1]].(*big.Int); ok {
						super.add(NodeModify, mv[0]+" = "+movedValue(mv[1], n))
					}
				}
			}
			m.Set(a.lhs, vb)
			m.Set(a.rhs, va)
		case aHairpin:
			res, ok := r.chkLBHairpin(m, a.rhs == "chk_lb_hairpin_reply()")
			if !ok {
				r.stopNotTraced(super, r.dpName()+" hairpin check: the packet's original destination is the address of load balancer VIPs with different ports, and ovn-trace takes the first in SB Load_Balancer order ("+fi.Stage+")")
				return true
			}
			m.Set(a.lhs, res)
			super.add(NodeModify, fmt.Sprintf("%s = %d", a.lhs, res))
			if res == 1 {
				// ls_in_nat_hairpin (ct_snat_to_vip, ct_snat) and
				// ls_in_hairpin are not modelled.
				r.stopNotTraced(super, r.dpName()+" hairpinned load-balanced packet ("+fi.Stage+")")
				return true
			}
		case aDNSLookup:
			m.Set(a.lhs, 0)
			super.add(NodeError, "*** dns_lookup action not implemented")
		case aPutOpts:
			// ovn-trace execute_put_dhcp_opts (the request is taken for
			// a DHCPDISCOVER or DHCPREQUEST) and execute_put_nd_ra_opts:
			// the options are put, the packet is not changed, the
			// result is 1
			if a.name == "put_nd_ra_opts" && !r.t.snap.Release.Has(release.OvnTraceNDRAOpts) {
				r.stopNotTraced(super, r.dpName()+" put_nd_ra_opts(): the ovn-trace of OVN "+r.t.snap.Release.Name()+" aborts on it ("+fi.Stage+")")
				return true
			}
			opts, ok := formatPutOpts(a.args, a.name)
			if !ok {
				super.add(NodeError, fmt.Sprintf("*** %s: cannot read the options", a.text))
				continue
			}
			if a.name != "put_nd_ra_opts" {
				super.add(NodeError, "/* We assume that this packet is DHCPDISCOVER or DHCPREQUEST. */")
			}
			super.add(NodeModify, a.name+"("+opts+")")
			if !isRegister(a.lhs) {
				super.add(NodeModify, a.lhs+" = 1")
			}
			m.Set(a.lhs, 1)
		case aCTOrig:
			r.ctOrig(a, m, super)
		case aPortSec:
			m.Set(a.lhs, r.checkPortSec(m, a.rhs == "check_in_port_sec()"))
		case aCTNext:
			r.ops = append(r.ops, "ct_next")
			comment := ""
			state := r.nextCT(&comment)
			node := super.add(NodeTransformation, fmt.Sprintf("ct_next(ct_state=%s%s)", state, comment))
			if !r.recirculate(node) {
				return true
			}
			c := r.clone(m)
			c.Set("ct_state", uint64(state))
			r.setTuple(c, m, false)
			r.trace(c, p, table+1, node)
			passed = true
		case aCTLB:
			r.ops = append(r.ops, a.name)
			r.ctLB(a, m, p, table, super)
			passed = true
		case aCTCommit:
			r.ops = append(r.ops, "ct_commit")
		case aCTCommitNAT:
			r.ops = append(r.ops, "ct_commit_nat")
			c := r.clone(m)
			r.setTuple(c, m, false)
			text := "ct_commit_nat /* assuming no un-nat entry, so no change */"
			if st := CTState(getInt(c, "ct_state").Uint64()); st&CTTrk == 0 {
				c.Set("ct_state", uint64(st|r.nextCT(&text)))
			}
			node := super.add(NodeTransformation, text)
			if !r.recirculate(node) {
				return true
			}
			r.trace(c, p, table+1, node)
			passed = true
		case aCTClear:
			m.Set("ct_state", 0)
			m.Set("ct_mark", 0)
			m.Set("ct_label", 0)
		case aReject:
			if r.reject(a, m, p, table, super, fi, st) {
				passed = true
			}
		case aLog:
			args := logArgs(a.args)
			name := args["name"]
			if name == "" {
				name = "<unnamed>"
			}
			dir := "IN"
			if p == lflow.Egress {
				dir = "OUT"
			}
			sev := args["severity"]
			if sev == "" {
				sev = "info"
			}
			verdict := args["verdict"]
			if verdict == "" {
				verdict = "allow"
			}
			super.add(NodeTransformation, fmt.Sprintf("LOG: ACL name=%s, direction=%s, verdict=%s, severity=%s, packet=\"%s\"",
				name, dir, verdict, sev, strings.ReplaceAll(m.String(), `"`, "'")))
		case aSample:
			r.sample(a, m, p, fi, st)
		case aDecTTL:
			decTTL(m, super)
		case aSelect:
			r.selectMember(a, m, p, table, super)
			passed = true
		case aGenerate:
			r.generate(a, m, p, table, super, fi)
			passed = true
		case aClone:
			// execute_clone: the nested actions on a copy of the
			// packet, then the rest on the packet as it was
			r.actions(a.nested, r.clone(m), p, table, super.add(NodeTransformation, "clone"), fi, st)
			passed = true
		case aLookupNeighbor:
			r.lookupMACBind(a, m, super)
		case aGetNeighbor:
			if !r.getMACBind(a, m, super, fi.Stage) {
				return true
			}
		case aNFLookupOrigInport:
			// ovn-trace 26.09 has no learnt inports: a miss.
			m.Set(a.lhs, 0)
			super.add(NodeAction, "/* Assumed nf_lookup_orig_inport miss. */")
		case aNotModelled:
			r.stopNotTraced(super, r.dpName()+" "+a.name+" ("+fi.Stage+")")
			return true
		case aUnsupported:
			super.add(NodeError, "*** aclc trace does not execute this action: "+a.text)
		}
	}
	return passed
}

// ctOrig executes "R = ct_proto();" and the like. ovn-trace 25.09+
// simulates ct_proto() and ct_tp_dst() with the packet's own protocol and
// destination port (execute_ct_orig_proto, execute_ct_orig_tp_dst) and
// prints the load; ct_nw_dst() and ct_ip6_dst(), and every one of them
// before 25.09, do nothing.
func (r *run) ctOrig(a action, m *expr.Microflow, super *Node) {
	if !r.t.snap.Release.Has(release.LBCtExtract) {
		return
	}
	var v uint64
	switch a.rhs {
	case "ct_proto()":
		v = getInt(m, "ip.proto").Uint64()
	case "ct_tp_dst()":
		v = tpDst(m)
	default:
		return
	}
	if err := m.Set(a.lhs, v); err != nil {
		super.add(NodeError, fmt.Sprintf("*** %s: %v", a.text, err))
		return
	}
	super.add(NodeModify, fmt.Sprintf("%s = %d", a.lhs, v))
}

// tpDst is OVS's flow tp_dst: the TCP, UDP or SCTP destination port, the
// ICMP code, else 0.
func tpDst(m *expr.Microflow) uint64 {
	switch getInt(m, "ip.proto").Uint64() {
	case 6:
		return getInt(m, "tcp.dst").Uint64()
	case 17:
		return getInt(m, "udp.dst").Uint64()
	case 132:
		return getInt(m, "sctp.dst").Uint64()
	case 1:
		return getInt(m, "icmp4.code").Uint64()
	case 58:
		return getInt(m, "icmp6.code").Uint64()
	}
	return 0
}

// ctLB is ovn-trace's execute_ct_lb.
func (r *run) ctLB(a action, m *expr.Microflow, p lflow.Pipeline, table int, super *Node) {
	c := r.clone(m)
	comment := ""
	family := 0
	switch getInt(m, "eth.type").Uint64() {
	case 0x800:
		family = 4
	case 0x86dd:
		family = 6
	}
	if family != 0 {
		var backends []string
		if args, _, _ := strings.Cut(a.args, ";"); strings.HasPrefix(strings.TrimSpace(args), "backends=") {
			for _, b := range strings.Split(strings.TrimPrefix(strings.TrimSpace(args), "backends="), ",") {
				if b = strings.TrimSpace(b); b != "" {
					backends = append(backends, b)
				}
			}
		}
		var (
			dstIP   netip.Addr
			dstPort uint16
			have    bool
			byLBDst bool
		)
		if len(backends) > 0 {
			for _, b := range backends {
				ip, port, ok := nbview.ParseLBKey(b)
				if !ok || (family == 4) != ip.Is4() {
					continue
				}
				if r.lbDst.IsValid() && r.lbDst.Is4() == ip.Is4() && r.lbDst == ip {
					r.lbDst = netip.Addr{} // consumed, as in ovn-trace
					dstIP, dstPort, have, byLBDst = ip, port, true, true
					break
				}
				if !have {
					// ovn-trace picks a random backend; aclc takes the first.
					dstIP, dstPort, have = ip, port, true
				}
			}
			if !have {
				super.add(NodeError, "*** no load balancing destination (use --lb-dst)")
			} else if len(backends) > 1 && !byLBDst {
				r.warnf("%s(%s): ovn-trace picks a backend at random; aclc took %s (choose one with --lb-dst)", a.name, a.args, dstIP)
			}
		} else if r.lbDst.IsValid() && (family == 4) == r.lbDst.Is4() {
			dstIP, dstPort, have = r.lbDst, r.lbPort, true
		}
		st := CTState(getInt(c, "ct_state").Uint64())
		if have {
			if family == 4 {
				c.Set("ip4.dst", dstIP.String())
			} else {
				c.Set("ip6.dst", dstIP.String())
			}
			if dstPort != 0 {
				switch getInt(c, "ip.proto").Uint64() {
				case 6:
					c.Set("tcp.dst", int(dstPort))
				case 17:
					c.Set("udp.dst", int(dstPort))
				case 132:
					c.Set("sctp.dst", int(dstPort))
				}
			}
			st |= CTDNAT
		}
		st |= r.nextCT(&comment)
		c.Set("ct_state", uint64(st))
		r.setTuple(c, m, have)
	}
	node := super.add(NodeTransformation, a.name+comment)
	if !r.recirculate(node) {
		return
	}
	r.trace(c, p, table+1, node)
}

// reject is ovn-trace's execute_reject: a TCP RST, SCTP ABORT or ICMP
// unreachable is generated, addressed back to the sender, and the nested
// actions run on it.
func (r *run) reject(a action, m *expr.Microflow, p lflow.Pipeline, table int, super *Node, fi *FlowInfo, st lflow.Stage) bool {
	proto := getInt(m, "ip.proto").Uint64()
	ip6 := getInt(m, "eth.type").Uint64() == 0x86dd
	name := "icmp4"
	switch {
	case proto == 6:
		name = "tcp_reset"
	case proto == 132:
		name = "sctp_abort"
	case ip6:
		name = "icmp6"
	}
	// ovn-trace's guards against a reject of its own reject packet: they
	// look at the OVS tp_src / tcp_flags of the packet being rejected.
	switch {
	case name == "icmp4" && proto == 1 && getInt(m, "icmp4.type").Uint64() == 3,
		name == "icmp6" && proto == 58 && getInt(m, "icmp6.type").Uint64() == 1,
		(name == "tcp_reset" || name == "sctp_abort") && getInt(m, "tcp.flags").Uint64() == 0x004:
		return false
	}
	c := r.clone(m)
	swap := func(x, y string) {
		vx, _ := c.Get(x)
		vy, _ := c.Get(y)
		c.Set(x, vy)
		c.Set(y, vx)
	}
	swap("eth.src", "eth.dst")
	if ip6 {
		swap("ip6.src", "ip6.dst")
	} else {
		swap("ip4.src", "ip4.dst")
	}
	c.Set("ip.ttl", 255)
	switch name {
	case "tcp_reset":
		c.Set("tcp.flags", 0x004)
	case "sctp_abort":
		// ovn-trace 23.03 sets the protocol of its SCTP ABORT to TCP,
		// keeping the ports.
		src, dst := getInt(m, "sctp.src"), getInt(m, "sctp.dst")
		c.Set("ip.proto", 6)
		c.Set("tcp.src", src)
		c.Set("tcp.dst", dst)
	case "icmp4", "icmp6":
		setICMPUnreach(c, name == "icmp6")
	}
	node := super.add(NodeTransformation, name)
	if prev := r.decided[r.key(p)]; !isActionStage(st) || prev == nil || prev.ACL == nil {
		// (an action stage's reject carries out its eval ACL's verdict)
		r.decided[r.key(p)] = fi
	}
	// The generated packet's own path does not change what decided the
	// original packet's fate.
	r.frozen++
	r.actions(a.nested, c, p, table, node, fi, st)
	r.frozen--
	return true
}

// output is ovn-trace's execute_output.
func (r *run) output(m *expr.Microflow, p lflow.Pipeline, super *Node) {
	if r.rt != nil {
		r.routerOutput(m, p, super)
		return
	}
	out := getString(m, "outport")
	if out == "" {
		super.add(NodeError, "*** output to null logical port")
		return
	}
	if (out == "_MC_flood" || out == "_MC_flood_l2") && p == lflow.Ingress {
		r.flood(m, super, out, r.dp.floodPorts(out == "_MC_flood_l2"))
		return
	}
	if out == "_MC_unknown" && p == lflow.Ingress {
		r.flood(m, super, out, r.dp.unknownPorts())
		return
	}
	if strings.HasPrefix(out, "_MC_") {
		super.add(NodeError, fmt.Sprintf("*** aclc trace does not follow multicast group %q; give outport == \"PORT\" or --outport", out))
		return
	}
	port := r.dp.ports[out]
	if port == nil {
		super.add(NodeError, fmt.Sprintf("*** unknown port or multicast group %q", out))
		return
	}
	if p == lflow.Egress {
		if port.Type == "switch" {
			// 25.03+: a port of type "switch" hands the packet to its peer
			// port's switch, which ovn-trace follows; aclc does not.
			peer := ""
			if port.Peer != nil {
				peer = *port.Peer
			}
			r.stopNotTraced(super, fmt.Sprintf("%s port %s is of type switch (peer %q): aclc does not follow a packet into the peer switch (%s)",
				r.dpName(), out, peer, r.dp.layout.Stage(lflow.OutApplyPortSec).Name()))
			return
		}
		if port.Type == "router" {
			if lrp := r.t.view.RouterPortPeer(port); lrp != nil {
				// ovn-trace continues into the router's ingress pipeline.
				super.add(NodeOutput, fmt.Sprintf("/* output to %q, type \"patch\" */", r.fport(out)))
				r.enterRouter(m, lrp.Name, super)
				return
			}
		}
		super.add(NodeOutput, fmt.Sprintf("/* output to %q, type %q */", r.fport(out), port.Type))
		super.add(NodeModify, fmt.Sprintf("output(%q)", r.fport(out)))
		r.outputs = append(r.outputs, out)
		return
	}
	in := getString(m, "inport")
	if out == in && getInt(m, "flags.loopback").Sign() == 0 {
		super.add(NodeOutput, "/* omitting output because inport == outport && !flags.loopback */")
		return
	}
	e := r.clone(m)
	for _, reg := range []string{"xxreg0", "xxreg1", "xreg4", "flags"} {
		e.Set(reg, 0)
	}
	node := super.add(NodePipeline, fmt.Sprintf("egress(dp=%q, inport=%q, outport=%q)", friendlyDP(r.dp.ls), r.fport(in), r.fport(out)))
	if !r.recirculate(node) {
		return
	}
	r.trace(e, lflow.Egress, 0, node)
}

// flood is execute_output for a multicast group (_MC_flood: every enabled
// port of the switch; _MC_unknown: those with "unknown" addresses), in
// name order: one egress pipeline per port, all on the same copy of the
// packet, as in ovn-trace.
func (r *run) flood(m *expr.Microflow, super *Node, group string, ports []string) {
	in := getString(m, "inport")
	loopback := getInt(m, "flags.loopback").Sign() != 0
	mc := super.add(NodePipeline, fmt.Sprintf("multicast(dp=%q, mcgroup=%q)", friendlyDP(r.dp.ls), group))
	e := r.clone(m)
	for _, reg := range []string{"xxreg0", "xxreg1", "xreg4", "flags"} {
		e.Set(reg, 0)
	}
	for _, name := range ports {
		node := mc.add(NodePipeline, fmt.Sprintf("egress(dp=%q, inport=%q, outport=%q)", friendlyDP(r.dp.ls), r.fport(in), r.fport(name)))
		if name == in && !loopback {
			node.add(NodeOutput, "/* omitting output because inport == outport && !flags.loopback */")
			continue
		}
		if cr, ok := r.t.view.SwitchChassisRedirect(r.dp.ports[name]); ok {
			// northd's flood group holds the chassis-redirect port in
			// its place: the copy goes to the gateway chassis
			r.stopNotTraced(node, fmt.Sprintf("%s flood to router port %s: OVN floods to its chassis-redirect port %s (the gateway chassis) instead, which is not modelled (%s)",
				r.dpName(), name, cr, r.dp.layout.Stage(lflow.InL2Lkup).Name()))
			return
		}
		if !r.recirculate(node) {
			return
		}
		e.Set("outport", name)
		r.trace(e, lflow.Egress, 0, node)
	}
}

// formatField prints v the way OVS prints a value of field: MACs, IPv4 and
// IPv6 addresses in their notation, other values in decimal.
// movedValue is how ovn-trace's summarize_move prints the value a move
// takes from src: as src's field formats it when src is a whole field,
// in hexadecimal (ds_put_hex) when it is a register or a subfield.
func movedValue(src string, v *big.Int) string {
	if strings.Contains(src, "[") || isRegister(src) {
		if v.Sign() == 0 {
			return "0"
		}
		return "0x" + v.Text(16)
	}
	return formatField(src, v)
}

func formatField(field string, v *big.Int) string {
	switch field {
	case "eth.src", "eth.dst", "arp.sha", "arp.tha", "nd.sll", "nd.tll":
		var b [6]byte
		v.FillBytes(b[:])
		return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5])
	case "arp.spa", "arp.tpa", "ip4.src", "ip4.dst":
		var b [4]byte
		v.FillBytes(b[:])
		return netip.AddrFrom4(b).String()
	case "ip6.src", "ip6.dst", "nd.target":
		var b [16]byte
		v.FillBytes(b[:])
		return netip.AddrFrom16(b).String()
	}
	return v.String()
}

// sample records the sampling point of a sample() action: ovn-trace does
// nothing with it (OVNACT_SAMPLE), so it leaves no trace in the output;
// aclc names it in --summary, --detailed and JSON.
func (r *run) sample(a action, m *expr.Microflow, p lflow.Pipeline, fi *FlowInfo, st lflow.Stage) {
	if r.frozen > 0 {
		return
	}
	k := r.key(p)
	s := Sample{Datapath: k.dp, Pipeline: k.p.String(), Stage: st.Name(), ACL: fi.ACL}
	for key, v := range logArgs(a.args) {
		if n, err := m.Get(v); err == nil {
			if b, ok := n.(*big.Int); ok {
				v = b.String() // obs_point=reg3: the register's value
			}
		}
		if key == "obs_point" && strings.HasPrefix(v, "ct_label.") {
			s.ACL = nil // the point of the ACL that committed the connection
		}
		switch key {
		case "collector_set":
			s.CollectorSet = v
		case "obs_domain":
			s.ObsDomain = v
		case "obs_point":
			s.ObsPoint = v
		case "probability":
			s.Probability = v
		}
	}
	r.samples = append(r.samples, s)
}
