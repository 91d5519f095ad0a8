package reach

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/pset"
)

// This file says which packets a Diff must execute: only those whose
// outcome may differ between the two NBs.
//
// A packet's path is a function of (1) the switch's inputs reach reads
// besides the flows (load balancers, the tier contest, DNS records, the
// ports' type, addresses, options, port security, enabled flag and
// mirrors) and (2) the ACL-stage flows it meets: at each table, the
// highest-priority flow whose set holds it. Header fields are never
// written on an exact path (a write to one is not exact), so a flow whose
// set, metadata forgotten, does not hold a packet's header takes that
// packet at no point, whatever the registers hold. A flow differs between
// A and B when its text (stage, priority, match, actions) is in one and
// not the other (counted as a multiset), or when it names an address set
// or port group whose contents differ. When the switch's inputs are the
// same, a packet that no differing flow of A or B can take meets the same
// flows in both, in the same order, so its outcome is the same: not
// executed. So:
//
//   - a switch with the same inputs and no differing flow is skipped
//     whole, without converting a match;
//   - otherwise, when its inputs are the same, each pair is executed only
//     over the packets a differing flow can take (Options.Within: the
//     union of the differing flows' sets cut to the pair, metadata
//     forgotten), and skipped when there are none; a differing flow whose
//     match cannot be converted makes the pair executed whole.
//
// Only the switches where an ACL change shows in the flows, and there
// only the traffic the changed flows can match, are executed.

// switchInputs are a switch's inputs in one NB.
type switchInputs struct {
	config string
	flows  map[string]int    // the ACL-stage flows by flowKey, counted
	refs   map[string]string // the contents of each set the flows name
}

// flowKey is a flow's text without its NB source.
func flowKey(f lflow.Flow) string {
	return fmt.Sprintf("%s %d (%s) {%s}", f.Stage.Name(), f.Priority, f.Match, f.Actions)
}

// reRef finds the address set and port group names a match may name.
var reRef = regexp.MustCompile(`[$@][A-Za-z_][A-Za-z0-9_.]*`)

// switchInputs returns the inputs of switch id.
func (e *Engine) switchInputs(id string) switchInputs {
	sw := e.view.SwitchFlags(id)
	var b strings.Builder
	fmt.Fprintf(&b, "unmodelled %q; other_config %v\n", e.unmodelled(sw), sw.LS.OtherConfig)
	for _, d := range sw.LS.DNSRecords {
		if dns := e.snap.DNS[d]; dns != nil {
			fmt.Fprintf(&b, "dns %v\n", dns.Records)
		}
	}
	ports := slices.Clone(e.view.Ports(sw))
	slices.SortFunc(ports, func(a, b *nbdb.LogicalSwitchPort) int { return cmp.Compare(a.Name, b.Name) })
	for _, p := range ports {
		fmt.Fprintf(&b, "port %q type %q addresses %q dynamic %v enabled %v options %v port_security %q tag %v parent %v mirrors %d\n",
			p.Name, p.Type, p.Addresses, deref(p.DynamicAddresses), deref(p.Enabled), p.Options, p.PortSecurity, deref(p.Tag), deref(p.ParentName),
			len(e.view.LportMirrors(sw.LS, p)))
	}
	in := switchInputs{config: b.String(), flows: map[string]int{}, refs: map[string]string{}}
	res, err := e.view.Resolver(id)
	r := svcMonitor{Resolver: res, mac: e.snap.GlobalOption("svc_monitor_mac")}
	for _, d := range e.flows.Datapaths {
		if d.UUID != id {
			continue
		}
		for _, f := range d.Flows {
			if !f.Stage.IsACLStage() {
				continue
			}
			k := flowKey(f)
			in.flows[k]++
			for _, name := range reRef.FindAllString(k, -1) {
				if _, done := in.refs[name]; done {
					continue
				}
				var members []string
				var ok bool
				switch {
				case err != nil:
				case name[0] == '$':
					members, ok = r.AddressSet(name[1:])
				default:
					members, ok = r.PortGroup(name[1:])
				}
				in.refs[name] = fmt.Sprintf("%v %q", ok, slices.Sorted(slices.Values(members)))
			}
		}
	}
	return in
}

// differingFlows returns the keys of the flows that differ between a
// and b: in one more often than in the other, or naming a set whose
// contents differ.
func differingFlows(a, b switchInputs) map[string]bool {
	changed := map[string]bool{}
	for name, v := range a.refs {
		if w, ok := b.refs[name]; ok && w != v {
			changed[name] = true
		}
	}
	out := map[string]bool{}
	for _, m := range []map[string]int{a.flows, b.flows} {
		for k := range m {
			if a.flows[k] != b.flows[k] {
				out[k] = true
				continue
			}
			for _, name := range reRef.FindAllString(k, -1) {
				if changed[name] {
					out[k] = true
				}
			}
		}
	}
	return out
}

// differingSet returns the packets from from to to (pair: their set) that
// a differing flow of x can take, as they enter the switch (metadata
// zero); whole when a differing flow cannot be converted (every packet
// must then be executed).
func (x *swModel) differingSet(diff map[string]bool, pair pset.Set) (s pset.Set, whole bool) {
	for _, t := range x.tables {
		for _, fl := range t.flows {
			if !diff[flowKey(fl.f)] {
				continue
			}
			x.prepare(fl)
			if fl.err != "" {
				return pset.Empty, true
			}
			s = x.m.Or(s, x.initial(x.m.And(fl.set, pair)))
		}
	}
	return s, false
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// shareFlows makes each flow of b that does not differ (not in diff) the
// twin of the flow of a with the same text: the same set in the shared
// Manager, converted once.
func shareFlows(a, b *swModel, diff map[string]bool) {
	byKey := map[string]*flow{}
	for _, t := range a.tables {
		for _, fl := range t.flows {
			if k := flowKey(fl.f); !diff[k] {
				byKey[k] = fl
			}
		}
	}
	for _, t := range b.tables {
		for _, fl := range t.flows {
			if tw := byKey[flowKey(fl.f)]; tw != nil && !fl.done {
				fl.twin, fl.twinModel = tw, a
			}
		}
	}
}
