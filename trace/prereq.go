package trace

import (
	"fmt"
	"slices"
	"strings"

	"github.com/aclc/aclc/lflow"
)

// This file holds the prerequisites a flow's actions add to its match.
// OVN's action parser (lib/actions.c add_prerequisite, and the fields an
// assignment reads or writes) ANDs them into the match ovn-controller
// installs and ovn-trace evaluates: a flow whose actions commit to
// conntrack never matches ARP, one that swaps ip4.src and ip4.dst never
// matches IPv6.

// actionPrereqs are the prerequisites of the actions that add one
// (parse_CT_NEXT, parse_CT_COMMIT, parse_ct_nat, parse_ct_lb_action,
// parse_DEC_TTL, the nested icmp4/icmp6/tcp_reset/sctp_abort/arp/nd_na/nd_ns,
// dns_lookup).
var actionPrereqs = map[string]string{
	"ct_next": "ip", "ct_commit": "ip", "ct_commit_nat": "ip", "ct_dnat": "ip", "ct_snat": "ip",
	"ct_dnat_in_czone": "ip", "ct_snat_in_czone": "ip", "ct_lb": "ip", "ct_lb_mark": "ip", "ct_lb_mark_local": "ip",
	"icmp4": "ip4", "icmp4_error": "ip4", "icmp6": "ip6", "icmp6_error": "ip6", "tcp_reset": "tcp",
	"sctp_abort": "sctp", "arp": "ip", "nd_na": "nd_ns", "nd_na_router": "nd_ns", "nd_ns": "ip",
}

// fieldPrereqs are the prerequisites of the fields an assignment names,
// by their leading component (the symbol table's prerequisites).
var fieldPrereqs = map[string]string{
	"ip4": "ip4", "ip6": "ip6", "ip": "ip", "tcp": "tcp", "udp": "udp", "sctp": "sctp",
	"icmp4": "icmp4", "icmp6": "icmp6", "icmp": "icmp", "arp": "arp", "nd": "nd",
}

// prereqs returns the prerequisites of acts, in order, once each.
func prereqs(acts []action) []string {
	var out []string
	add := func(p string) {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	field := func(f string) {
		f = strings.TrimSpace(f)
		if i := strings.IndexByte(f, '.'); i > 0 {
			add(fieldPrereqs[f[:i]])
		}
	}
	for _, a := range acts {
		w := word(a.text)
		switch a.kind {
		case aReject:
			// reject's nested actions run on a new packet: it adds none
			continue
		case aLoad, aExchange, aCTOrig:
			field(a.lhs)
			if a.kind != aCTOrig {
				field(a.rhs) // a move or exchange reads it
			}
			continue
		case aDNSLookup:
			add("udp")
			continue
		case aDecTTL:
			add("ip")
			continue
		}
		add(actionPrereqs[w])
	}
	return out
}

// newTflow makes the tflow of f: actions parsed, their prerequisites
// added to the match.
func newTflow(f lflow.Flow, origin string) *tflow {
	tf := &tflow{f: f, origin: origin}
	acts, err := parseActions(f.Actions)
	if err != nil {
		tf.err = fmt.Errorf("actions do not parse: %w", err)
		return tf
	}
	tf.acts = acts
	tf.prereqs = prereqs(acts)
	tf.always = f.Match == "1" && len(tf.prereqs) == 0
	return tf
}

// matchText is the match ovn-trace evaluates: the flow's match and its
// actions' prerequisites.
func (tf *tflow) matchText() string {
	if len(tf.prereqs) == 0 {
		return tf.f.Match
	}
	return "(" + tf.f.Match + ") && " + strings.Join(tf.prereqs, " && ")
}
