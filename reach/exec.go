package reach

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/pset"
)

// This file holds the symbolic walk: tables in pipeline order, flows by
// descending priority, actions on sets.

// exec is the state of one Reach.
type exec struct {
	*swModel
	e     *Engine
	opt   Options
	to    string // the port the L2 lookup outputs to
	parts map[key]*Part
	order []key
	steps int
	// outDeny are the packets to's port security drops at egress
	// (nbview.PortSecurityMatch; Empty without port security).
	outDeny pset.Set
}

type tableKey struct {
	p     lflow.Pipeline
	table int
}

// table is one ACL-stage table of the switch, flows in lookup order.
type table struct{ flows []*flow }

// flow is one compiled flow with its match set (its actions'
// prerequisites included) and parsed actions, made on first use.
type flow struct {
	f      lflow.Flow
	done   bool
	set    pset.Set
	acts   []action
	always bool   // match "1" without prerequisites: a stage's default
	err    string // why its match or actions cannot be used exactly
	// twin, when set, is the same flow (same text, same sets named) in
	// another NB's model over the same Manager (Diff): its set and
	// actions are this flow's, converted once for both.
	twin      *flow
	twinModel *swModel
}

// state is a set of packets on one path: where they are and what
// happened to them.
type state struct {
	set        pset.Set
	pipe       lflow.Pipeline
	table      int
	ct, commit bool
	recirc     int
	// dec are the deciding ACLs so far, per pipeline.
	dec [2]string
	// aside says why the packets' fate after the ACL stages is not known
	// (Options.ExecuteAside).
	aside string
}

// maxSteps bounds the tables one Reach visits (next(N) may jump back).
const maxSteps = 100000

func (x *swModel) prepare(fl *flow) {
	if fl.done {
		return
	}
	fl.done = true
	if t := fl.twin; t != nil {
		fl.twinModel.prepare(t)
		fl.set, fl.acts, fl.always, fl.err = t.set, t.acts, t.always, t.err
		return
	}
	acts, pre, err := parseActions(fl.f.Actions)
	if err != nil {
		fl.err = "actions do not parse: " + err.Error()
		return
	}
	fl.acts = acts
	fl.always = fl.f.Match == "1" && len(pre) == 0
	text := fl.f.Match
	for _, p := range pre {
		text = "(" + text + ") && " + p
	}
	s, err := x.conv.Match(text)
	if err != nil {
		fl.err = fmt.Sprintf("match=(%s): %v", fl.f.Match, err)
		return
	}
	fl.set = s
}

// end records the packets of st as a part with verdict v.
func (x *exec) end(st *state, v Verdict, stage, why string) {
	if st.set == pset.Empty {
		return
	}
	p := &Part{Verdict: v, Conntrack: st.ct, Committed: st.commit, Recirculations: st.recirc, Stage: stage, Reason: why, Aside: st.aside}
	if v != NotExact {
		p.Ingress = orDefault(st.dec[lflow.Ingress])
		if st.pipe == lflow.Egress {
			p.Egress = orDefault(st.dec[lflow.Egress])
		}
	}
	k := p.key()
	s := x.initial(st.set)
	if q := x.parts[k]; q != nil {
		q.Set = x.m.Or(q.Set, s)
		return
	}
	p.Set = s
	x.parts[k] = p
	x.order = append(x.order, k)
}

// orDefault returns acl, or Default when no ACL decided.
func orDefault(acl string) string {
	if acl == "" {
		return Default
	}
	return acl
}

// run walks st's packets from its table on.
func (x *exec) run(st *state) {
	l := x.e.layout
	for st.set != pset.Empty {
		if x.steps++; x.steps > maxSteps {
			x.end(st, NotExact, "", fmt.Sprintf("more than %d tables visited", maxSteps))
			return
		}
		sg, ok := l.StageAt(st.pipe, st.table)
		if !ok {
			x.end(st, Drop, "", "")
			return
		}
		switch sg.Kind() {
		case lflow.InL2Lkup:
			// The L2 lookup sets outport to to (the package comment):
			// output, to egress with the registers cleared.
			s, err := x.m.AssignPort(st.set, "outport", x.to)
			if err != nil {
				x.end(st, NotExact, sg.Name(), err.Error())
				return
			}
			st.set = s
			for _, name := range egressCleared {
				st.set = x.m.Assign(st.set, x.meta[name], new(big.Int))
			}
			st.pipe, st.table = lflow.Egress, 0
			continue
		case lflow.OutApplyPortSec:
			if d := x.m.And(st.set, x.outDeny); d != pset.Empty {
				c := *st
				c.set = d
				c.dec[lflow.Egress] = "" // port security decides, not the ACLs
				x.end(&c, Drop, sg.Name(), "")
				st.set = x.m.Diff(st.set, d)
			}
			x.end(st, Allow, sg.Name(), "")
			return
		}
		t := x.tables[tableKey{st.pipe, st.table}]
		if t == nil {
			if sg.IsACLStage() {
				x.end(st, Drop, sg.Name(), "") // no flow: no match (implicit drop)
				return
			}
			st.table++ // not compiled: the packet passes through
			continue
		}
		x.table(st, sg, t)
		return
	}
}

// table splits st's packets among the flows of t and runs each flow's
// actions on its share.
func (x *exec) table(st *state, sg lflow.Stage, t *table) {
	rem := st.set
	for i := 0; i < len(t.flows) && rem != pset.Empty; {
		j := i
		for j < len(t.flows) && t.flows[j].f.Priority == t.flows[i].f.Priority {
			j++
		}
		group := t.flows[i:j]
		i = j
		for _, fl := range group {
			x.prepare(fl)
			if fl.err != "" {
				x.end(&state{set: rem}, NotExact, sg.Name(), fl.err)
				return
			}
		}
		// Overlaps of flows with different actions: undefined in OVN.
		for a := range group {
			for b := a + 1; b < len(group); b++ {
				if group[a].f.Actions == group[b].f.Actions {
					continue
				}
				if o := x.m.And(rem, x.m.And(group[a].set, group[b].set)); o != pset.Empty {
					x.end(&state{set: o}, NotExact, sg.Name(), fmt.Sprintf("flows match=(%s) and match=(%s) overlap at priority %d with different actions; OVN's choice is undefined", group[a].f.Match, group[b].f.Match, group[a].f.Priority))
					rem = x.m.Diff(rem, o)
				}
			}
		}
		for _, fl := range group {
			take := x.m.And(rem, fl.set)
			if take == pset.Empty {
				continue
			}
			rem = x.m.Diff(rem, take)
			c := *st
			c.set = take
			if _, acl := x.e.snap.ACLs[fl.f.Source]; isEval(sg) && acl {
				// (an eval-stage flow of another NB row, e.g. DHCP
				// options' replies, decides as the stage's default)
				c.dec[st.pipe] = fl.f.Source
			}
			x.actions(&c, sg, fl)
		}
	}
	if rem != pset.Empty {
		c := *st
		c.set = rem
		if !isEval(sg) && !isAction(sg) {
			c.dec[st.pipe] = ""
		}
		x.end(&c, Drop, sg.Name(), "") // no match (implicit drop)
	}
}

func isEval(sg lflow.Stage) bool {
	switch sg.Kind() {
	case lflow.InACL, lflow.InACLAfterLB, lflow.OutACL:
		return true
	}
	return false
}

// actions executes fl's actions on st's packets (all of which match fl).
func (x *exec) actions(st *state, sg lflow.Stage, fl *flow) {
	notExact := func(a action, why string) {
		x.end(st, NotExact, sg.Name(), fmt.Sprintf("%s %s: %s", sg.Name(), a.text, why))
	}
	for _, a := range fl.acts {
		switch a.kind {
		case aNoop:
		case aDrop:
			x.dropBy(st, sg, fl)
			x.end(st, Drop, sg.Name(), "")
			return
		case aNext:
			if a.hasPipe && a.pipe != st.pipe {
				notExact(a, "a jump to the other pipeline")
				return
			}
			if a.table >= 0 {
				st.table = a.table
			} else {
				st.table++
			}
			x.run(st)
			return
		case aLoad, aMove:
			if err := x.assign(st, a); err != nil {
				notExact(a, err.Error())
				return
			}
		case aReject:
			x.dropBy(st, sg, fl)
			x.reject(st, sg)
			return
		case aCTNext, aCTLB, aCTCommitNAT:
			if st.recirc++; st.recirc > x.opt.MaxRecirculations {
				notExact(a, fmt.Sprintf("more than %d recirculations", x.opt.MaxRecirculations))
				return
			}
			ctb := x.meta["ct_state"]
			switch a.kind {
			case aCTNext:
				st.set = x.m.Assign(st.set, ctb, new(big.Int).SetUint64(uint64(x.opt.CT)))
			case aCTLB:
				// ct_lb_mark ORs the state in for IPv4 and IPv6 (its
				// prerequisite: every packet here is one)
				st.set = x.orCT(st.set)
			case aCTCommitNAT:
				st.commit = true
				trk := x.bit(ctb, 5)
				st.set = x.m.Or(x.m.And(st.set, trk), x.orCT(x.m.Diff(st.set, trk)))
			}
			st.ct = true
			st.table++
			x.run(st)
			return
		case aCTCommit:
			st.commit = true
		case aCTClear:
			for _, n := range []string{"ct_state", "ct_mark", "ct_label"} {
				if b, ok := x.meta[n]; ok {
					st.set = x.m.Assign(st.set, b, new(big.Int))
				}
			}
		default:
			notExact(a, "an action reach does not execute")
			return
		}
	}
	// The actions did not pass the packet on.
	x.dropBy(st, sg, fl)
	x.end(st, Drop, sg.Name(), "")
}

// dropBy records who decides a drop or reject by fl: in an ACL eval or
// action stage, the eval stage's ACL (an action stage carries out the
// verdict its eval flow set); elsewhere the flow itself, Default unless
// an ACL's.
func (x *exec) dropBy(st *state, sg lflow.Stage, fl *flow) {
	if isEval(sg) || isAction(sg) {
		return
	}
	st.dec[st.pipe] = ""
	if _, acl := x.e.snap.ACLs[fl.f.Source]; acl {
		st.dec[st.pipe] = fl.f.Source
	}
}

func isAction(sg lflow.Stage) bool {
	switch sg.Kind() {
	case lflow.InACLAction, lflow.InACLAfterLBAction, lflow.OutACLAction:
		return true
	}
	return false
}

// bit returns the set where bit i of b is 1.
func (x *exec) bit(b pset.Bits, i int) pset.Set {
	one, _ := x.m.Space().FieldBits(fmt.Sprintf("%s[%d]", b.Root(), b.Ofs+i))
	return x.m.Value(one, big.NewInt(1))
}

// orCT sets the bits of the recirculation's ct_state in s.
func (x *exec) orCT(s pset.Set) pset.Set {
	ctb := x.meta["ct_state"]
	for i := 0; i < 32; i++ {
		if x.opt.CT>>uint(i)&1 == 1 {
			b, _ := x.m.Space().FieldBits(fmt.Sprintf("%s[%d]", ctb.Root(), ctb.Ofs+i))
			s = x.m.Assign(s, b, big.NewInt(1))
		}
	}
	return s
}

// errHeader is the error of a write to a field that is not metadata.
var errHeader = errors.New("writes a packet field, not metadata: the entering packets would not be the final ones' header")

// assign executes a load or a move.
func (x *exec) assign(st *state, a action) error {
	if w := word(a.lhs); w == "inport" || w == "outport" {
		return errors.New("sends the packet to another port (a network-function redirect), which reach does not follow")
	}
	dst, err := x.m.Space().FieldBits(a.lhs)
	if err != nil {
		return err
	}
	if _, ok := x.meta[dst.Root()]; !ok {
		return errHeader
	}
	if src, err := x.m.Space().FieldBits(a.rhs); err == nil {
		s, err := x.m.Copy(st.set, dst, src)
		if err != nil {
			return err
		}
		st.set = s
		return nil
	}
	// A constant: the set where the bits equal it, as a match states it.
	eq, err := x.conv.Match(a.lhs + " == " + a.rhs)
	if err != nil {
		return err
	}
	st.set = x.m.And(x.m.Exists(st.set, dst), eq)
	return nil
}

// reject ends st's packets as ovn-trace's execute_reject does: a reply is
// generated (reject), except for a packet that is itself a reject's reply
// (a TCP RST for tcp_reset and sctp_abort, an ICMP unreachable), which is
// dropped.
func (x *exec) reject(st *state, sg lflow.Stage) {
	// ovn-trace reads the raw fields (OVS's tp_src, tcp_flags): so do
	// these sets, without prerequisites.
	raw := func(field string, v uint64) pset.Set {
		b, err := x.m.Space().FieldBits(field)
		if err != nil {
			panic("reach: the space has no field " + field)
		}
		return x.m.Value(b, new(big.Int).SetUint64(v))
	}
	tcpLike := x.m.Or(raw("ip.proto", 6), raw("ip.proto", 132))
	ip6 := raw("eth.type", 0x86dd)
	guard := x.m.OrAll([]pset.Set{
		x.m.And(tcpLike, raw("tcp.flags", 0x004)),
		x.m.AndAll([]pset.Set{x.m.Not(tcpLike), x.m.Not(ip6), raw("ip.proto", 1), raw("icmp4.type", 3)}),
		x.m.AndAll([]pset.Set{x.m.Not(tcpLike), ip6, raw("ip.proto", 58), raw("icmp6.type", 1)}),
	})
	d := *st
	d.set = x.m.And(st.set, guard)
	x.end(&d, Drop, sg.Name(), "")
	st.set = x.m.Diff(st.set, guard)
	x.end(st, Reject, sg.Name(), "")
}
