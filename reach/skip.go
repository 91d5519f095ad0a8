package reach

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/pset"
)

// This file says when a Diff need not execute a switch or a pair: when
// the outcome of every packet is provably the same in both NBs.
//
// A pair's outcome is a function of (1) the switch's inputs reach reads
// besides the flows (load balancers, the tier contest, DNS records, the
// ports' type, addresses, options, port security, enabled flag and
// mirrors), (2) the ACL-stage flows of the switch that can take one of
// the pair's packets, and (3) the sets their matches name. inport and
// outport are never written on an exact path (a write to them is not
// exact), so a flow whose match set has no packet with inport == from and
// outport == to takes none of the pair's packets at any point: only the
// flows whose match set meets the pair's count, with their set cut to the
// pair. So:
//
//   - a switch whose inputs, ACL-stage flows (stage, priority, match,
//     actions) and the contents of every address set and port group they
//     name are the same in A and B is skipped whole, without converting
//     a match;
//   - otherwise, when its inputs are the same, a pair is skipped when the
//     flows meeting it are the same in both: same stage, priority and
//     actions, and the same set (one Manager: the same node) cut to the
//     pair — a flow whose match cannot be converted counts with its text.
//
// Only the switches where an ACL change shows in the flows, and there
// only the pairs the changed flows can match, are executed.

// switchInputs are a switch's inputs in one NB, as text to compare.
type switchInputs struct {
	config, flows, refs string
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
	ports := e.view.Ports(sw)
	slices.SortFunc(ports, func(a, b *nbdb.LogicalSwitchPort) int { return cmp.Compare(a.Name, b.Name) })
	for _, p := range ports {
		fmt.Fprintf(&b, "port %q type %q addresses %q dynamic %v enabled %v options %v port_security %q tag %v parent %v mirrors %d\n",
			p.Name, p.Type, p.Addresses, deref(p.DynamicAddresses), deref(p.Enabled), p.Options, p.PortSecurity, deref(p.Tag), deref(p.ParentName),
			len(e.view.LportMirrors(sw.LS, p)))
	}
	in := switchInputs{config: b.String()}
	var flows []string
	refs := map[string]bool{}
	for _, d := range e.flows.Datapaths {
		if d.UUID != id {
			continue
		}
		for _, f := range d.Flows {
			if !f.Stage.IsACLStage() {
				continue
			}
			flows = append(flows, fmt.Sprintf("%s %d (%s) {%s}", f.Stage.Name(), f.Priority, f.Match, f.Actions))
			for _, r := range reRef.FindAllString(f.Match+" "+f.Actions, -1) {
				refs[r] = true
			}
		}
	}
	slices.Sort(flows)
	in.flows = strings.Join(flows, "\n")
	res, err := e.view.Resolver(id)
	if err != nil {
		in.refs = err.Error()
		return in
	}
	r := svcMonitor{Resolver: res, mac: e.snap.GlobalOption("svc_monitor_mac")}
	var rb strings.Builder
	for _, name := range slices.Sorted(maps.Keys(refs)) {
		var members []string
		var ok bool
		if name[0] == '$' {
			members, ok = r.AddressSet(name[1:])
		} else {
			members, ok = r.PortGroup(name[1:])
		}
		members = slices.Sorted(slices.Values(members))
		fmt.Fprintf(&rb, "%s %v %q\n", name, ok, members)
	}
	in.refs = rb.String()
	return in
}

// sigEntry is one flow that can take a pair's packets.
type sigEntry struct {
	pipe     lflow.Pipeline
	table    int
	priority int
	actions  string
	set      pset.Set // the flow's set cut to the pair
	err      string   // with the match, when the flow cannot be converted
}

func compareSig(a, b sigEntry) int {
	return cmp.Or(cmp.Compare(a.pipe, b.pipe), cmp.Compare(a.table, b.table), cmp.Compare(b.priority, a.priority),
		cmp.Compare(a.actions, b.actions), cmp.Compare(a.set, b.set), cmp.Compare(a.err, b.err))
}

// pairFlows returns the flows of sm that can take packets from from to
// to, in a canonical order.
func (x *swModel) pairFlows(from, to string) ([]sigEntry, error) {
	pair, err := x.conv.Match(fmt.Sprintf("inport == %q && outport == %q", from, to))
	if err != nil {
		return nil, err
	}
	var out []sigEntry
	for k, t := range x.tables {
		for _, fl := range t.flows {
			x.prepare(fl)
			e := sigEntry{pipe: k.p, table: k.table, priority: fl.f.Priority, actions: fl.f.Actions}
			if fl.err != "" {
				e.err = fl.f.Match + ": " + fl.err
			} else if e.set = x.m.And(fl.set, pair); e.set == pset.Empty {
				continue
			}
			out = append(out, e)
		}
	}
	slices.SortFunc(out, compareSig)
	return out, nil
}

// samePairFlows reports whether the flows that can take the pair's
// packets are the same in a and b (models over one Manager).
func samePairFlows(a, b *swModel, from, to string) (bool, error) {
	fa, err := a.pairFlows(from, to)
	if err != nil {
		return false, err
	}
	fb, err := b.pairFlows(from, to)
	if err != nil {
		return false, err
	}
	return slices.Equal(fa, fb), nil
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
