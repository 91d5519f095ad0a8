package compile

import (
	"strconv"
	"strings"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// aclFlow is one flow an ACL produces, before it is placed on a datapath.
type aclFlow struct {
	stage    lflow.Stage
	priority int
	match    string
	actions  string
}

type aclFlowKey struct {
	id       string
	stateful bool
}

func (g *global) buildACLs(od *datapath, b *builder) {
	hasStateful := od.hasStatefulACL || od.hasLBVIP
	defaultAction := "next;"
	if g.defaultACLDrop {
		defaultAction = g.dropAction
	}
	if !od.hasACLs {
		if !od.hasLBVIP {
			b.add(lflow.InACL, 65535, "1", "next;")
			b.add(lflow.OutACL, 65535, "1", "next;")
		} else {
			b.add(lflow.InACL, 0, "1", "next;")
			b.add(lflow.OutACL, 0, "1", "next;")
		}
		b.add(lflow.InACLAfterLB, 0, "1", "next;")
	} else {
		b.add(lflow.InACL, 0, "1", defaultAction)
		b.add(lflow.OutACL, 0, "1", defaultAction)
		b.add(lflow.InACLAfterLB, 0, "1", defaultAction)
	}

	notInv, invOr := "", ""
	if g.useCtInvMatch {
		notInv, invOr = " && !ct.inv", "ct.inv || "
	}
	if hasStateful {
		m := "ip && ct.est && " + ctBlocked + " == 1"
		b.add(lflow.InACL, 1, m, regbitConntrackCommit+" = 1; next;")
		b.add(lflow.OutACL, 1, m, regbitConntrackCommit+" = 1; next;")
		def := regbitConntrackCommit + " = 1; next;"
		if g.defaultACLDrop {
			def = g.dropAction
		}
		b.add(lflow.InACL, 1, "ip && !ct.est", def)
		b.add(lflow.OutACL, 1, "ip && !ct.est", def)

		m = invOr + "(ct.est && ct.rpl && " + ctBlocked + " == 1)"
		b.add(lflow.InACL, 65532, m, g.dropAction)
		b.add(lflow.OutACL, 65532, m, g.dropAction)

		m = "ct.est && !ct.rel && !ct.new" + notInv + " && ct.rpl && " + ctBlocked + " == 0"
		b.add(lflow.InACL, 65532, m, regbitHintDrop+" = 0; "+regbitHintBlock+" = 0; "+regbitHintAllowRel+" = 1; next;")
		b.add(lflow.OutACL, 65532, m, "next;")

		m = "!ct.est && ct.rel && !ct.new" + notInv + " && " + ctBlocked + " == 0"
		b.add(lflow.InACL, 65532, m, regbitHintAllowRel+" = 1; ct_commit_nat;")
		b.add(lflow.OutACL, 65532, m, "ct_commit_nat;")
		b.add(lflow.InACLAfterLB, 65532, regbitHintAllowRel+" == 1", "next;")
	}
	b.add(lflow.InACL, 65532, ipv6CtOmitMatch, "next;")
	b.add(lflow.OutACL, 65532, ipv6CtOmitMatch, "next;")
	b.add(lflow.InACLAfterLB, 65532, ipv6CtOmitMatch, "next;")

	for _, acl := range od.acls {
		for _, f := range g.aclFlows(acl, hasStateful) {
			b.addFrom(f.stage, f.priority, f.match, f.actions, acl.UUID)
		}
	}
	for _, pg := range od.pgs {
		if sh := g.shared[pg.UUID]; sh != nil {
			b.addRun(sh.aclStageFlows(g, hasStateful))
			continue
		}
		for _, id := range pg.ACLs {
			acl, ok := g.s.ACLs[id]
			if !ok {
				continue
			}
			key := aclFlowKey{id, hasStateful}
			var flows []aclFlow
			if v, ok := g.pgACLFlows.Load(key); ok {
				flows = v.([]aclFlow)
			} else {
				flows = g.aclFlows(acl, hasStateful)
				g.pgACLFlows.Store(key, flows)
			}
			for _, f := range flows {
				b.addFrom(f.stage, f.priority, f.match, f.actions, id)
			}
		}
	}

	g.buildDHCPAndDNS(od, b, hasStateful)

	if od.hasACLs || od.hasLBVIP {
		b.add(lflow.InACL, 34000, "eth.dst == $svc_monitor_mac", "next;")
		b.add(lflow.OutACL, 34000, "eth.src == $svc_monitor_mac", "next;")
	}
}

// aclFlows is northd's consider_acl: the ACL-stage flows of one ACL on a
// datapath that is (or is not) stateful.
func (g *global) aclFlows(acl *nbdb.ACL, hasStateful bool) []aclFlow {
	ingress := acl.Direction == "from-lport"
	var st lflow.Stage
	switch {
	case ingress && boolOption(acl.Options["apply-after-lb"], false):
		st = lflow.InACLAfterLB
	case ingress:
		st = lflow.InACL
	default:
		st = lflow.OutACL
	}
	prio := acl.Priority + aclPriorityOffset
	logAct := g.aclLog(acl)
	var out []aclFlow
	add := func(s lflow.Stage, p int, m, a string) { out = append(out, aclFlow{s, p, m, a}) }

	switch acl.Action {
	case "allow-stateless":
		add(st, prio, acl.Match, logAct+"next;")
	case "allow", "allow-related":
		if !hasStateful {
			add(st, prio, acl.Match, logAct+"next;")
			break
		}
		label := ""
		if acl.Label != 0 {
			label = regbitACLLabel + " = 1; " + regLabel + " = " + strconv.Itoa(acl.Label) + "; "
		}
		add(st, prio, regbitHintAllowNew+" == 1 && ("+acl.Match+")", regbitConntrackCommit+" = 1; "+label+logAct+"next;")
		a := logAct + "next;"
		if acl.Label != 0 {
			a = regbitConntrackCommit + " = 1; " + label + logAct + "next;"
		}
		add(st, prio, regbitHintAllow+" == 1 && ("+acl.Match+")", a)
		if acl.Log && acl.Label != 0 && boolOption(acl.Options["log-related"], false) {
			rel := lflow.InACL
			if ingress {
				rel = lflow.OutACL
			}
			notInv := ""
			if g.useCtInvMatch {
				notInv = " && !ct.inv"
			}
			l := strconv.Itoa(acl.Label)
			add(rel, 65533, "ct.est && !ct.rel && !ct.new"+notInv+" && ct.rpl && "+ctBlocked+" == 0 && ct_label.label == "+l, logAct+"next;")
			add(rel, 65533, "!ct.est && ct.rel && !ct.new"+notInv+" && "+ctBlocked+" == 0 && ct_label.label == "+l, logAct+"next;")
		}
	case "drop", "reject":
		reject := acl.Action == "reject"
		if hasStateful {
			if reject {
				out = append(out, g.rejectFlow(acl, st, prio, regbitHintDrop+" == 1", ""))
			} else {
				add(st, prio, regbitHintDrop+" == 1 && ("+acl.Match+")", logAct+g.implicitDrop)
			}
			commit := "ct_commit { " + ctBlocked + " = 1; }; "
			if reject {
				out = append(out, g.rejectFlow(acl, st, prio, regbitHintBlock+" == 1", commit))
			} else {
				add(st, prio, regbitHintBlock+" == 1 && ("+acl.Match+")", commit+logAct+g.implicitDrop)
			}
		} else if reject {
			out = append(out, g.rejectFlow(acl, st, prio, "", ""))
		} else {
			add(st, prio, acl.Match, logAct+g.implicitDrop)
		}
	}
	return out
}

// rejectFlow is build_reject_acl_rules: the flow of a reject ACL. Note that the ACL match is not parenthesized.
func (g *global) rejectFlow(acl *nbdb.ACL, st lflow.Stage, prio int, extraMatch, extraActions string) aclFlow {
	var m strings.Builder
	if extraMatch != "" {
		m.WriteString("(" + extraMatch + ") && ")
	}
	m.WriteString(acl.Match)
	next := "next(pipeline=ingress,table=" + strconv.Itoa(lflow.InL2Lkup.Table()) + ");"
	if st.Pipeline() == lflow.Ingress {
		next = "next(pipeline=egress,table=" + strconv.Itoa(lflow.OutQoSMark.Table()) + ");"
	}
	a := g.aclLog(acl)
	if extraActions != "" {
		// northd appends a space after the (already space-terminated) extra actions.
		a += extraActions + " "
	}
	a += "reg0 = 0; reject { /* eth.dst <-> eth.src; ip.dst <-> ip.src; is implicit. */ outport <-> inport; " + next + " };"
	return aclFlow{st, prio, m.String(), a}
}

// aclLog is build_acl_log: the log() action prefix of a logged ACL, or "".
func (g *global) aclLog(acl *nbdb.ACL) string {
	if !acl.Log {
		return ""
	}
	var b strings.Builder
	b.WriteString("log(")
	if acl.Name != nil {
		b.WriteString("name=\"" + *acl.Name + "\", ")
	}
	sev := "info"
	if acl.Severity != nil {
		sev = *acl.Severity
	}
	b.WriteString("severity=" + sev + ", ")
	switch acl.Action {
	case "drop":
		b.WriteString("verdict=drop, ")
	case "reject":
		b.WriteString("verdict=reject, ")
	case "allow", "allow-related", "allow-stateless":
		b.WriteString("verdict=allow, ")
	}
	if acl.Meter != nil {
		name := *acl.Meter
		if g.fairMeters[name] {
			name += "__" + acl.UUID
		}
		b.WriteString("meter=\"" + name + "\", ")
	}
	s := strings.TrimSuffix(b.String(), " ")
	s = strings.TrimSuffix(s, ",")
	return s + "); "
}
