package expr

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Warning is a construct OVN 23.03 accepts but that probably does not mean
// what its author intended.
type Warning struct {
	// Pos is the byte offset of the offending node or constant.
	Pos int
	// Kind classifies the warning.
	Kind WarningKind
	// Msg explains it.
	Msg string
}

// String returns "offset N: kind: message".
func (w Warning) String() string { return fmt.Sprintf("offset %d: %s: %s", w.Pos, w.Kind, w.Msg) }

// WarningKind classifies warnings.
type WarningKind string

// Warning kinds.
const (
	// HostBits: a masked constant has 1-bits outside its mask
	// (ip4.src == 10.0.0.1/24); OVN silently clears them.
	HostBits WarningKind = "host-bits"
	// SliceOverflow: a constant is wider than the selected bits
	// (reg0[0..3] == 0xff); OVN checks the width against the whole field
	// and silently drops the high bits.
	SliceOverflow WarningKind = "slice-overflow"
	// MissingPrereq: a field is used without its prerequisite being
	// asserted by the enclosing conjunction (tcp.dst == 80 without tcp,
	// ct.new without ct.trk); OVN ANDs the prerequisite in implicitly, so
	// even !(tcp.dst == 80) requires TCP.
	MissingPrereq WarningKind = "missing-prereq"
	// Contradiction: a term conflicts with the rest of its conjunction,
	// directly or through prerequisites (tcp && udp, ip4 && ip6,
	// tcp.dst == 80 && udp); that part of the expression never matches.
	Contradiction WarningKind = "contradiction"
	// EmptySet: a comparison with an address set or port group that is
	// empty, which OVN turns into constant false (==) or true (!=).
	EmptySet WarningKind = "empty-set"
	// NegatedMultibit: `!field' on a multi-bit field, which OVN accepts and
	// reads as field == 0.
	NegatedMultibit WarningKind = "negated-multibit"
)

// check computes the warnings for a parsed tree.
func check(root Node, t Symtab, r Resolver) []Warning {
	c := checkers.Get().(*checker)
	c.t, c.r = t, r
	top := c.newExplicit(nil, nil, false)
	full := newFactSolver(t, r, true)
	c.walk(root, false, facts{top, full, c.names[:0], true})
	top.release()
	full.recycle() // no one else's (fresh): garbage now
	out := c.out
	slices.SortStableFunc(out, func(a, b Warning) int { return cmp.Compare(a.Pos, b.Pos) })
	*c = checker{}
	checkers.Put(c)
	return out
}

var checkers = sync.Pool{New: func() any { return new(checker) }}

type checker struct {
	t   Symtab
	r   Resolver
	out []Warning
	// Room for the usual facts: a check is then one allocation.
	exps  [4]explicitFacts
	nexp  int
	names [8]string
}

// newExplicit returns the explicit facts of a conjunction of terms under
// neg inside outer, from the checker's room while it lasts.
func (c *checker) newExplicit(outer *explicitFacts, terms []Node, neg bool) *explicitFacts {
	if c.nexp == len(c.exps) {
		return &explicitFacts{outer: outer, terms: terms, neg: neg}
	}
	e := &c.exps[c.nexp]
	c.nexp++
	*e = explicitFacts{outer: outer, terms: terms, neg: neg}
	return e
}

func (c *checker) warn(pos int, kind WarningKind, format string, args ...any) {
	c.out = append(c.out, Warning{Pos: pos, Kind: kind, Msg: fmt.Sprintf(format, args...)})
}

// newFactSolver returns a lenient solver; with prereqs it also adds the
// implicit prerequisites of every field, as OVN's annotation does.
func newFactSolver(t Symtab, r Resolver, prereqs bool) *solver {
	s := newSolver(t, r)
	s.lenient, s.terse = true, true // the checker reads no ambiguity error
	s.noPrereqs = !prereqs
	return s
}

// facts is what the enclosing conjunctions assert: explicit holds what they
// state, full adds OVN's implicit prerequisites, and names lists the
// symbols they test positively by name (tcp, ct.trk, nd).
type facts struct {
	explicit *explicitFacts
	full     *solver
	names    []string
	// fresh is set when the solvers are new and no one else's: a
	// conjunction may then add to them instead of to clones.
	fresh bool
}

// walk visits n under neg enclosing negations.
func (c *checker) walk(n Node, neg bool, fs facts) {
	switch n := n.(type) {
	case *Paren:
		c.walk(n.X, neg, fs)
	case *Not:
		if ft, ok := n.X.(*FieldTest); ok && ft.Field.NBits > 1 {
			c.warn(n.Pos, NegatedMultibit, "!%s is accepted by OVN and means %s == 0", ft.Field, ft.Field)
		}
		c.walk(n.X, !neg, fs)
	case *Binary:
		if n.Or != neg { // disjunction: alternatives see only the outer facts
			fs.fresh = false // shared by the alternatives
			for _, t := range n.Terms {
				c.walk(t, neg, fs)
			}
			return
		}
		explicit := c.newExplicit(fs.explicit, n.Terms, neg)
		full := fs.full
		if !fs.fresh {
			full = full.clone()
		}
		// Appended to fs.names' room: the walk is depth first, so a
		// conjunction's names are done with before a sibling's overwrite
		// them (and a disjunction's alternatives only read the outer ones).
		names := fs.names
		for _, t := range n.Terms {
			if ft, ok := unparen(t).(*FieldTest); ok && !neg && ft.Field.NBits == 1 {
				names = append(names, ft.Field.Symbol.Name)
			}
		}
		// Contradictions: add the terms one by one; on a conflict, warn and
		// go back to the facts of the terms that fit, saved before the term
		// (what adding them anew to the solver's start would give: the
		// solver is deterministic).
		saved := full.clone()
		for i, t := range n.Terms {
			if i > 0 {
				saved.copyState(full)
			}
			err := full.constrainAll(t, neg)
			if err == nil {
				continue
			}
			if errors.Is(err, ErrContradictory) {
				alone := newFactSolver(c.t, c.r, true)
				if alone.constrainAll(t, neg) == nil {
					c.warn(t.Position(), Contradiction, "%s contradicts the rest of the conjunction; it can never match", t)
				}
				alone.recycle()
			}
			full.copyState(saved)
		}
		saved.recycle()
		for _, t := range n.Terms {
			c.walk(t, neg, facts{explicit, full, names, false})
		}
		explicit.release()
		if !fs.fresh { // this conjunction's clone: no one else's
			full.recycle()
		}
	case *FieldTest:
		c.field(n.Field, fs)
	case *Cmp:
		c.field(n.Field, fs)
		c.constants(n.Field, n.Values)
	case *Range:
		c.field(n.Field, fs)
		c.constants(n.Field, n.Low)
		c.constants(n.Field, n.High)
	}
}

// explicitFacts are what a conjunction states (terms under neg) added to
// the outer conjunctions' facts, solved only when a field's prerequisite
// is not among the names tested (usually they all are, and the solver
// was work no one read).
type explicitFacts struct {
	outer *explicitFacts // nil at the top: no facts
	terms []Node
	neg   bool
	s     *solver // once solved
}

// solver returns the facts solved: the outer ones cloned (new at the
// top) with each term added, whether it fails or not (partial facts of a
// failing term are harmless for the suppression of warnings).
func (e *explicitFacts) solver(c *checker) *solver {
	if e.s == nil {
		if e.outer == nil {
			e.s = newFactSolver(c.t, c.r, false)
		} else {
			e.s = e.outer.solver(c).clone()
		}
		for _, t := range e.terms {
			_ = e.s.constrain(t, e.neg)
		}
	}
	return e.s
}

// release recycles the solver if one was made (no one else's).
func (e *explicitFacts) release() {
	if e.s != nil {
		e.s.recycle()
		e.s = nil
	}
}

func unparen(n Node) Node {
	for {
		p, ok := n.(*Paren)
		if !ok {
			return n
		}
		n = p.X
	}
}

// field warns when f's prerequisite is not implied by the explicit facts.
func (c *checker) field(f Field, fs facts) {
	pre := f.Symbol.Prereqs
	if pre == "" || slices.Contains(fs.names, pre) {
		return
	}
	if !fs.explicit.solver(c).implied(expansionsOf(c.t, f.Symbol).prereqs) {
		c.warn(f.Pos, MissingPrereq, "%s is used without its prerequisite `%s'; OVN adds it implicitly (even under `!')", f, pre)
	}
}

func (c *checker) constants(f Field, cs ConstSet) {
	for _, v := range cs.Values {
		switch v.Kind {
		case MaskedConst:
			if v.HostBits {
				c.warn(v.Pos, HostBits, "%s has 1-bits outside its mask; OVN ignores them", v.Text)
			}
			if w := v.Mask.BitLen(); w > f.NBits && f.Sliced {
				c.warn(v.Pos, SliceOverflow, "mask of %s is wider than the %d-bit %s; OVN drops the high bits", v.Text, f.NBits, f)
			}
		case IntConst:
			if w := v.Width(); w > f.NBits && !f.Symbol.IsString() {
				c.warn(v.Pos, SliceOverflow, "%s is %d bits wide but %s has %d; OVN drops the high bits", v.Text, w, f, f.NBits)
			}
		case AddressSetRef, PortGroupRef:
			if c.r == nil {
				continue
			}
			ms, _ := resolveRef(c.r, v)
			if len(ms) == 0 && len(cs.Values) == 1 {
				c.warn(v.Pos, EmptySet, "%s is empty, so the comparison is constant", v.Text)
			}
			if s := summaryOf(c.r, v, ms); s != nil && !s.hostBits {
				continue
			}
			for _, m := range ms {
				if m.Kind == MaskedConst && m.HostBits {
					c.warn(v.Pos, HostBits, "%s member %s has 1-bits outside its mask; OVN ignores them", v.Text, m.Text)
				}
			}
		}
	}
}
