package lint

import (
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// This file holds the allow-stateless rules: replies that no rule lets
// back, and stateless traffic that meets a load balancer VIP.

// swapNames maps each field to its counterpart in a reply.
var swapNames = map[string]string{
	"inport": "outport", "outport": "inport",
	"eth.src": "eth.dst", "eth.dst": "eth.src",
	"ip4.src": "ip4.dst", "ip4.dst": "ip4.src",
	"ip6.src": "ip6.dst", "ip6.dst": "ip6.src",
	"tcp.src": "tcp.dst", "tcp.dst": "tcp.src",
	"udp.src": "udp.dst", "udp.dst": "udp.src",
	"sctp.src": "sctp.dst", "sctp.dst": "sctp.src",
}

// dropNames lists fields a reply does not share with its request
// (ICMP echo request vs reply, TCP flags, conntrack state).
var dropNames = map[string]bool{
	"icmp4.type": true, "icmp4.code": true, "icmp6.type": true, "icmp6.code": true,
	"tcp.flags": true, "ct_state": true, "ct_mark": true, "ct_label": true,
	"xxreg0": true, "xxreg1": true, "xreg4": true, "flags": true,
}

// replyFields are swapNames and dropNames by field number, built on first
// use.
var replyFields = sync.OnceValues(func() (swap map[fieldID]fieldID, drop map[fieldID]bool) {
	sw, dr := map[fieldID]fieldID{}, map[fieldID]bool{}
	for a, b := range swapNames {
		sw[idOf(a)] = idOf(b)
	}
	for a := range dropNames {
		dr[idOf(a)] = true
	}
	return sw, dr
})

// replyCube is the reply of the traffic c describes: sources and
// destinations swapped, request-only constraints dropped (an
// approximation from above).
func replyCube(c cube) cube { return appendReply(make(cube, 0, len(c)), c) }

// appendReply appends replyCube(c)'s constraints to out (which must have
// room for len(c) more) and returns them.
func appendReply(out cube, c cube) cube {
	swapFields, dropInReply := replyFields()
	for _, f := range c {
		if dropInReply[f.id] {
			continue
		}
		if s, ok := swapFields[f.id]; ok {
			f.id = s
		}
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b fc) int { return int(a.id) - int(b.id) })
	return out
}

// replySet is the replies of the traffic s describes, from above, in ar
// when not nil (the reply of a switch's own ACL lives as long as the
// switch).
func replySet(ar *arena, s *set) *set {
	reply := &set{exact: false}
	if len(s.over) > 0 { // one block for the cubes, one for their constraints
		n := constraints(s.over)
		slab, over, ok := ar.carve(n, len(s.over))
		if !ok {
			slab, over = make([]fc, n), make([]cube, len(s.over))
		}
		reply.over = over
		for i, c := range s.over {
			reply.over[i] = appendReply(slab[:0:len(c)], c)
			slab = slab[len(c):]
		}
	}
	return reply // under stays nil: never claim an overlap from the reply alone
}

// replyOf returns replySet of an instance's set on the switch, once per
// shared instance (the same on every switch).
func (l *linter) replyOf(v *swView, in *inst) *set {
	if !in.shared {
		return replySet(&v.arena, l.setOf(v, in))
	}
	if r := in.sh.reply.Load(); r != nil {
		return r
	}
	r := replySet(nil, l.setOf(v, in))
	in.sh.reply.Store(r)
	return r
}

// noReply is the stateless-no-reply heuristic: the replies of an
// allow-stateless ACL's traffic (its match with sources and destinations
// swapped, seen in the other direction) are not in conntrack, so they need
// an ACL of their own. It fires when no allowing ACL of the other
// direction can match any reply while a drop/reject ACL of that direction,
// or the default_acl_drop default, drops them. allowed reports that an
// allowing ACL of layers can match a reply.
func (l *linter) noReply(v *swView, st stage, in *inst, layers func(stage) []*layer) (f Finding, found, allowed bool) {
	s := l.setOf(v, in)
	if len(s.over) == 0 {
		return Finding{}, false, false
	}
	reply := l.replyOf(v, in)
	var deniers []*inst
	for _, ost := range opposite(st) {
		for _, ly := range layers(ost) {
			for _, rc := range reply.over {
				ly.idx.candidates(rc, 0, len(ly.list), func(_ int, o *inst) bool {
					so := l.setOf(v, o)
					if !anyIntersect([]cube{rc}, so.over) {
						return true
					}
					if o.a.verdict.Allows() {
						allowed = true
						return false
					}
					if o.a.verdict != vOther && !slices.Contains(deniers, o) && (so.exact || anyIntersect(reply.over, so.under)) && !l.passedFirst(v, o, rc, layers(ost)) {
						deniers = append(deniers, o)
					}
					return true
				})
				if allowed {
					return Finding{}, false, true
				}
			}
		}
	}
	slices.SortStableFunc(deniers, func(x, y *inst) int { return y.a.acl.Priority - x.a.acl.Priority })
	other := "to-lport"
	if st == outACL {
		other = "from-lport"
	}
	f = Finding{Rule: RuleStatelessNoReply, Severity: Warning, ACLs: []ACLRef{in.a.ref},
		Fix: fmt.Sprintf("add a %s allow-stateless ACL for the replies (sources and destinations swapped, e.g. tcp.src instead of tcp.dst), or use allow-related", other)}
	switch {
	case len(deniers) > 0:
		for _, d := range deniers {
			f.ACLs = append(f.ACLs, d.a.ref)
		}
		f.Message = fmt.Sprintf("stateless traffic skips conntrack, so its replies are new to the %s ACLs; no %s ACL allows them and the drop/reject ACL(s) listed with it drop them",
			other, other)
	case l.defaultACLDrop:
		f.Message = fmt.Sprintf("stateless traffic skips conntrack, so its replies are new to the %s ACLs; no %s ACL allows them and default_acl_drop=true drops them",
			other, other)
	default:
		return Finding{}, false, false
	}
	return f, true, false
}

// vipSets returns, for each load balancer VIP of the switch (but those of
// load balancers in the stateless-ACL-with-LB mode), the traffic
// to the VIP and the traffic back from its backends, as cube sets.
func (l *linter) vipSets(v *swView) []vipTraffic {
	var out []vipTraffic
	cv := &converter{d: l.dialect, as: l.as}
	for _, lb := range v.lbs {
		if compile.LBInStatelessMode(l.rel, l.s, v.ls, lb.UUID) {
			continue // load balanced in the stateless-ACL-with-LB mode
		}
		proto := "tcp"
		if lb.Protocol != nil && *lb.Protocol != "" {
			proto = *lb.Protocol
		}
		for _, vip := range slices.Sorted(maps.Keys(lb.Vips)) {
			m, ok := endpointMatch(vip, proto, "dst")
			if !ok {
				continue
			}
			e, err := l.dialect.Parse(m, nil)
			if err != nil {
				continue
			}
			t := vipTraffic{lb: lb.Name, vip: vip, toMatch: m, to: cv.toSet(e.Root)}
			for _, b := range strings.Split(lb.Vips[vip], ",") {
				b = strings.TrimSpace(b)
				if b == "" {
					continue
				}
				if m, ok := endpointMatch(b, proto, "src"); ok {
					if e, err := l.dialect.Parse(m, nil); err == nil {
						t.back = append(t.back, cv.toSet(e.Root))
						t.backends = append(t.backends, b)
					}
				}
			}
			out = append(out, t)
		}
	}
	return out
}

type vipTraffic struct {
	lb, vip  string
	toMatch  string
	to       *set
	back     []*set
	backends []string
}

// endpointMatch turns "IP", "IP:PORT" or "[IP6]:PORT" into a match on the
// given side ("src" or "dst").
func endpointMatch(ep, proto, side string) (string, bool) {
	host, port, err := net.SplitHostPort(ep)
	if err != nil {
		host, port = strings.Trim(ep, "[]"), ""
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return "", false
	}
	fam := "ip4"
	if ip.Is6() {
		fam = "ip6"
	}
	m := fmt.Sprintf("%s.%s == %s", fam, side, ip)
	if port != "" {
		m += fmt.Sprintf(" && %s.%s == %s", proto, side, port)
	}
	return m, true
}

// lbVIP reports a from-lport allow-stateless ACL that can match traffic to
// a VIP of a load balancer on the switch, or traffic coming back from one
// of its backends: the pre-ACL flow sets reg0[16], pre-LB then skips
// ct_lb_mark, so the VIP is never DNATed (or the reply never un-DNATed).
func (l *linter) lbVIP(v *swView, in *inst) []Finding {
	if !v.lbVIP {
		// In the stateless-ACL-with-LB mode (25.09+) stateless traffic
		// to the VIP of a load balancer in the mode still goes to
		// ct_lb_mark, and back through ct_nat: vipSets leaves those out.
		return nil
	}
	s := l.setOf(v, in)
	var out []Finding
	for _, t := range l.vipSetsCached(v) {
		switch intersects(s, t.to) {
		case yes:
			out = append(out, Finding{Rule: RuleStatelessLBVIP, Severity: Warning, ACLs: []ACLRef{in.a.ref},
				Message: fmt.Sprintf("this allow-stateless ACL can match traffic to VIP %s of load balancer %s; such traffic skips load balancing (reg0[16] makes ls_in_pre_lb skip ct_lb_mark; from OVN 25.09 LS other_config:enable-stateless-acl-with-lb=true load balances it), so it reaches the VIP address itself and is never DNATed to a backend", t.vip, t.lb),
				Fix:     fmt.Sprintf("exclude the VIP from the stateless ACL (e.g. add && !(%s)), or use allow-related for it", t.toMatch) + l.lbModeFix()})
			continue
		case maybe:
			out = append(out, Finding{Rule: RuleStatelessLBVIP, Severity: Info, ACLs: []ACLRef{in.a.ref},
				Message: fmt.Sprintf("undecidable: this allow-stateless ACL may match traffic to VIP %s of load balancer %s, which would then skip load balancing", t.vip, t.lb),
				Fix:     "check whether the ACL can match the VIP; exclude it if so"})
			continue
		}
		for i, b := range t.back {
			if intersects(s, b) == yes {
				out = append(out, Finding{Rule: RuleStatelessLBVIP, Severity: Warning, ACLs: []ACLRef{in.a.ref},
					Message: fmt.Sprintf("this allow-stateless ACL can match replies from backend %s of VIP %s (load balancer %s); they skip conntrack (reg0[16]), so they are never un-DNATed back to the VIP", t.backends[i], t.vip, t.lb),
					Fix:     "exclude the backend replies from the stateless ACL, or use allow-related for them" + l.lbModeFix()})
				break
			}
		}
	}
	return out
}

func (l *linter) vipSetsCached(v *swView) []vipTraffic {
	if v.vips == nil {
		v.vips = l.vipSets(v)
		if v.vips == nil {
			v.vips = []vipTraffic{}
		}
	}
	return v.vips
}

// passedFirst reports whether a pass ACL of the layers at o's tier, at
// o's priority or above, can match the replies rc: then those replies may
// never meet o (the pass hands them to the next tier, and, as no ACL of
// the direction allows them, to the default), so o does not count as
// dropping them.
func (l *linter) passedFirst(v *swView, o *inst, rc cube, layers []*layer) bool {
	found := false
	for _, ly := range layers {
		if !ly.passes {
			continue
		}
		ly.idx.candidates(rc, 0, ly.idx.above(o.a.acl.Priority-1), func(_ int, p *inst) bool {
			if p.a.acl.Action == nbdb.ACLActionPass && tierOn(v, p) == tierOn(v, o) && anyIntersect([]cube{rc}, l.setOf(v, p).over) {
				found = true
			}
			return !found
		})
	}
	return found
}

// lbModeFix is the fix a release that reads enable-stateless-acl-with-lb
// offers too.
func (l *linter) lbModeFix() string {
	if !l.lbModeKnown {
		return ""
	}
	return ", or set other_config:" + lbModeKey + "=true on the switch"
}

// passMeetsReplies reports whether a pass ACL of the layers of the stages
// that see in's replies can match them: on a switch, its own pass can
// hand on replies that a shared drop would have dropped (passedFirst).
func (l *linter) passMeetsReplies(v *swView, st stage, in *inst, layers func(stage) []*layer) bool {
	reply := l.replyOf(v, in)
	for _, ost := range opposite(st) {
		for _, ly := range layers(ost) {
			if !ly.passes {
				continue
			}
			for _, p := range ly.list {
				if p.a.acl.Action == nbdb.ACLActionPass && anyIntersect(reply.over, l.setOf(v, p).over) {
					return true
				}
			}
		}
	}
	return false
}
