package lint

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// This file holds the rules about flows ovn-northd writes in a way that
// loses traffic: the reject flow whose match OVN 23.03 cannot parse,
// default_acl_drop's default in the after-LB stage, and tiers that
// northd's FDP-1154 scan may or may not see depending on its own state.

// RuleNorthdUndecided: on a release with FDP-1154 (OVN 24.03), whether
// northd evaluates a switch's ACLs tier by tier depends on the order of
// port groups in one bucket of its ls_pg->nb_pgs hash table, which
// follows its history, not the NB (nbview.Switch.TierContest): the
// analysis of that switch's tiers assumes one outcome (aclc's guess).
const RuleNorthdUndecided = "northd-undecided"

// undecidedTiers is the RuleNorthdUndecided finding of switch v: the
// ACLs that decide the scan in each contending port group.
func (l *linter) undecidedTiers(v *swView) Finding {
	var refs []ACLRef
	var names []string
	for _, id := range v.contest {
		pg := l.s.PortGroups[id]
		names = append(names, fmt.Sprintf("%q", pg.Name))
		if acl, _ := nbview.TierScanFirst(l.nb.PortGroupACLs(id)); acl != nil {
			if a := l.acls[acl.UUID]; a != nil {
				refs = append(refs, a.ref)
			}
		}
	}
	f := release.ACLFlagsFullScan
	return Finding{Rule: RuleNorthdUndecided, Severity: Error, ACLs: refs, Switches: []string{v.name},
		Message: fmt.Sprintf("OVN %s's northd reads ACL tiers until the first allow-related ACL it meets at tier 0 (FDP-1154) and meets port groups %s in the order it inserted them into its hash table, not the NB's: "+
			"depending on its history it evaluates this switch's ACLs tier by tier or ignores every tier; this analysis assumes %s",
			l.rel.Name(), strings.Join(names, ", "), tierGuess(v.maxTier)),
		Fix: fmt.Sprintf("give the allow-related ACLs at tier 0 a tier above 0 (or the switch an ACL of its own with one), or run an OVN with the fix, %s: %s", f.Commits(), f.Since())}
}

// RuleTiersIgnored: on a release with FDP-1154 northd's scan of a
// switch's ACLs stopped at an allow-related ACL at tier 0 before it read
// any tier (nbview.Switch.TierStop), so it writes no tier matches and no
// tier loops there: the ACLs of every tier are evaluated together, by
// priority alone, whatever their tiers say.
const RuleTiersIgnored = "tiers-ignored"

// ignoredTiers is the RuleTiersIgnored finding of switch v.
func (l *linter) ignoredTiers(v *swView) Finding {
	var refs []ACLRef
	if a := l.acls[v.tierStop.UUID]; a != nil {
		refs = append(refs, a.ref)
	}
	f := release.ACLFlagsFullScan
	return Finding{Rule: RuleTiersIgnored, Severity: Warning, ACLs: refs, Switches: []string{v.name},
		Message: fmt.Sprintf("OVN %s's northd stops reading this switch's ACL tiers at this allow-related ACL at tier 0, the first it meets before any tier above 0 (FDP-1154): it ignores every tier here and evaluates the ACLs of all tiers together, by priority", l.rel.Name()),
		Fix:     fmt.Sprintf("give the allow-related ACLs at tier 0 a tier above 0 (or the switch an ACL of its own with one), or run an OVN with the fix, %s: %s", f.Commits(), f.Since())}
}

// stageName is northd's name, in the linted release's layout, of the
// first of kinds the layout has.
func (l *linter) stageName(kinds ...lflow.Stage) string {
	lay, ok := lflow.LayoutFor(l.rel.Series())
	for _, k := range kinds {
		if ok && lay.Has(k) {
			return lay.Stage(k).Name()
		}
	}
	return "?"
}

// tierGuess says what maxTier assumes.
func tierGuess(t nbview.Tiers) string {
	if t == (nbview.Tiers{}) {
		return "that every tier is ignored"
	}
	return "that the tiers are evaluated"
}

// rejectOr validates the actual text of the reject flows northd writes on a
// stateful switch.
func (l *linter) rejectOr(v *swView, in *inst) (Finding, bool) {
	for hi, h := range l.rejectHints {
		text := h + in.a.acl.Match
		// The text's validity depends only on which references exist.
		key := fmt.Sprintf("%d|%s", hi, v.refKey(in.a))
		var err error
		if x, ok := l.validCache.Load(key); ok {
			err, _ = x.(error)
		} else {
			err = l.dialect.Valid(text, v.parseRes)
			l.validCache.Store(key, err)
		}
		if err == nil {
			continue
		}
		f := Finding{Rule: RuleRejectOr, Severity: Error, ACLs: []ACLRef{in.a.ref},
			Message: fmt.Sprintf("on this stateful switch northd 23.03 writes the reject flows as `%s<match>' without parentheses, and OVN rejects `%s': %s; ovn-controller discards the flows, so the ACL rejects nothing",
				h, text, errMsg(err)),
			Fix: fmt.Sprintf("parenthesize the whole match: (%s)", in.a.acl.Match)}
		var pe *expr.Error
		if errors.As(err, &pe) && pe.Offset >= len(h) {
			f.Offset = intp(pe.Offset - len(h))
		}
		return f, true
	}
	return Finding{}, false
}

// defaultDropAfterLB: with default_acl_drop=true, northd installs a
// priority-0 drop in the after-LB ACL stage (ls_in_acl_after_lb on 23.03,
// ls_in_acl_after_lb_action from 23.06) on every switch with ACLs, so
// traffic a from-lport ACL allows in ls_in_acl(_eval) is dropped there unless an
// after-LB ACL (options:apply-after-lb=true) allows it too (replies and
// related traffic of committed connections are let through by reg0[17]).
func (l *linter) defaultDropAfterLB(v *swView, in, afterLB []*layer) []Finding {
	var allowers []*inst
	for _, ly := range afterLB {
		for _, a := range ly.list {
			if a.a.verdict.Allows() {
				allowers = append(allowers, a)
			}
		}
	}
	al := []*layer{l.newLayer(v, allowers)}
	var out []Finding
	for _, ly := range in {
		for _, in := range ly.list {
			out = append(out, l.dropAfterLB(v, in, allowers, al)...)
		}
	}
	return out
}

func (l *linter) dropAfterLB(v *swView, in *inst, allowers []*inst, al []*layer) []Finding {
	if !in.a.verdict.Allows() {
		return nil
	}
	s := l.setOf(v, in)
	if len(s.over) == 0 {
		return nil
	}
	some := false
	for _, a := range allowers {
		if anyIntersect(s.over, l.setOf(v, a).over) {
			some = true
			break
		}
	}
	fix := "add a from-lport ACL with options:apply-after-lb=true that allows this traffic, or leave default_acl_drop unset"
	if !some {
		return []Finding{{Rule: RuleDefaultDropAfterLB, Severity: Error, ACLs: []ACLRef{in.a.ref},
			Message: "default_acl_drop=true makes the priority-0 flow of " + l.stageName(lflow.InACLAfterLBAction, lflow.InACLAfterLB) + " drop on every switch with ACLs, and no after-LB ACL allows what this ACL allows in " + l.stageName(lflow.InACL) + ": that traffic (all of it but the replies and related packets of committed connections) is dropped right after load balancing",
			Fix:     fix}}
	}
	if _, ok := l.covered(v, s.over, math.MinInt, al, false); !ok {
		return []Finding{{Rule: RuleDefaultDropAfterLB, Severity: Warning, ACLs: []ACLRef{in.a.ref},
			Message: "default_acl_drop=true makes the priority-0 flow of " + l.stageName(lflow.InACLAfterLBAction, lflow.InACLAfterLB) + " drop on every switch with ACLs, and the after-LB ACLs allow only part of what this ACL allows in " + l.stageName(lflow.InACL) + " (or aclc cannot prove they allow all of it): the rest is dropped right after load balancing",
			Fix:     fix}}
	}
	return nil
}
