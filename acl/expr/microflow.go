package expr

import (
	"fmt"
	"math/big"
)

// ParseMicroflow parses an ovn-trace style microflow description such as
//
//	inport == "lsp1" && eth.src == 00:00:00:00:00:01 && ip4.src == 10.0.0.1 && tcp.dst == 80
//
// into a Microflow, filling in prerequisites the way ovn-trace does
// (tcp.dst implies ip.proto == 6, ip4.src implies eth.type == 0x800). The
// expression must pin fields to single values: a conjunction of equalities,
// 1-bit tests and predicates. Range tests, multi-valued sets and unresolved
// disjunctions (tcp.dst == 80 alone leaves ip4 vs ip6 open) fail with an
// error wrapping ErrAmbiguous; conflicting constraints (ip4 && ip6) fail
// with ErrContradictory. Parse errors are returned as *Error.
func ParseMicroflow(s string, r Resolver) (*Microflow, error) { return OVN2303().ParseMicroflow(s, r) }

func solveMicroflow(e *Expr, t Symtab, r Resolver) (*Microflow, error) {
	sv := newSolver(t, r)
	if err := sv.constrainAll(e.Root, false); err != nil {
		return nil, err
	}
	return sv.m, nil
}

// solver turns conjunctive constraints into field values.
type solver struct {
	t       Symtab
	r       Resolver
	m       *Microflow
	known   map[string]*big.Int // root field → mask of pinned bits
	applied map[string]bool     // symbols whose prerequisites were added
	changed bool
	lenient bool // leave ambiguous disjunctions open instead of failing
	// noPrereqs records only what is stated, without the implicit
	// prerequisites of the fields mentioned.
	noPrereqs bool
	pending   []string // prerequisite expressions still to add
	tmp       *scratch // shared by a solver and its clones (one goroutine)
}

// scratch holds the temporaries of assignOutcome, which runs for every
// value of every set a match compares with.
type scratch struct{ mask, val, shMask, shVal, overlap, a, b big.Int }

func newSolver(t Symtab, r Resolver) *solver {
	return &solver{t: t, r: r, m: NewMicroflowSymtab(t), known: map[string]*big.Int{}, applied: map[string]bool{}}
}

func (s *solver) clone() *solver {
	c := &solver{t: s.t, r: s.r, m: s.m.shallowClone(), known: map[string]*big.Int{}, applied: map[string]bool{}, lenient: s.lenient, noPrereqs: s.noPrereqs, tmp: s.tmp}
	for k, v := range s.known {
		c.known[k] = v // values are never modified in place, only replaced
	}
	for k, v := range s.applied {
		c.applied[k] = v
	}
	c.pending = append([]string(nil), s.pending...)
	return c
}

// constrainAll adds n's constraints and then the prerequisites of every
// field involved, so that `tcp && ip4' resolves tcp's ip4-or-ip6 choice
// whatever the order of the terms.
func (s *solver) constrainAll(n Node, neg bool) error {
	if err := s.constrain(n, neg); err != nil {
		return err
	}
	for len(s.pending) > 0 {
		pre := s.pending[0]
		s.pending = s.pending[1:]
		if err := s.constrain(expansion(s.t, pre), false); err != nil {
			return err
		}
	}
	return nil
}

func ambiguous(n Node) error { return fmt.Errorf("%w: %s", ErrAmbiguous, n) }

// constrain adds the constraints n asserts (negated when neg).
func (s *solver) constrain(n Node, neg bool) error {
	switch n := n.(type) {
	case *Paren:
		return s.constrain(n.X, neg)
	case *Not:
		return s.constrain(n.X, !neg)
	case *Bool:
		if n.Value == neg {
			return ErrContradictory
		}
		return nil
	case *ChassisResident:
		return nil
	case *Binary:
		if n.Or != neg {
			return s.disjunction(n, neg)
		}
		for _, t := range n.Terms {
			if err := s.constrain(t, neg); err != nil {
				return err
			}
		}
		return nil
	case *FieldTest:
		one := Const{Kind: IntConst, Value: bigOne}
		if n.Field.NBits > 1 {
			one.Value = bigZero // only `!field' parses: field == 0
			return s.assign(n.Field, one, n)
		}
		if neg {
			one.Value = bigZero
		}
		return s.assign(n.Field, one, n)
	case *Cmp:
		op := n.FieldOp()
		if neg {
			op = op.Invert()
		}
		vals, err := expandSet(s.r, n.Values)
		if err != nil {
			return err
		}
		switch {
		case len(vals) == 0 && op == Eq:
			return ErrContradictory
		case len(vals) == 1 && op == Eq:
			return s.assign(n.Field, vals[0], n)
		case op == Eq && !n.Field.Symbol.IsPredicate():
			return s.chooseValue(n.Field, vals, n)
		case op == Eq: // a disjunction of single values
			alts := make([]func(*solver) error, len(vals))
			for i, v := range vals {
				alts[i] = func(c *solver) error { return c.assign(n.Field, v, n) }
			}
			return s.choose(alts, n)
		case len(vals) == 1 && op == Ne && n.Field.NBits == 1 && vals[0].Kind == IntConst:
			flipped := vals[0]
			flipped.Value = new(big.Int).Xor(new(big.Int).And(flipped.Value, bigOne), bigOne)
			return s.assign(n.Field, flipped, n)
		}
		return ambiguous(n)
	}
	return ambiguous(n)
}

// disjunction handles `a || b': satisfied already if one alternative adds
// nothing new, forced if all but one contradict, ambiguous otherwise.
func (s *solver) disjunction(n *Binary, neg bool) error {
	alts := make([]func(*solver) error, len(n.Terms))
	for i, t := range n.Terms {
		alts[i] = func(c *solver) error { return c.constrain(t, neg) }
	}
	return s.choose(alts, n)
}

// choose applies one of the alternatives: none if one of them is already
// satisfied, the only one that does not contradict, or fails as ambiguous.
func (s *solver) choose(alts []func(*solver) error, n Node) error {
	var viable []*solver
	for _, alt := range alts {
		c := s.clone()
		c.changed = false
		if err := alt(c); err != nil {
			continue
		}
		if !c.changed {
			return nil
		}
		viable = append(viable, c)
	}
	switch len(viable) {
	case 0:
		return ErrContradictory
	case 1:
		*s = *viable[0]
		s.changed = true
		return nil
	}
	if s.lenient {
		return nil
	}
	return ambiguous(n)
}

// chooseValue is choose over the alternatives `f == v' for v in vals
// without cloning the solver per value (an address set of a thousand
// addresses made a thousand clones): assigning a value to a field that is
// not a predicate changes only that field and queues its prerequisites,
// so each alternative is decided by the field's pinned bits alone.
func (s *solver) chooseValue(f Field, vals []Const, n Node) error {
	viable, first := 0, 0
	for i, v := range vals {
		contradicts, changes := s.assignOutcome(f, v)
		switch {
		case contradicts:
			continue
		case !changes:
			return nil
		}
		if viable++; viable == 1 {
			first = i
		}
	}
	switch viable {
	case 0:
		return ErrContradictory
	case 1:
		err := s.assign(f, vals[first], n)
		s.changed = true
		return err
	}
	if s.lenient {
		return nil
	}
	return ambiguous(n)
}

// assignOutcome says what assign(f, c) would do to a field that is not a
// predicate: fail as contradictory, or change what is pinned.
func (s *solver) assignOutcome(f Field, c Const) (contradicts, changes bool) {
	sym := f.Symbol
	if sym.IsString() {
		cur, set := s.m.strs[sym.Name]
		return set && cur != c.Str, !set
	}
	// pinBits' computation in scratch values: no allocation.
	if s.tmp == nil {
		s.tmp = new(scratch)
	}
	t := s.tmp
	mask := ones(f.NBits)
	if c.Kind == MaskedConst {
		mask = t.mask.And(c.Mask, mask)
	}
	val := t.val.And(c.Value, mask)
	r, ofs := f.Symbol.Root()
	ofs += f.Ofs
	shMask := t.shMask.Lsh(mask, uint(ofs))
	shVal := t.shVal.Lsh(val, uint(ofs))
	overlap := t.overlap.SetInt64(0)
	if known := s.known[r.Name]; known != nil {
		overlap.And(known, shMask)
	}
	cur := t.a.SetInt64(0)
	if x := s.m.ints[r.Name]; x != nil {
		cur.And(x, overlap)
	}
	if cur.Cmp(t.b.And(shVal, overlap)) != 0 {
		return true, false
	}
	return false, overlap.Cmp(shMask) != 0
}

// pinBits returns what pinning field f to c touches: the root field, c's
// mask and value shifted into it, the root's bits pinned so far and those
// of them c's mask covers.
func (s *solver) pinBits(f Field, c Const) (root string, shMask, shVal, known, overlap *big.Int) {
	mask := ones(f.NBits)
	if c.Kind == MaskedConst {
		mask = new(big.Int).And(c.Mask, mask)
	}
	val := new(big.Int).And(c.Value, mask)
	r, ofs := f.Symbol.Root()
	ofs += f.Ofs
	shMask = new(big.Int).Lsh(mask, uint(ofs))
	shVal = new(big.Int).Lsh(val, uint(ofs))
	known = s.known[r.Name]
	if known == nil {
		known = new(big.Int)
	}
	return r.Name, shMask, shVal, known, new(big.Int).And(known, shMask)
}

// assign pins field f to constant c, then adds f's prerequisites.
func (s *solver) assign(f Field, c Const, n Node) error {
	sym := f.Symbol
	switch {
	case sym.IsPredicate():
		if c.Value.Bit(0) == 0 {
			return ambiguous(n) // a negated predicate pins nothing
		}
		if err := s.constrain(expansion(s.t, sym.Predicate), false); err != nil {
			return err
		}
	case sym.IsString():
		cur, set := s.m.strs[sym.Name]
		if set && cur != c.Str {
			return ErrContradictory
		}
		if !set {
			s.m.strs[sym.Name] = c.Str
			s.changed = true
		}
	default:
		contradicts, changes := s.assignOutcome(f, c)
		if contradicts {
			return ErrContradictory
		}
		if changes {
			root, shMask, _, known, _ := s.pinBits(f, c)
			mask := ones(f.NBits)
			if c.Kind == MaskedConst {
				mask = new(big.Int).And(c.Mask, mask)
			}
			s.changed = true
			s.m.setBits(f, new(big.Int).And(c.Value, mask), mask)
			s.known[root] = new(big.Int).Or(known, shMask)
		}
	}
	if sym.Prereqs != "" && !s.applied[sym.Name] && !s.noPrereqs {
		s.applied[sym.Name] = true
		s.pending = append(s.pending, sym.Prereqs)
	}
	return nil
}

// implied reports whether n (not negated) certainly holds given the bits
// pinned so far, without changing anything.
func (s *solver) implied(n Node) bool {
	switch n := n.(type) {
	case *Paren:
		return s.implied(n.X)
	case *Bool:
		return n.Value
	case *Binary:
		for _, t := range n.Terms {
			if s.implied(t) == n.Or {
				return n.Or
			}
		}
		return !n.Or
	case *FieldTest:
		if n.Field.NBits != 1 {
			return false
		}
		return s.pinned(n.Field, Const{Kind: IntConst, Value: bigOne})
	case *Cmp:
		if n.FieldOp() != Eq {
			return false
		}
		vals, err := expandSet(s.r, n.Values)
		if err != nil {
			return false
		}
		for _, v := range vals {
			if s.pinned(n.Field, v) {
				return true
			}
		}
	}
	return false
}

// pinned reports whether field f is known to equal c.
func (s *solver) pinned(f Field, c Const) bool {
	sym := f.Symbol
	switch {
	case sym.IsPredicate():
		return c.Value.Bit(0) == 1 && s.implied(expansion(s.t, sym.Predicate))
	case sym.IsString():
		cur, ok := s.m.strs[sym.Name]
		return ok && cur == c.Str
	}
	mask := ones(f.NBits)
	if c.Kind == MaskedConst {
		mask = new(big.Int).And(c.Mask, mask)
	}
	root, ofs := sym.Root()
	ofs += f.Ofs
	shMask := new(big.Int).Lsh(mask, uint(ofs))
	known := s.known[root.Name]
	if known == nil || new(big.Int).And(known, shMask).Cmp(shMask) != 0 {
		return false
	}
	return s.m.bits(f).And(s.m.bits(f), mask).Cmp(new(big.Int).And(c.Value, mask)) == 0
}
