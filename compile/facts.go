package compile

import (
	"slices"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// This file states, for the other packages that reason about the flows
// (lint), the release rules they depend on, so that each rule stays
// stated once, here in compile.

// HasTiers reports whether release r's northd evaluates ACLs tier by tier
// with the verb pass (23.06+: verdict bits, the tier register and the tier
// loops of the action stages). nil is 23.03.1.
func HasTiers(r *release.Release) bool { return newRules(r).verdicts }

// RejectPrefixesFor are the texts release r's northd writes before a
// reject ACL's match, which it does not parenthesize, on a stateful
// switch: RejectPrefixes on 23.03; none from 23.06 on, where
// consider_acl writes every match as `... && (MATCH)'.
func RejectPrefixesFor(r *release.Release) []string {
	if newRules(r).verdicts {
		return nil
	}
	return RejectPrefixes()
}

// LBStatelessMode reports whether release r's northd runs switch ls in
// the stateless-ACL-with-LB mode (od->lb_with_stateless_mode): LS
// other_config:enable-stateless-acl-with-lb=true, read from 25.09 on.
// Then traffic an allow-stateless ACL matches is still load balanced:
// ls_in_pre_stateful sends traffic to a VIP to ct_lb_mark at priority 150
// and ls_out_pre_lb sends stateless traffic to ct_nat at priority 115.
func LBStatelessMode(r *release.Release, ls *nbdb.LogicalSwitch) bool {
	ru := newRules(r)
	return lbStatelessMode(&ru, ls)
}

func lbStatelessMode(r *rules, ls *nbdb.LogicalSwitch) bool {
	return r.statelessLB && boolOption(ls.OtherConfig["enable-stateless-acl-with-lb"], false)
}

// LBInStatelessMode reports whether release r's northd runs load balancer
// lb (UUID) of switch ls in the stateless-ACL-with-LB mode: the switch is
// in the mode (LBStatelessMode) and lb is one of its own load balancers
// or, from 26.09, of its load balancer groups' (lbWithStatelessMode). Its
// VIPs then get the priority-150 ls_in_pre_stateful flows.
func LBInStatelessMode(r *release.Release, s *nbschema.Snapshot, ls *nbdb.LogicalSwitch, lb string) bool {
	ru := newRules(r)
	if !lbStatelessMode(&ru, ls) {
		return false
	}
	return lbOfStatelessMode(&ru, s, ls, lb)
}

// lbOfStatelessMode is handle_od_lb_datapath_modes' choice for a switch in
// the mode: its own load balancers, and from 26.09 its groups'.
func lbOfStatelessMode(r *rules, s *nbschema.Snapshot, ls *nbdb.LogicalSwitch, lb string) bool {
	if slices.Contains(ls.LoadBalancer, lb) {
		return true
	}
	if !r.statelessLBGroups {
		return false
	}
	for _, id := range ls.LoadBalancerGroup {
		if grp, ok := s.LBGroups[id]; ok && slices.Contains(grp.LoadBalancer, lb) {
			return true
		}
	}
	return false
}
