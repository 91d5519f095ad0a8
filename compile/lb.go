package compile

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// lbVIP is one parsed load balancer VIP (northd's ovn_lb_vip).
type lbVIP struct {
	ip        netip.Addr
	ipStr     string // normalized address, without brackets
	port      string // "" when the VIP has no port
	nBackends int
}

// parseLBKey parses "IP", "IP:PORT", "[IPv6]:PORT" or "[IPv6]" the way
// OVS's inet_parse_active does for load balancer keys and backends.
func parseLBKey(key string) (netip.Addr, uint16, bool) {
	host, port := key, ""
	if strings.HasPrefix(key, "[") {
		end := strings.IndexByte(key, ']')
		if end < 0 {
			return netip.Addr{}, 0, false
		}
		host, port = key[1:end], strings.TrimPrefix(key[end+1:], ":")
		if key[end+1:] != "" && !strings.HasPrefix(key[end+1:], ":") {
			return netip.Addr{}, 0, false
		}
	} else if strings.Count(key, ":") == 1 {
		i := strings.IndexByte(key, ':')
		host, port = key[:i], key[i+1:]
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.Zone() != "" {
		return netip.Addr{}, 0, false
	}
	var p uint64
	if port != "" {
		p, err = strconv.ParseUint(port, 10, 16)
		if err != nil {
			return netip.Addr{}, 0, false
		}
	}
	return ip.Unmap(), uint16(p), true
}

// lbVIPs returns the VIPs of lb that northd accepts (a VIP with an invalid
// key or any invalid backend is skipped, with a warning in northd's log).
func lbVIPs(lb *nbdb.LoadBalancer) []lbVIP {
	if boolOption(lb.Options["template"], false) {
		return nil // template LBs are instantiated per chassis; not compiled here
	}
	var out []lbVIP
	for _, key := range nbschema.SortedKeys(lb.Vips) {
		ip, port, ok := parseLBKey(key)
		if !ok {
			continue
		}
		v := lbVIP{ip: ip, ipStr: ip.String()}
		if port != 0 {
			v.port = strconv.Itoa(int(port))
		}
		valid := true
		for _, tok := range strings.Split(lb.Vips[key], ",") {
			if tok == "" {
				continue
			}
			bip, bport, ok := parseLBKey(tok)
			if !ok || bip.Is4() != ip.Is4() || (v.port != "") != (bport != 0) {
				valid = false
				break
			}
			v.nBackends++
		}
		if valid {
			out = append(out, v)
		}
	}
	return out
}

func lbProto(lb *nbdb.LoadBalancer) string {
	if lb.Protocol != nil {
		switch *lb.Protocol {
		case "udp", "sctp":
			return *lb.Protocol
		}
	}
	return "tcp"
}

// buildLBPreStateful adds, for each VIP of each load balancer on the
// switch, the priority-120 ls_in_pre_stateful flow that stores the original
// destination and sends the packet to ct_lb_mark (build_lb_rules_pre_stateful),
// and the priority-130 ls_in_pre_lb empty-backend event flow when enabled.
func (g *global) buildLBPreStateful(od *datapath, b *builder) {
	for _, lb := range g.switchLBs(od.ls, false) {
		proto := lbProto(lb)
		for _, v := range lbVIPs(lb) {
			ipMatch, reg := "ip4", g.r.regs.lbIPv4
			if !v.ip.Is4() {
				ipMatch, reg = "ip6", g.r.regs.lbIPv6
			}
			if (g.controllerEvent || boolOption(lb.Options["event"], false)) &&
				v.nBackends == 0 && !boolOption(lb.Options["reject"], false) {
				m := ipMatch + ".dst == " + v.ipStr + " && " + proto
				vip := v.ipStr
				if v.port != "" {
					m += " && " + proto + ".dst == " + v.port
					if v.ip.Is4() {
						vip = v.ipStr + ":" + v.port
					} else {
						vip = "[" + v.ipStr + "]:" + v.port
					}
				}
				a := "trigger_event(event = \"empty_lb_backends\", vip = \"" + vip + "\", protocol = \"" + proto +
					"\", load_balancer = \"" + lb.UUID + "\");"
				b.addFrom(lflow.InPreLB, 130, m, a, lb.UUID)
			}
			a := reg + " = " + v.ipStr + "; "
			m := regbitConntrackNAT + " == 1 && " + ipMatch + ".dst == " + v.ipStr
			if v.port != "" {
				a += g.r.regs.lbPort + " = " + v.port + "; "
				m += " && " + proto + ".dst == " + v.port
			}
			a += "ct_lb_mark;"
			b.addFrom(lflow.InPreStateful, 120, m, a, lb.UUID)
		}
	}
}
