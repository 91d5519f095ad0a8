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

// buildACLs is build_acls: the ACL (eval) stages' fixed flows, every
// ACL's flows (consider_acl and, from 23.06, the sample flows), the DHCP,
// DNS and service monitor flows, and, from 23.06, the action stages
// (build_acl_action_lflows).
func (g *global) buildACLs(od *datapath, b *builder) {
	r := &g.r
	hasStateful := od.HasStatefulACL || od.HasLBVIP
	// allow is the verdict-bit prefix of an allowing action (23.06+).
	allow, drop := "", ""
	if r.verdicts {
		allow, drop = regbitVerdictAllow+" = 1; ", regbitVerdictDrop+" = 1; next;"
	}
	defaultAction := "next;"
	if g.defaultACLDrop && !r.verdicts {
		defaultAction = g.dropAction
	}
	if !od.HasACLs {
		if !od.HasLBVIP {
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
	if g.useCtInvMatch && !r.noRedundantCt {
		notInv = " && !ct.inv"
	}
	if g.useCtInvMatch && !g.lbStatelessMode(od) {
		invOr = "ct.inv || "
	}
	notNew := " && !ct.new"
	if r.noRedundantCt {
		notNew = ""
	}
	nf := ""
	if r.nf {
		nf = regbitNFEnabled + " = ct_label.nf; "
	}
	if hasStateful {
		commit := regbitConntrackCommit + " = 1; "
		if r.commitInHint {
			commit = ""
		}
		// An established connection with ct_mark.blocked resumes; from
		// 26.09 only once the stage's tier loop reached its highest tier
		// (ls_stateful_rec->max_acl_tier), else a higher tier's drop
		// would be skipped.
		m := "ip && ct.est && " + ctBlocked + " == 1"
		for _, st := range [2]lflow.Stage{lflow.InACL, lflow.OutACL} {
			mt := m
			if t := g.maxACLTiers(od).of(st); r.blockedAtMaxTier && t > 0 {
				mt += " && " + regACLTier + " == " + strconv.Itoa(t)
			}
			b.add(st, 1, mt, commit+allow+"next;")
		}
		def := commit + "next;"
		if g.defaultACLDrop {
			def = g.dropAction
			if r.verdicts {
				def = "next;"
			}
		}
		b.add(lflow.InACL, 1, "ip && !ct.est", def)
		b.add(lflow.OutACL, 1, "ip && !ct.est", def)

		m = invOr + "(ct.est && ct.rpl && " + ctBlocked + " == 1)"
		a := g.dropAction
		if r.verdicts {
			a = drop
		}
		b.add(lflow.InACL, 65532, m, a)
		b.add(lflow.OutACL, 65532, m, a)

		m = "ct.est && !ct.rel" + notNew + notInv + " && ct.rpl && " + ctBlocked + " == 0"
		b.add(lflow.InACL, 65532, m, regbitHintDrop+" = 0; "+regbitHintBlock+" = 0; "+regbitHintAllowRel+" = 1; "+nf+allow+"next;")
		b.add(lflow.OutACL, 65532, m, nf+allow+"next;")

		m = "!ct.est && ct.rel && !ct.new" + notInv + " && " + ctBlocked + " == 0"
		b.add(lflow.InACL, 65532, m, regbitHintAllowRel+" = 1; "+nf+allow+"ct_commit_nat;")
		b.add(lflow.OutACL, 65532, m, nf+allow+"ct_commit_nat;")
		b.add(lflow.InACLAfterLB, 65532, regbitHintAllowRel+" == 1", allow+"next;")

		if r.persist {
			m = "ct.est && ct_mark.allow_established == 1"
			b.add(lflow.InACL, 65532, m, regbitHintAllowPersis+" = 1; "+nf+allow+"next;")
			b.add(lflow.OutACL, 65532, m, nf+allow+"next;")
			b.add(lflow.InACLAfterLB, 65532, regbitHintAllowPersis+" == 1", allow+"next;")
		}
	}
	b.add(lflow.InACL, 65532, ipv6CtOmitMatch, allow+"next;")
	b.add(lflow.OutACL, 65532, ipv6CtOmitMatch, allow+"next;")
	b.add(lflow.InACLAfterLB, 65532, ipv6CtOmitMatch, allow+"next;")

	if r.sampling {
		// build_acl_sample_default_flows
		b.add(lflow.InACLSample, 0, "1", "next;")
		b.add(lflow.OutACLSample, 0, "1", "next;")
		b.add(lflow.InACLAfterLBSample, 0, "1", "next;")
	}

	tiers := g.maxACLTiers(od)
	for _, acl := range od.ACLs {
		for _, f := range g.aclFlows(acl, hasStateful, tiers) {
			b.addFrom(f.stage, f.priority, f.match, f.actions, acl.UUID)
		}
	}
	for _, pg := range od.PortGroups {
		if sh := g.shared[pg.UUID]; sh != nil {
			b.addRun(sh.aclStageFlows(g, hasStateful, tiers, g.skipsOutFilter(od)))
			continue
		}
		for _, id := range pg.ACLs {
			acl, ok := g.s.ACLs[id]
			if !ok {
				continue
			}
			var flows []aclFlow
			if tiers != (aclTiers{}) {
				flows = g.aclFlows(acl, hasStateful, tiers)
			} else if v, ok := g.pgACLFlows.Load(aclFlowKey{id, hasStateful}); ok {
				flows = v.([]aclFlow)
			} else {
				flows = g.aclFlows(acl, hasStateful, tiers)
				g.pgACLFlows.Store(aclFlowKey{id, hasStateful}, flows)
			}
			for _, f := range flows {
				b.addFrom(f.stage, f.priority, f.match, f.actions, id)
			}
		}
	}

	if g.anySamples || g.anyApplied(od, hasSampleColumn, func(sh *pgShared) bool { return sh.samples }) {
		for _, acl := range g.v.AppliedACLs(od) {
			for _, f := range g.aclSampleFlows(od.HasStatefulACL, acl) {
				b.addFrom(f.stage, f.priority, f.match, f.actions, acl.UUID)
			}
		}
	}

	g.buildDHCPAndDNS(od, b, hasStateful)

	if od.HasACLs || od.HasLBVIP {
		b.add(lflow.InACL, 34000, "eth.dst == $svc_monitor_mac", allow+"next;")
		b.add(lflow.OutACL, 34000, "eth.src == $svc_monitor_mac", allow+"next;")
	}
	if r.verdicts {
		g.buildACLActionLflows(od, b, tiers)
	}
}

// skipsOutFilter reports whether northd leaves out the egress stateless
// filters on switch od: 25.09.0 did in the stateless-ACL-with-LB mode
// (release.StatelessLBEgressCt restored them).
func (g *global) skipsOutFilter(od *datapath) bool {
	return !g.r.statelessLBCt && g.lbStatelessMode(od)
}

// lbStatelessMode is LS other_config:enable-stateless-acl-with-lb
// (od->lb_with_stateless_mode), on releases that read it.
func (g *global) lbStatelessMode(od *datapath) bool {
	return lbStatelessMode(&g.r, od.LS)
}

// aclFlows is northd's consider_acl with, from 23.06, the ACL's log-related
// (build_acl_log_related_flows) and sample flows (build_acl_sample_flows):
// every flow of one ACL on a datapath that is (or is not) stateful and
// has the given highest tiers.
func (g *global) aclFlows(acl *nbdb.ACL, hasStateful bool, tiers aclTiers) []aclFlow {
	return g.appendACLFlows(nil, acl, hasStateful, tiers)
}

// appendACLFlows appends the flows of aclFlows to out.
func (g *global) appendACLFlows(out []aclFlow, acl *nbdb.ACL, hasStateful bool, tiers aclTiers) []aclFlow {
	if !g.r.verdicts {
		return append(out, g.considerACL2303(acl, hasStateful)...)
	}
	out = g.appendLogRelatedFlows(out, acl, hasStateful)
	return g.considerACL(out, acl, hasStateful, tiers)
}

// aclStage is the eval stage of an ACL.
func aclStage(acl *nbdb.ACL) lflow.Stage {
	ingress := acl.Direction == "from-lport"
	switch {
	case ingress && boolOption(acl.Options["apply-after-lb"], false):
		return lflow.InACLAfterLB
	case ingress:
		return lflow.InACL
	}
	return lflow.OutACL
}

// considerACL is consider_acl from 23.06 on: the ACL's flows in its eval
// stage set a verdict bit (acl_action acts on it), prefixed by the tier
// match on a datapath with tiers. It appends them to out.
func (g *global) considerACL(out []aclFlow, acl *nbdb.ACL, hasStateful bool, tiers aclTiers) []aclFlow {
	st := aclStage(acl)
	var verdict string
	switch acl.Action {
	case "drop":
		verdict = regbitVerdictDrop + " = 1; "
	case "reject":
		verdict = regbitVerdictReject + " = 1; "
	case "pass":
	default:
		verdict = regbitVerdictAllow + " = 1; "
	}
	log := g.aclLog(acl)
	prio := acl.Priority + aclPriorityOffset
	tier := ""
	if tiers.of(st) > 0 {
		tier = regACLTier + " == " + strconv.Itoa(aclTier(acl)) + " && "
	}
	add := func(m, a string) { out = append(out, aclFlow{st, prio, m, a}) }
	nfg := g.aclNFGroup(acl)
	// Each flow's match and actions are built by one concatenation.
	switch {
	case !hasStateful || acl.Action == "pass" || acl.Action == "allow-stateless":
		if nfg != nil {
			return out // northd logs "does not support network-function-group"
		}
		add(tier+"("+acl.Match+")", log+verdict+g.unallowedLabel(acl)+"next;")
	case acl.Action == "allow" || acl.Action == "allow-related":
		const commit = regbitConntrackCommit + " = 1; "
		nfAct := ""
		if nfg != nil {
			nfAct = regbitNFEnabled + " = 1; " + regbitNFOrigDir + " = 1; " + regNFGroupID + " = " + strconv.Itoa(nfg.ID) + "; "
		}
		newCommit := commit
		if g.r.commitInHint {
			newCommit = ""
		}
		label := g.aclSampleLabel(acl, true, true)
		add(tier+regbitHintAllowNew+" == 1 && ("+acl.Match+")", log+verdict+newCommit+g.aclPersist(acl)+label+nfAct+"next;")
		estCommit := ""
		if acl.Label != 0 || g.aclSample(acl, false) != nil || nfg != nil {
			estCommit = commit
		}
		add(tier+regbitHintAllow+" == 1 && ("+acl.Match+")", log+verdict+estCommit+label+nfAct+"next;")
	case acl.Action == "drop" || acl.Action == "reject":
		if nfg != nil {
			return out
		}
		base := log + verdict + g.unallowedLabel(acl)
		add(tier+regbitHintDrop+" == 1 && ("+acl.Match+")", base+"next;")
		commit := "ct_commit { " + ctBlocked + " = 1; }; next;"
		if g.r.sampling {
			pid := 0
			if est := g.aclSample(acl, false); est != nil {
				pid = est.Metadata
			}
			commit = "ct_commit { " + ctBlocked + " = 1; ct_label.obs_point_id = " + strconv.Itoa(pid) + "; }; next;"
		}
		add(tier+regbitHintBlock+" == 1 && ("+acl.Match+")", base+commit)
	}
	return out
}

// unallowedLabel is the label part of the actions of an ACL that does not
// allow-and-commit (on a stateless switch, or a pass, allow-stateless,
// drop or reject ACL): from 24.09 the observation registers
// (build_acl_sample_label_action), before it none — consider_acl of
// 23.06–24.03 sets reg0[13] and reg3 for allow and allow-related ACLs
// only.
func (g *global) unallowedLabel(acl *nbdb.ACL) string {
	if !g.r.sampling {
		return ""
	}
	return g.aclSampleLabel(acl, true, false)
}

// appendLogRelatedFlows is build_acl_log_related_flows: a logged,
// labelled allow ACL with options:log-related logs the reply and related
// traffic in the opposite pipeline. It appends them to out.
func (g *global) appendLogRelatedFlows(out []aclFlow, acl *nbdb.ACL, hasStateful bool) []aclFlow {
	if acl.Action == "allow-stateless" || !hasStateful || (acl.Action != "allow" && acl.Action != "allow-related") ||
		!acl.Log || acl.Label == 0 || !boolOption(acl.Options["log-related"], false) {
		return out
	}
	a := g.aclLog(acl)
	if g.r.nf {
		a += regbitNFEnabled + " = ct_label.nf; "
	}
	a += regbitVerdictAllow + " = 1; next;"
	st := lflow.InACL
	if acl.Direction == "from-lport" {
		st = lflow.OutACL
	}
	notInv, notNew := "", " && !ct.new"
	if g.useCtInvMatch && !g.r.noRedundantCt {
		notInv = " && !ct.inv"
	}
	if g.r.noRedundantCt {
		notNew = ""
	}
	l := strconv.Itoa(acl.Label)
	return append(out,
		aclFlow{st, 65533, "ct.est && !ct.rel" + notNew + notInv + " && ct.rpl && " + ctBlocked + " == 0 && ct_label.label == " + l, a},
		aclFlow{st, 65533, "!ct.est && ct.rel && !ct.new" + notInv + " && " + ctBlocked + " == 0 && ct_label.label == " + l, a})
}

// considerACL2303 is consider_acl of 23.03: no verdict bits; drop and
// reject act in the ACL stage itself.
func (g *global) considerACL2303(acl *nbdb.ACL, hasStateful bool) []aclFlow {
	ingress := acl.Direction == "from-lport"
	st := aclStage(acl)
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
	m := rejectMatch(extraMatch, acl.Match)
	a := g.aclLog(acl)
	if extraActions != "" {
		// northd appends a space after the (already space-terminated) extra actions.
		a += extraActions + " "
	}
	a += g.rejectAction(st.Pipeline() == lflow.Ingress)
	return aclFlow{st, prio, m, a}
}

// rejectMatch is a reject flow's match: the hint bit test extra, when
// there is one, and the ACL's match, not parenthesized.
func rejectMatch(extra, match string) string {
	if extra == "" {
		return match
	}
	return "(" + extra + ") && " + match
}

// RejectPrefixes are the texts northd 23.03 writes before a reject ACL's
// match, which it does not parenthesize, on a stateful switch (one per
// hint bit: drop and block).
func RejectPrefixes() []string {
	return []string{rejectMatch(regbitHintDrop+" == 1", ""), rejectMatch(regbitHintBlock+" == 1", "")}
}

// rejectAction is build_acl_reject_action: reject and resume at the other
// pipeline's stage after the ACLs (egress QoS) or at L2 lookup.
func (g *global) rejectAction(ingress bool) string {
	next := "next(pipeline=ingress,table=" + strconv.Itoa(g.r.layout.Stage(lflow.InL2Lkup).Table()) + ");"
	if ingress {
		qos := lflow.OutQoS
		if !g.r.layout.Has(qos) {
			qos = lflow.OutQoSMark
		}
		next = "next(pipeline=egress,table=" + strconv.Itoa(g.r.layout.Stage(qos).Table()) + ");"
	}
	return "reg0 = 0; reject { /* eth.dst <-> eth.src; ip.dst <-> ip.src; is implicit. */ outport <-> inport; " + next + " };"
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
	case "pass":
		b.WriteString("verdict=pass, ")
	case "allow", "allow-related", "allow-stateless":
		b.WriteString("verdict=allow, ")
	}
	if acl.Meter != nil {
		name := *acl.Meter
		if g.v.MeterFair(name) {
			name += "__" + acl.UUID
		}
		b.WriteString("meter=\"" + name + "\", ")
	}
	s := strings.TrimSuffix(b.String(), " ")
	s = strings.TrimSuffix(s, ",")
	return s + "); "
}
