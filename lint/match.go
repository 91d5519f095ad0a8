package lint

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/nbview"
)

// This file holds the match rules: matches OVN rejects (invalid-match,
// dangling-ref) and the accepted-but-dubious forms acl/expr warns about.

// globalFindings reports what does not depend on a switch: matches that do
// not parse whatever the references resolve to, and references to address
// sets that do not exist.
func (l *linter) globalFindings() []Finding {
	var out []Finding
	for _, a := range l.acls {
		if a.syntax != nil {
			f := Finding{Rule: RuleInvalidMatch, Severity: Error, ACLs: []ACLRef{a.ref},
				Message: "OVN cannot parse the match: " + errMsg(a.syntax) + "; northd copies it and every hypervisor rejects the flow, so the ACL does nothing",
				Fix:     "correct the match (try it with `aclc match check`)"}
			if strings.TrimSpace(a.acl.Match) == "" {
				f.Message = "the match is empty; northd copies it and every hypervisor rejects the flow, so the ACL does nothing"
				f.Fix = "give the ACL a match (use \"1\" to match everything)"
			}
			var pe *expr.Error
			if errors.As(a.syntax, &pe) {
				f.Offset = intp(pe.Offset)
			}
			out = append(out, f)
			continue
		}
		for _, name := range a.asRefs {
			if l.nb.CheckAddressSet(name) == nbview.RefOK {
				continue
			}
			out = append(out, Finding{Rule: RuleDanglingRef, Severity: Error, ACLs: []ACLRef{a.ref},
				Message: fmt.Sprintf("address set $%s does not exist; every hypervisor rejects the flow, so the ACL does nothing", name),
				Fix:     fmt.Sprintf("create Address_Set %s or remove the reference", name),
				Offset:  a.refOffset('$', name)})
		}
	}
	return out
}

// errMsg is the message of a parse error without its offset prefix.
func errMsg(err error) string {
	var pe *expr.Error
	if errors.As(err, &pe) {
		return strings.TrimSuffix(pe.Msg, ".")
	}
	return strings.TrimSuffix(err.Error(), ".")
}

// refOffset is the offset of the first sigil+name reference in a's match.
func (a *aclInfo) refOffset(sigil byte, name string) *int {
	names, pos := a.asRefs, a.asPos
	if sigil == '@' {
		names, pos = a.pgRefs, a.pgPos
	}
	if i := slices.Index(names, name); i >= 0 {
		return intp(pos[i])
	}
	return nil
}

// addressSetsOK reports whether every address set a references exists
// (NB-wide: answered once per ACL, not on each switch that sees it).
func (l *linter) addressSetsOK(a *aclInfo) bool {
	switch l.asOK[a.idx].Load() {
	case 1:
		return true
	case 2:
		return false
	}
	ok := true
	for _, name := range a.asRefs {
		if l.nb.CheckAddressSet(name) != nbview.RefOK {
			ok = false
			break
		}
	}
	st := int32(2)
	if ok {
		st = 1
	}
	l.asOK[a.idx].Store(st)
	return ok
}

// matchFindings checks one ACL's match on the switch and sets in.e when it
// parses there.
func (l *linter) matchFindings(v *swView, in *inst) []Finding {
	a := in.a
	if a.syntax != nil {
		return nil
	}
	var out []Finding
	if !l.addressSetsOK(a) {
		return nil // reported NB-wide
	}
	for _, name := range a.pgRefs {
		if _, ok := v.res.PortGroups[name]; ok {
			continue // nbview's port groups of the switch: CheckPortGroup's RefOK, one lookup
		}
		var msg, fix string
		switch l.nb.CheckPortGroup(v.id, name) {
		case nbview.RefOK:
			continue
		case nbview.PortGroupNotOnSwitch:
			msg = fmt.Sprintf("port group @%s has no ports on this switch, where OVN does not define it; ovn-controller rejects the flow there", name)
			fix = fmt.Sprintf("add a port of this switch to %s, use $%s_ip4/$%s_ip6 for its addresses, or move the ACL to a port group that lives only where %s does", name, name, name, name)
		default:
			msg = fmt.Sprintf("port group @%s does not exist; ovn-controller rejects the flow, so the ACL does nothing", name)
			fix = fmt.Sprintf("create Port_Group %s or remove the reference", name)
		}
		out = append(out, Finding{Rule: RuleDanglingRef, Severity: Error, ACLs: []ACLRef{a.ref},
			Message: msg, Fix: fix, Offset: a.refOffset('@', name)})
	}
	if len(out) > 0 {
		return out
	}
	e, err := l.parse(v, a)
	if err != nil {
		return []Finding{{Rule: RuleInvalidMatch, Severity: Error, ACLs: []ACLRef{a.ref},
			Message: "OVN cannot parse the match on this switch: " + errMsg(err),
			Fix:     "correct the match (try it with `aclc match check --datapath`)", Offset: errOffset(err)}}
	}
	if !in.shared {
		in.e = e
	}
	for _, w := range e.Warnings {
		f := Finding{ACLs: []ACLRef{a.ref}, Message: w.Msg, Offset: intp(w.Pos)}
		switch w.Kind {
		case expr.HostBits:
			f.Rule, f.Severity = RuleHostBits, Warning
			f.Message += " (23.03.1, 25.03.0 and 26.03.1 all accept the constant and clear them: the ACL matches the whole network)"
			f.Fix = "clear the host bits (write the network address, e.g. 10.0.0.0/24) or drop the mask"
		case expr.MissingPrereq:
			f.Rule, f.Severity = RuleMissingPrereq, Info
			f.Fix = "state the protocol explicitly (e.g. `tcp && tcp.dst == 80`) so the match reads as it behaves"
		case expr.Contradiction:
			f.Rule, f.Severity = RuleContradiction, Warning
			f.Fix = "remove the contradictory term or split the ACL (e.g. one ACL for tcp, one for udp)"
		case expr.SliceOverflow:
			f.Rule, f.Severity = RuleSliceOverflow, Warning
			f.Fix = "use a constant that fits the selected bits"
		case expr.NegatedMultibit:
			f.Rule, f.Severity = RuleNegatedMultibit, Warning
			f.Fix = "write the comparison explicitly (field == 0)"
		case expr.EmptySet:
			f.Rule, f.Severity = RuleEmptySet, Warning
			f.Fix = "fill the address set or port group, or remove the ACL if it is obsolete"
		default:
			f.Rule, f.Severity = string(w.Kind), Warning
			f.Fix = "check the match"
		}
		out = append(out, f)
	}
	return out
}

func errOffset(err error) *int {
	var pe *expr.Error
	if errors.As(err, &pe) {
		return intp(pe.Offset)
	}
	return nil
}
