package reach

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/aclc/aclc/pset"
)

// This file holds the comparison of two NBs' traffic, the engine of
// `aclc diff --traffic': for every ordered pair of ports present in both,
// the packets whose fate in the ACL stages differs.
//
// Both NBs' parts of a pair are computed over one pset.Manager per switch
// (Engine.ShareManager; its port domain the union of both NBs' ports of
// the switch), so that a part of A and a part of B can be intersected:
// every pair of parts with a different outcome and a packet in common is
// a Change, its witness a packet of the intersection. A switch or a pair
// whose outcome cannot differ is not executed at all (skip.go says when).

// Kind is what changed for a set of packets.
type Kind string

// The kinds of change.
const (
	// NewlyAllowed: dropped or rejected in A, allowed in B.
	NewlyAllowed Kind = "newly-allowed"
	// NewlyDenied: allowed in A, dropped or rejected in B.
	NewlyDenied Kind = "newly-denied"
	// DenialChanged: dropped in A, rejected in B, or the reverse.
	DenialChanged Kind = "denial-changed"
	// ConntrackChanged: allowed in both, but the conntrack handling
	// differs (committed or not, through conntrack or not): with a
	// stateful ACL the replies come back, with a stateless one they
	// need their own ACL.
	ConntrackChanged Kind = "conntrack"
	// Undecided: reach cannot execute the packets exactly in A or in B
	// (Change.Reason says why): their fate may or may not have changed.
	Undecided Kind = "not-exact"
)

// Change is a set of packets from one port to another whose treatment by
// the ACL stages differs between two NBs (or cannot be compared).
type Change struct {
	Switch, From, To string
	Kind             Kind
	// Before and After are the parts of A and of B that hold the packets;
	// nil on a side where the pair as a whole is not exact.
	Before, After *Part
	// Set holds the packets (as they enter the switch), a set of
	// Manager: the one both NBs' parts of the switch are in.
	Set     pset.Set
	Manager *pset.Manager
	// Witness is one packet of Set as an ovn-trace microflow;
	// Recirculations the conntrack recirculations a replay needs (the
	// larger of the two sides').
	Witness        string
	Recirculations int
	// Reason says why an Undecided change cannot be decided.
	Reason string
}

// Loosens reports whether the change lets through traffic that A did not:
// newly allowed packets, or allowed packets newly committed to conntrack
// (whose replies then come back without an ACL of their own).
func (c *Change) Loosens() bool {
	switch c.Kind {
	case NewlyAllowed:
		return true
	case ConntrackChanged:
		return c.After.Committed && !c.Before.Committed
	}
	return false
}

// Tightens reports whether the change stops traffic that A let through:
// newly denied packets, or allowed packets no longer committed to
// conntrack (whose replies now need an ACL of their own).
func (c *Change) Tightens() bool {
	switch c.Kind {
	case NewlyDenied:
		return true
	case ConntrackChanged:
		return c.Before.Committed && !c.After.Committed
	}
	return false
}

// Endpoint is a switch or a port present in only one of the two NBs: not
// compared.
type Endpoint struct {
	Switch string
	Port   string // "": the switch itself
	Added  bool   // only in B (else only in A)
}

// DiffStats counts what a Diff executed and what it skipped.
type DiffStats struct {
	// Switches are the switches in both NBs; SwitchesSkipped those whose
	// ACL-stage flows and other inputs are the same in both.
	Switches, SwitchesSkipped int
	// Pairs are the ordered port pairs of the compared switches;
	// PairsSkipped those no differing flow can match, PairsExecuted
	// those executed in both NBs (over the packets a differing flow can
	// take, skip.go).
	Pairs, PairsSkipped, PairsExecuted int
}

// Diff compares the traffic of two NBs of one OVN release.
type Diff struct {
	a, b *Engine
	// Progress, when set, is called after each switch with the number
	// of switches done and in all.
	Progress func(done, total int)
	// noSkip executes every pair (the tests check the skips so).
	noSkip bool
}

// NewDiff returns the comparison of a (before) and b (after). The NBs
// must be of the same OVN release (an *InputError otherwise): their
// flows are then those of one northd.
func NewDiff(a, b *Engine) (*Diff, error) {
	if ra, rb := a.snap.Release.Name(), b.snap.Release.Name(); ra != rb {
		return nil, inputErrorf("the NBs are of different OVN releases: %s and %s (give --ovn-version to read both as one)", ra, rb)
	}
	return &Diff{a: a, b: b}, nil
}

// Endpoints returns the switches and ports (by name) in only one of the
// NBs, switches first, in name order.
func (d *Diff) Endpoints() []Endpoint {
	pa, pb := d.a.Ports(), d.b.Ports()
	var out []Endpoint
	for _, sw := range sortedUnion(slices.Collect(maps.Keys(pa)), slices.Collect(maps.Keys(pb))) {
		_, inA := pa[sw]
		_, inB := pb[sw]
		if inA != inB {
			out = append(out, Endpoint{Switch: sw, Added: inB})
		}
	}
	for _, sw := range sortedUnion(slices.Collect(maps.Keys(pa)), slices.Collect(maps.Keys(pb))) {
		ports, other := pa[sw], pb[sw]
		if ports == nil || other == nil {
			continue
		}
		for _, p := range sortedUnion(ports, other) {
			inA, inB := slices.Contains(ports, p), slices.Contains(other, p)
			if inA != inB {
				out = append(out, Endpoint{Switch: sw, Port: p, Added: inB})
			}
		}
	}
	return out
}

// Run compares every ordered pair of distinct ports of every switch in
// both NBs and calls fn with each change, switch by switch in name
// order, pair by pair in port name order. The error is an *InputError
// when a switch name is not unique.
func (d *Diff) Run(fn func(*Change)) (DiffStats, error) {
	var st DiffStats
	ida, err := d.a.switchIDs()
	if err != nil {
		return st, err
	}
	idb, err := d.b.switchIDs()
	if err != nil {
		return st, err
	}
	var names []string
	for name := range ida {
		if idb[name] != "" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for i, name := range names {
		st.Switches++
		if err := d.runSwitch(name, ida[name], idb[name], &st, fn); err != nil {
			return st, err
		}
		if d.Progress != nil {
			d.Progress(i+1, len(names))
		}
	}
	return st, nil
}

// runSwitch compares the pairs of one switch (ida in A, idb in B).
func (d *Diff) runSwitch(name, ida, idb string, st *DiffStats, fn func(*Change)) error {
	ca, cb := d.a.switchInputs(ida), d.b.switchInputs(idb)
	portsA, portsB := d.a.portsOf(ida), d.b.portsOf(idb)
	var common []string
	for _, p := range portsA {
		if slices.Contains(portsB, p) {
			common = append(common, p)
		}
	}
	n := len(common) * (len(common) - 1)
	st.Pairs += n
	sameConfig := ca.config == cb.config
	diff := differingFlows(ca, cb)
	if !d.noSkip && sameConfig && len(diff) == 0 {
		st.SwitchesSkipped++
		st.PairsSkipped += n
		return nil
	}
	sp, err := pset.NewSpace(d.a.dialect, sortedUnion(portsA, portsB), "")
	if err != nil {
		return err
	}
	m := pset.NewManager(sp)
	if err := d.a.ShareManager(name, m); err != nil {
		return err
	}
	if err := d.b.ShareManager(name, m); err != nil {
		return err
	}
	sma, err := d.a.switchModel(ida, portsA)
	if err != nil {
		return err
	}
	smb, err := d.b.switchModel(idb, portsB)
	if err != nil {
		return err
	}
	shareFlows(sma, smb, diff)
	// The switch's sets are not needed after it: let them go.
	defer d.a.dropModel(ida, name)
	defer d.b.dropModel(idb, name)
	for _, from := range common {
		for _, to := range common {
			if from == to {
				continue
			}
			opt := Options{ExecuteAside: true}
			if sameConfig && !d.noSkip {
				// The packets from sends: a differing flow takes them
				// with outport none (ingress, before the L2 lookup) or
				// to (egress); as they enter, outport is none.
				pair, err := pairSet(m, from, to)
				if err != nil {
					return err
				}
				sa, wholeA := sma.differingSet(diff, pair)
				sb, wholeB := smb.differingSet(diff, pair)
				if !wholeA && !wholeB {
					w, err := m.AssignPort(m.Or(sa, sb), "outport", "")
					if err != nil {
						return err
					}
					if w == pset.Empty {
						st.PairsSkipped++
						continue
					}
					opt.Within, opt.Restricted = w, true
				}
			}
			st.PairsExecuted++
			if err := d.pair(sma, name, from, to, sameConfig, opt, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// pair executes one pair in both NBs (sm: A's model of the switch) and
// reports the changes.
func (d *Diff) pair(sm *swModel, sw, from, to string, sameConfig bool, opt Options, fn func(*Change)) error {
	m := sm.m
	ra, errA := d.a.Reach(from, to, opt)
	rb, errB := d.b.Reach(from, to, opt)
	var whyA, whyB string
	for _, x := range []struct {
		err error
		why *string
	}{{errA, &whyA}, {errB, &whyB}} {
		var ne *NotExactError
		switch {
		case errors.As(x.err, &ne):
			*x.why = ne.Reason
		case x.err != nil:
			return x.err
		}
	}
	if whyA != "" || whyB != "" {
		in, err := sm.entering(from)
		if err != nil {
			return err
		}
		if opt.Restricted {
			in = m.And(in, opt.Within)
		}
		c := &Change{Switch: sw, From: from, To: to, Kind: Undecided, Reason: sides(whyA, whyB), Set: in}
		d.witness(m, c)
		fn(c)
		return nil
	}
	// Undecided changes merge by reason: one per reason and pair.
	undecided := map[string]*Change{}
	var order []*Change
	for _, pa := range ra.Parts {
		for _, pb := range rb.Parts {
			s := m.And(pa.Set, pb.Set)
			if s == pset.Empty {
				continue
			}
			kind, why := compareParts(pa, pb, sameConfig)
			if kind == "" {
				continue
			}
			c := &Change{Switch: sw, From: from, To: to, Kind: kind, Before: pa, After: pb, Set: s, Reason: why}
			if kind == Undecided {
				if u := undecided[why]; u != nil {
					u.Set = m.Or(u.Set, s)
					u.Recirculations = max(u.Recirculations, pa.Recirculations, pb.Recirculations)
					continue
				}
				undecided[why] = c
			}
			order = append(order, c)
		}
	}
	for _, c := range order {
		if c.Kind == Undecided {
			c.Before, c.After = nil, nil // the packets may span several parts
		}
		d.witness(m, c)
		fn(c)
	}
	return nil
}

// witness fills c's witness from its set.
func (d *Diff) witness(m *pset.Manager, c *Change) {
	c.Manager = m
	w, _ := m.Witness(c.Set)
	c.Witness = w.String()
	if c.Before != nil && c.After != nil {
		c.Recirculations = max(c.Recirculations, c.Before.Recirculations, c.After.Recirculations)
	}
}

// compareParts returns how the packets of both a (in A) and b (in B)
// changed: "" when they did not; Undecided, with the reason, when one
// side is not exact. sameConfig says whether the switch's inputs other
// than its ACL-stage flows (ports and their addresses, DNS records, load
// balancers) are the same in both NBs: then packets set aside (ARP/ND,
// DNS) whose ACL-stage outcome is the same have the same fate.
func compareParts(a, b *Part, sameConfig bool) (Kind, string) {
	if a.Verdict == NotExact || b.Verdict == NotExact {
		var wa, wb string
		if a.Verdict == NotExact {
			wa = a.Reason
		}
		if b.Verdict == NotExact {
			wb = b.Reason
		}
		return Undecided, sides(wa, wb)
	}
	changed := a.Verdict != b.Verdict || a.Verdict == Allow && (a.Conntrack != b.Conntrack || a.Committed != b.Committed)
	if a.Aside != "" || b.Aside != "" {
		why := cmp.Or(a.Aside, b.Aside)
		switch {
		case !sameConfig:
			return Undecided, why + "; the switch's ports, addresses, DNS records or load balancers differ between the NBs"
		case changed:
			return Undecided, fmt.Sprintf("%s; the ACL stages %s them before and %s them after", why, a.outcome(), b.outcome())
		}
		return "", ""
	}
	switch {
	case !changed:
		return "", ""
	case a.Verdict == Allow:
		if b.Verdict == Allow {
			return ConntrackChanged, ""
		}
		return NewlyDenied, ""
	case b.Verdict == Allow:
		return NewlyAllowed, ""
	}
	return DenialChanged, ""
}

// outcome says what happens to a part's packets, for a reason.
func (p *Part) outcome() string {
	s := string(p.Verdict)
	if p.Verdict == Allow {
		s += " (" + p.Stateful() + ")"
	}
	return s
}

// Stateful names the conntrack handling of allowed packets: "stateful"
// (committed: replies come back), "conntrack, not committed" or
// "stateless".
func (p *Part) Stateful() string {
	switch {
	case p.Committed:
		return "stateful"
	case p.Conntrack:
		return "conntrack, not committed"
	}
	return "stateless"
}

// sides joins the reasons of the two sides.
func sides(a, b string) string {
	switch {
	case a == b:
		return a
	case a == "":
		return "after: " + b
	case b == "":
		return "before: " + a
	}
	return "before: " + a + "; after: " + b
}

// switchIDs returns the switch UUIDs by name.
func (e *Engine) switchIDs() (map[string]string, error) {
	out := map[string]string{}
	for id, ls := range e.snap.Switches {
		if other, dup := out[ls.Name]; dup {
			return nil, inputErrorf("switch name %q names two switches (%s and %s): switches are compared by name", ls.Name, min(id, other), max(id, other))
		}
		out[ls.Name] = id
	}
	return out, nil
}

// portsOf returns the names of the ports of switch id, in name order.
func (e *Engine) portsOf(id string) []string {
	var ports []string
	for _, p := range e.view.Ports(e.view.SwitchFlags(id)) {
		ports = append(ports, p.Name)
	}
	slices.Sort(ports)
	return ports
}

// sortedUnion returns the distinct strings of a and b in order.
func sortedUnion(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// dropModel forgets the model and shared Manager of switch id (name).
func (e *Engine) dropModel(id, name string) {
	delete(e.models, id)
	delete(e.shared, name)
}

// pairSet is the packets from sends to to as the ACL-stage flows see
// them: inport from, outport none (ingress, before the L2 lookup) or to
// (egress).
func pairSet(m *pset.Manager, from, to string) (pset.Set, error) {
	in, err := m.PortIs("inport", from)
	if err != nil {
		return pset.Empty, err
	}
	none, err := m.PortIs("outport", "")
	if err != nil {
		return pset.Empty, err
	}
	out, err := m.PortIs("outport", to)
	if err != nil {
		return pset.Empty, err
	}
	return m.And(in, m.Or(none, out)), nil
}
