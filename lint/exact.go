package lint

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/aclc/aclc/pset"
)

// This file decides exactly, with package pset's packet sets, what the
// cube bounds of sets.go leave open: whether two ACLs of one priority
// overlap, whether an ACL is shadowed, and which ACLs decide its packets
// first. The cubes stay the fast path — most questions on a large NB are
// decided by them — and a switch builds its exact sets only when one is
// asked for, converting only the ACLs involved (each match text once per
// switch). What pset cannot state exactly (is_chassis_resident, which
// depends on the chassis) stays undecided, and the finding names the
// construct and the ACL whose match has it.

// exactSets is one switch's exact packet sets: a pset Manager whose port
// domain is the switch's ports, and the sets of the matches converted so
// far. Safe for concurrent use (a class's shadowing proofs run in
// parallel).
type exactSets struct {
	mu  sync.Mutex
	m   *pset.Manager
	cv  *pset.Converter
	dom pset.Set // inport and outport are ports of the switch
	err error    // the space could not be built: every set is this error
	// texts caches the sets of match texts: on one switch a text's set
	// does not depend on which ACL has it (references resolve through
	// the switch's resolver, not the parse's).
	texts map[string]exactSet
	// decided caches the sets of the instances that stand for what an
	// earlier tier's ACL decides (tiers.go).
	decided map[*inst]exactSet
}

// exactSet is a match's exact set, or why there is none.
type exactSet struct {
	s   pset.Set
	err error // a *pset.NotExactError, or the resolver's
}

// exactOf returns v's exact sets, built on first use.
func (l *linter) exactOf(v *swView) *exactSets {
	v.exactMu.Lock()
	defer v.exactMu.Unlock()
	if v.exact != nil {
		return v.exact
	}
	x := &exactSets{texts: map[string]exactSet{}, decided: map[*inst]exactSet{}}
	sp, err := pset.NewSpace(l.dialect, v.ports, "")
	if err != nil {
		x.err = err
	} else {
		ports := make(map[string]bool, len(v.ports))
		for _, p := range v.ports {
			ports[p] = true
		}
		res := v.parseRes
		res.Ports = ports // names that are no port of the switch never match
		x.m = pset.NewManager(sp)
		x.cv = x.m.Converter(res)
		x.dom = x.m.DomainPorts()
	}
	v.exact = x
	return x
}

// set returns in's exact set on the switch; x.mu must be held.
func (x *exactSets) set(in *inst) exactSet {
	if x.err != nil {
		return exactSet{err: x.err}
	}
	if in.dec != nil {
		if e, ok := x.decided[in]; ok {
			return e
		}
		e := x.set(in.dec.orig)
		for _, p := range in.dec.passes {
			if e.err != nil {
				break
			}
			ps := x.set(p)
			if ps.err != nil {
				e = ps
				break
			}
			e.s = x.m.Diff(e.s, ps.s)
		}
		x.decided[in] = e
		return e
	}
	text := in.a.acl.Match
	if e, ok := x.texts[text]; ok {
		return e
	}
	s, err := x.cv.Convert(in.e.Root)
	e := exactSet{s: x.m.And(s, x.dom), err: err}
	x.texts[text] = e
	return e
}

// overlap reports whether some packet of the switch is in both a's and
// b's sets; err says why it cannot tell.
func (x *exactSets) overlap(a, b *inst) (bool, *inst, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	sa, sb := x.set(a), x.set(b)
	if sa.err != nil {
		return false, a, sa.err
	}
	if sb.err != nil {
		return false, b, sb.err
	}
	return x.m.Intersects(sa.s, sb.s), nil, nil
}

// shadowResult is the exact answer to whether an ACL is shadowed.
type shadowResult struct {
	shadowed bool
	// by are the ACLs that decide some of its packets first, in the order
	// they are evaluated: each one's set meets what the ACLs before it
	// leave of the ACL's set.
	by []*inst
	// err, when not nil, is why it cannot be decided (errIn's match cannot
	// be stated exactly); by then lists what was found so far.
	err   error
	errIn *inst
	// witness is a packet of the ACL that nothing before it matches (when
	// it is not shadowed).
	witness *pset.Packet
}

// shadow decides whether every packet of b's set is in the set of an ACL
// of before (the ACLs evaluated before b that may meet it, in evaluation
// order), and which of them decide some of b's packets first.
func (x *exactSets) shadow(b *inst, before []*inst) shadowResult {
	x.mu.Lock()
	defer x.mu.Unlock()
	sb := x.set(b)
	if sb.err != nil {
		return shadowResult{err: sb.err, errIn: b}
	}
	var r shadowResult
	rest := sb.s
	for i := 0; i < len(before) && rest != pset.Empty; {
		// ACLs evaluated at one step (one priority of one tier) each
		// decide what those before leave; which of them decides a packet
		// they share is undefined.
		j := i + 1
		for j < len(before) && evalStep(before[j]) == evalStep(before[i]) {
			j++
		}
		next := rest
		for _, a := range before[i:j] {
			sa := x.set(a)
			if sa.err != nil {
				if r.err == nil {
					r.err, r.errIn = sa.err, a
				}
				continue
			}
			if x.m.Intersects(rest, sa.s) {
				r.by = append(r.by, a)
				next = x.m.Diff(next, sa.s)
			}
		}
		rest, i = next, j
	}
	switch {
	case rest == pset.Empty && r.err == nil:
		r.shadowed = true
	case rest != pset.Empty && r.err == nil:
		w, _ := x.m.Witness(rest)
		r.witness = &w
	case rest == pset.Empty:
		// Shadowed whatever the ACL that could not be converted matches;
		// whether it decides some packets first is what stays open.
		r.shadowed = true
	}
	return r
}

// evalBefore returns the ACLs of layers that are evaluated before b (a
// higher priority in its layer; every instance that stands for an earlier
// tier) and whose cubes from above may meet b's, in evaluation order.
func (l *linter) evalBefore(v *swView, b *inst, layers []*layer) []*inst {
	var out []*inst
	q := l.hullOf(v, b)
	for _, ly := range layers {
		ly.idx.candidates(q, 0, ly.idx.above(b.a.acl.Priority), func(_ int, a *inst) bool {
			if a != b {
				out = append(out, a)
			}
			return true
		})
	}
	slices.SortStableFunc(out, evalCmp)
	return out
}

// evalCmp orders ACLs as an eval stage evaluates them: what earlier tiers
// decide first (by tier, then priority), then by priority (instCmp).
func evalCmp(x, y *inst) int {
	switch {
	case x.dec != nil && y.dec != nil:
		if c := x.dec.tier - y.dec.tier; c != 0 {
			return c
		}
		return instCmp(x.dec.orig, y.dec.orig)
	case x.dec != nil:
		return -1
	case y.dec != nil:
		return 1
	}
	return instCmp(x, y)
}

// evalStep identifies the step of evaluation at which an ACL decides:
// its tier for what an earlier tier decides, with its priority.
func evalStep(a *inst) [2]int {
	if a.dec != nil {
		return [2]int{a.dec.tier, a.dec.orig.a.acl.Priority}
	}
	return [2]int{-1, a.a.acl.Priority}
}

// notExactText says which construct of which ACL keeps an answer from
// being exact.
func notExactText(err error, in *inst) string {
	who := in.a.ref.describeShort()
	if in.dec != nil {
		who = in.dec.orig.a.ref.describeShort()
	}
	var ne *pset.NotExactError
	if errors.As(err, &ne) {
		return fmt.Sprintf("%s's match cannot be stated exactly at offset %d: %s", who, ne.Pos, ne.Reason)
	}
	return fmt.Sprintf("%s's match cannot be stated exactly: %v", who, err)
}
