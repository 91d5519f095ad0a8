package reach

import (
	"strings"

	"github.com/aclc/aclc/lflow"
)

// This file parses a flow's action string into the statements the engine
// executes symbolically.

// actKind classifies an action statement.
type actKind int

const (
	aNoop        actKind = iota // log, sample, trigger_event, meter: no effect on the packet's fate
	aNext                       // next; next(N); next(pipeline=P, table=N)
	aDrop                       // drop;
	aLoad                       // X = constant
	aMove                       // X = Y
	aReject                     // reject { ... };
	aCTNext                     // ct_next;
	aCTLB                       // ct_lb; ct_lb_mark; (no backends)
	aCTCommit                   // ct_commit; ct_commit { ... };
	aCTCommitNAT                // ct_commit_nat;
	aCTClear                    // ct_clear;
	aUnknown                    // anything else: not executed exactly
)

// action is one parsed statement.
type action struct {
	kind     actKind
	text     string // the statement, with its ';'
	lhs, rhs string // aLoad, aMove
	// aNext: the pipeline (when hasPipe) and table (-1: the next one).
	hasPipe bool
	pipe    lflow.Pipeline
	table   int
}

// noops are the actions whose leading word is all that matters: none of
// them changes what the ACL stages decide (package trace treats them so).
var noops = map[string]bool{"log": true, "sample": true, "trigger_event": true, "meter": true}

// prereqOf are the prerequisites an action adds to its flow's match
// (OVN's action parser; package trace's actionPrereqs).
var prereqOf = map[string]string{"ct_next": "ip", "ct_commit": "ip", "ct_commit_nat": "ip", "ct_lb": "ip", "ct_lb_mark": "ip"}

// fieldPrereq are the prerequisites of a field an assignment names, by its
// leading component.
var fieldPrereq = map[string]string{
	"ip4": "ip4", "ip6": "ip6", "ip": "ip", "tcp": "tcp", "udp": "udp", "sctp": "sctp",
	"icmp4": "icmp4", "icmp6": "icmp6", "icmp": "icmp", "arp": "arp", "nd": "nd",
}

// parseActions parses an action string; it fails only on malformed
// text (unbalanced braces, unterminated strings or comments).
func parseActions(s string) ([]action, []string, error) {
	stmts, err := lflow.SplitActions(s)
	if err != nil {
		return nil, nil, err
	}
	var acts []action
	var pre []string
	add := func(p string) {
		for _, q := range pre {
			if q == p {
				return
			}
		}
		if p != "" {
			pre = append(pre, p)
		}
	}
	field := func(f string) {
		if i := strings.IndexByte(f, '.'); i > 0 {
			add(fieldPrereq[f[:i]])
		}
	}
	for _, st := range stmts {
		a := parseAction(st)
		switch a.kind {
		case aLoad, aMove:
			field(a.lhs)
			if a.kind == aMove {
				field(a.rhs)
			}
		case aReject:
			// its nested actions run on a new packet: no prerequisite
		default:
			add(prereqOf[word(st)])
		}
		acts = append(acts, a)
	}
	return acts, pre, nil
}

func parseAction(st string) action {
	a := action{kind: aUnknown, text: st + ";", table: -1}
	w := word(st)
	rest := strings.TrimSpace(st[len(w):])
	switch {
	case noops[w]:
		a.kind = aNoop
	case w == "next":
		a.kind = aNext
		if rest == "" {
			return a
		}
		args, ok := strings.CutPrefix(rest, "(")
		if args, ok = strings.CutSuffix(args, ")"); !ok {
			a.kind = aUnknown
			return a
		}
		n, err := lflow.ParseNext(args)
		if err != nil || len(n.Unknown) > 0 {
			a.kind = aUnknown
			return a
		}
		a.hasPipe, a.pipe, a.table = n.HasPipeline, n.Pipeline, n.Table
	case w == "drop" && rest == "":
		a.kind = aDrop
	case w == "reject" && strings.HasPrefix(rest, "{"):
		a.kind = aReject
	case w == "ct_next" && rest == "":
		a.kind = aCTNext
	case (w == "ct_lb" || w == "ct_lb_mark") && rest == "":
		a.kind = aCTLB
	case w == "ct_commit" && (rest == "" || strings.HasPrefix(rest, "{")):
		a.kind = aCTCommit
	case w == "ct_commit_nat" && rest == "":
		a.kind = aCTCommitNAT
	case w == "ct_clear" && rest == "":
		a.kind = aCTClear
	default:
		lhs, rhs, ok := strings.Cut(st, "=")
		if !ok || strings.ContainsAny(rhs, "(){}=<>") || strings.HasSuffix(lhs, "<") || strings.HasSuffix(lhs, "!") {
			return a
		}
		a.lhs, a.rhs = strings.TrimSpace(lhs), strings.TrimSpace(rhs)
		if a.lhs == "" || a.rhs == "" {
			return a
		}
		a.kind = aLoad // aMove when the right-hand side is a field: decided by the engine
	}
	return a
}

// word returns the leading identifier of s.
func word(s string) string {
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] == '.' || s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9') {
		i++
	}
	return s[:i]
}
