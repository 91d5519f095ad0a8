package trace

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/aclc/aclc/lflow"
)

// actKind classifies the logical-flow actions the tracer executes.
type actKind int

const (
	aNoop               actKind = iota // sample, trigger_event, put_fdb, ...: no effect on the trace
	aNext                              // next; next(N); next(pipeline=P,table=N);
	aOutput                            // output;
	aDrop                              // drop;
	aLoad                              // field = constant | field = field
	aExchange                          // a <-> b
	aHairpin                           // reg0[6] = chk_lb_hairpin(); ..._reply()
	aPortSec                           // reg0[15] = check_in_port_sec(); check_out_port_sec()
	aDNSLookup                         // reg0[4] = dns_lookup()
	aPutOpts                           // reg0[3] = put_dhcp_opts(...); put_dhcpv6_opts(...); reg0[5] = put_nd_ra_opts(...)
	aCTOrig                            // reg1[16..23] = ct_proto(); ct_tp_dst(), ct_nw_dst(), ct_ip6_dst()
	aSample                            // sample(probability=...,collector_set=...,obs_domain=...,obs_point=...);
	aCTNext                            // ct_next;
	aCTLB                              // ct_lb; ct_lb_mark; ct_lb_mark(backends=...);
	aCTCommit                          // ct_commit; ct_commit { ... };
	aCTCommitNAT                       // ct_commit_nat;
	aCTClear                           // ct_clear;
	aReject                            // reject { ... };
	aLog                               // log(...);
	aDecTTL                            // ip.ttl--;
	aLookupNeighbor                    // reg9[2] = lookup_arp(...); lookup_nd(...)
	aGetNeighbor                       // get_arp(outport, reg0); get_nd(outport, xxreg0)
	aNFLookupOrigInport                // reg8[24] = nf_lookup_orig_inport() (26.09)
	aSelect                            // reg8[16..31] = select(1, 2): an ECMP member
	aGenerate                          // icmp4 { ... }; icmp6, tcp_reset, sctp_abort (a router's own packets)
	aClone                             // clone { ... }: the nested actions on a copy, then the rest
	aNotModelled                       // router actions aclc trace does not execute (get_arp, arp { }, ...)
	aUnsupported                       // anything else
)

// action is one parsed logical-flow action.
type action struct {
	kind   actKind
	text   string // the statement as written, with its trailing ';'
	name   string // ct_lb or ct_lb_mark for aCTLB
	lhs    string // aLoad, aExchange, aHairpin
	rhs    string
	args   string   // the text between the parentheses of log(...), ct_lb_mark(...)
	nested []action // reject { ... }
	// aNext: pipeline switch (when hasPipeline) and table (-1: next table)
	hasPipeline bool
	pipeline    lflow.Pipeline
	table       int
}

// parseActions splits an action string into statements and parses each.
// Comments are dropped, as OVN's lexer does: "/* drop */" is no action.
func parseActions(s string) ([]action, error) {
	stmts, err := lflow.SplitActions(s)
	if err != nil {
		return nil, err
	}
	out := make([]action, 0, len(stmts))
	for _, st := range stmts {
		a, err := parseAction(st)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// word returns the leading identifier of s (letters, digits, '_', '.').
func word(s string) string {
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] == '.' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9') {
		i++
	}
	return s[:i]
}

// inner returns what is between the first open and the matching last close
// delimiter of s, or ok false.
func inner(s string, open, close byte) (string, bool) {
	i, j := strings.IndexByte(s, open), strings.LastIndexByte(s, close)
	if i < 0 || j < i {
		return "", false
	}
	return strings.TrimSpace(s[i+1 : j]), true
}

// generated are the actions that make a new packet and run their nested
// actions on it (ovn-trace execute_icmp4, execute_tcp_reset, ...).
var generated = map[string]bool{"icmp4": true, "icmp6": true, "icmp4_error": true, "icmp6_error": true,
	"tcp_reset": true, "sctp_abort": true, "arp": true}

// keywordActions are the actions whose leading word says all the tracer
// needs to know about them (arguments, if any, do not matter to it).
var keywordActions = map[string]actKind{
	"output": aOutput, "drop": aDrop, "ct_next": aCTNext, "ct_commit_nat": aCTCommitNAT,
	"ct_clear": aCTClear, "ct_commit": aCTCommit,
	"trigger_event": aNoop, "put_fdb": aNoop,
	// put_arp/put_nd learn a MAC binding: nothing the trace can see.
	"put_arp": aNoop, "put_nd": aNoop, "set_queue": aNoop, "meter": aNoop, "handle_svc_check": aNoop,
	// nf_learn_orig_inport(ipv6 = B) (26.09) records the packet's inport
	// for a network function's return traffic: ovn-trace prints it and
	// goes on.
	"nf_learn_orig_inport": aNoop,
	// mac_cache_use (23.09+ routers) refreshes a MAC binding's age in
	// ovn-controller: ovn-trace does nothing for it.
	"mac_cache_use": aNoop,
}

func parseAction(st string) (action, error) {
	a := action{text: st + ";", table: -1}
	w := word(st)
	rest := strings.TrimSpace(st[len(w):])
	switch w {
	case "next":
		a.kind = aNext
		if rest == "" {
			return a, nil
		}
		args, ok := inner(rest, '(', ')')
		if !ok {
			return a, fmt.Errorf("bad next: %q", st)
		}
		// Other argument names than pipeline and table do not matter
		// to the trace.
		n, err := lflow.ParseNext(args)
		if err != nil {
			return a, fmt.Errorf("%v in %q", err, st)
		}
		a.hasPipeline, a.pipeline, a.table = n.HasPipeline, n.Pipeline, n.Table
		return a, nil
	case "ct_lb", "ct_lb_mark":
		a.kind, a.name = aCTLB, w
		if rest != "" {
			args, ok := inner(rest, '(', ')')
			if !ok {
				return a, fmt.Errorf("bad %s: %q", w, st)
			}
			a.args = args
		}
		return a, nil
	case "reject":
		return nestedAction(a, aReject, w, rest, st)
	case "log":
		a.kind = aLog
		a.args, _ = inner(rest, '(', ')')
		return a, nil
	case "sample":
		a.kind = aSample
		a.args, _ = inner(rest, '(', ')')
		return a, nil
	}
	if w == "clone" && strings.HasPrefix(rest, "{") {
		return nestedAction(a, aClone, w, rest, st)
	}
	if generated[w] && strings.HasPrefix(rest, "{") {
		return nestedAction(a, aGenerate, w, rest, st)
	}
	if st == "ip.ttl--" {
		a.kind = aDecTTL
		return a, nil
	}
	if w == "get_arp" || w == "get_nd" {
		a.kind, a.name = aGetNeighbor, w
		return a, nil
	}
	if why, ok := notModelledAction(st); ok {
		a.kind, a.name = aNotModelled, why
		return a, nil
	}
	if k, ok := keywordActions[w]; ok {
		a.kind = k
		return a, nil
	}
	if l, r, ok := strings.Cut(st, "<->"); ok {
		a.kind, a.lhs, a.rhs = aExchange, strings.TrimSpace(l), strings.TrimSpace(r)
		return a, nil
	}
	if l, r, ok := strings.Cut(st, "="); ok && !strings.HasPrefix(r, "=") {
		a.kind, a.lhs, a.rhs = aLoad, strings.TrimSpace(l), strings.TrimSpace(r)
		switch {
		case strings.HasPrefix(a.rhs, "chk_lb_hairpin"):
			a.kind = aHairpin
		case a.rhs == "check_in_port_sec()" || a.rhs == "check_out_port_sec()":
			a.kind = aPortSec
		case a.rhs == "dns_lookup()":
			a.kind = aDNSLookup
		case strings.HasPrefix(a.rhs, "put_dhcp_opts(") || strings.HasPrefix(a.rhs, "put_dhcpv6_opts(") || strings.HasPrefix(a.rhs, "put_nd_ra_opts("):
			a.kind, a.name = aPutOpts, word(a.rhs)
			a.args, _ = inner(a.rhs, '(', ')')
		case a.rhs == "ct_proto()" || a.rhs == "ct_tp_dst()" || a.rhs == "ct_nw_dst()" || a.rhs == "ct_ip6_dst()":
			a.kind = aCTOrig
		case strings.HasPrefix(a.rhs, "select("):
			a.kind = aSelect
			a.args, _ = inner(a.rhs, '(', ')')
		case strings.HasPrefix(a.rhs, "lookup_arp(") || strings.HasPrefix(a.rhs, "lookup_nd(") ||
			strings.HasPrefix(a.rhs, "lookup_arp_ip(") || strings.HasPrefix(a.rhs, "lookup_nd_ip("):
			a.kind = aLookupNeighbor
		case a.rhs == "nf_lookup_orig_inport()":
			a.kind = aNFLookupOrigInport
		}
		return a, nil
	}
	a.kind = aUnsupported
	return a, nil
}

// nestedAction parses "W { ACTIONS }" (reject, clone, icmp4, ...) into a
// of kind k named w.
func nestedAction(a action, k actKind, w, rest, st string) (action, error) {
	body, ok := inner(rest, '{', '}')
	if !ok {
		return a, fmt.Errorf("bad %s: %q", w, st)
	}
	nested, err := parseActions(body)
	if err != nil {
		return a, err
	}
	a.kind, a.name, a.nested = k, w, nested
	a.text = w + " { " + joinActions(nested) + " };"
	return a, nil
}

func joinActions(as []action) string {
	var parts []string
	for _, a := range as {
		parts = append(parts, a.text)
	}
	return strings.Join(parts, " ")
}

// logArgs parses the arguments of log(...): name="...", severity=...,
// verdict=..., meter="...".
func logArgs(args string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(args, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if uq, err := strconv.Unquote(v); err == nil {
			v = uq
		}
		out[strings.TrimSpace(k)] = v
	}
	return out
}
