package nbview

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// VIP is one load balancer VIP that northd accepts (lib/lb.c's
// ovn_lb_vip).
type VIP struct {
	Key  string     // the Load_Balancer vips key as written
	IP   netip.Addr // the VIP address
	Port uint16     // 0 when the VIP has no port
	// Backends are the VIP's backends, in the order written.
	Backends []Backend
}

// Backend is one backend of a VIP.
type Backend struct {
	IP   netip.Addr
	Port uint16 // 0 when the VIP has no port
}

// String formats the backend as northd writes it in ct_lb_mark:
// "10.0.0.1:80", "[fd00::1]:80", "10.0.0.1".
func (b Backend) String() string {
	s := b.IP.String()
	if !b.IP.Is4() {
		s = "[" + s + "]"
	}
	if b.Port != 0 {
		s += ":" + strconv.Itoa(int(b.Port))
	}
	return s
}

// PortString is the VIP's port in decimal, "" when it has none.
func (v VIP) PortString() string {
	if v.Port == 0 {
		return ""
	}
	return strconv.Itoa(int(v.Port))
}

// IsTemplate reports whether lb is a template load balancer
// (options:template=true), which northd instantiates per chassis.
func IsTemplate(lb *nbdb.LoadBalancer) bool { return lb.Options["template"] == "true" }

// LBProtocol returns lb's protocol as northd uses it: tcp unless udp or
// sctp.
func LBProtocol(lb *nbdb.LoadBalancer) string {
	if lb.Protocol != nil {
		switch *lb.Protocol {
		case "udp", "sctp":
			return *lb.Protocol
		}
	}
	return "tcp"
}

// VIPs returns the VIPs of lb that northd accepts, in key order: a VIP
// whose key or any backend does not parse, or whose backends differ from
// it in family or in having a port, is skipped (northd logs a warning).
// A template load balancer has none here.
func VIPs(lb *nbdb.LoadBalancer) []VIP {
	if IsTemplate(lb) {
		return nil
	}
	var out []VIP
	for _, key := range nbschema.SortedKeys(lb.Vips) {
		ip, port, ok := ParseLBKey(key)
		if !ok {
			continue
		}
		v := VIP{Key: key, IP: ip, Port: port}
		valid := true
		// strtok_r(value, ","): empty tokens are skipped.
		for _, tok := range strings.Split(lb.Vips[key], ",") {
			if tok == "" {
				continue
			}
			bip, bport, ok := ParseLBKey(tok)
			if !ok || bip.Is4() != ip.Is4() || (port != 0) != (bport != 0) {
				valid = false
				break
			}
			v.Backends = append(v.Backends, Backend{IP: bip, Port: bport})
		}
		if valid {
			out = append(out, v)
		}
	}
	return out
}

// ParseLBKey parses "IP", "IP:PORT", "[IPv6]:PORT" or "[IPv6]" the way
// OVS's inet_parse_active does for load balancer keys and backends (white
// space is not skipped).
func ParseLBKey(key string) (netip.Addr, uint16, bool) {
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
