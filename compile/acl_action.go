package compile

import (
	"strconv"

	"github.com/aclc/aclc/lflow"
)

// aclPipes are the three ACL evaluations of a switch (ingress before and
// after load balancing, egress): each eval stage with its sample and
// action stages.
var aclPipes = [3]struct{ eval, sample, action lflow.Stage }{
	{lflow.InACL, lflow.InACLSample, lflow.InACLAction},
	{lflow.InACLAfterLB, lflow.InACLAfterLBSample, lflow.InACLAfterLBAction},
	{lflow.OutACL, lflow.OutACLSample, lflow.OutACLAction},
}

// aclPipe returns the index in aclPipes of eval stage st.
func aclPipe(st lflow.Stage) int {
	switch st.Kind() {
	case lflow.InACL:
		return 0
	case lflow.InACLAfterLB:
		return 1
	}
	return 2
}

// aclTiers is ls_stateful_record's max_acl_tier: the highest tier of the
// datapath's ACLs (its own and its port groups') in each of aclPipes.
type aclTiers [3]int

// of returns the highest tier of eval stage st.
func (t aclTiers) of(st lflow.Stage) int { return t[aclPipe(st)] }

// maxACLTiers is update_ls_max_acl_tier over every ACL of the datapath
// (the view's MaxTier), on releases with tiers.
func (g *global) maxACLTiers(od *datapath) aclTiers {
	if !g.r.verdicts {
		return aclTiers{}
	}
	return aclTiers(od.MaxTier)
}

// buildACLActionLflows is build_acl_action_lflows (23.06+): each action
// stage acts on the verdict bits its eval stage set, clears them, applies
// default_acl_drop, and with tiers sends a packet that matched no ACL of
// one tier back to the eval stage for the next.
func (g *global) buildACLActionLflows(od *datapath, b *builder, tiers aclTiers) {
	clear := regbitVerdictAllow + " = 0; " + regbitVerdictDrop + " = 0; " + regbitVerdictReject + " = 0; "
	def := "next;"
	if g.defaultACLDrop {
		def = g.implicitDrop
	}
	for i, p := range aclPipes {
		st, eval := p.action, p.eval
		maxTier := tiers[i]
		a := clear
		if maxTier > 0 {
			a += regACLTier + " = 0; "
		}
		if !od.HasACLs {
			b.add(st, 0, "1", "next;")
			continue
		}
		ingress := st.Pipeline() == lflow.Ingress
		b.add(st, 1000, regbitVerdictAllow+" == 1", a+"next;")
		b.add(st, 1000, regbitVerdictDrop+" == 1", a+g.implicitDrop)
		b.add(st, 1000, regbitVerdictReject+" == 1", a+g.rejectAction(ingress))
		b.add(st, 0, "1", a+def)
		pipe := "egress"
		if ingress {
			pipe = "ingress"
		}
		table := strconv.Itoa(b.lay.Stage(eval).Table())
		for j := 0; j < maxTier; j++ {
			b.add(st, 500, regACLTier+" == "+strconv.Itoa(j),
				regACLTier+" = "+strconv.Itoa(j+1)+"; next(pipeline="+pipe+",table="+table+");")
		}
	}
}
