package expr

import (
	"math/big"
	"math/bits"
	"slices"
	"sync"
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
	m := NewMicroflowSymtab(t)
	sv.apply(m)
	return m, nil
}

// solver turns conjunctive constraints into field values. Its state is a
// few small slices, so that the clones a disjunction makes are cheap.
type solver struct {
	t    Symtab
	r    Resolver
	ints []pin    // the bits pinned so far, by root field
	strs []strPin // the string fields pinned so far
	// applied lists the symbols whose prerequisites were added and pending
	// those whose prerequisites are still to add (consumed from the front).
	applied []*Symbol
	pending []*Symbol
	changed bool
	lenient bool // leave ambiguous disjunctions open instead of failing
	// noPrereqs records only what is stated, without the implicit
	// prerequisites of the fields mentioned.
	noPrereqs bool
	terse     bool // ambiguity errors do not say where (see ambiguous)
	// Room for the usual state, so that a solver and each clone are one
	// allocation.
	intsBuf    [4]pin
	strsBuf    [1]strPin
	appliedBuf [4]*Symbol
	pendingBuf [2]*Symbol
}

// pin is what is known of a root field: the bits of known have the values
// of val (val is zero elsewhere).
type pin struct {
	root       *Symbol
	known, val w128
}

type strPin struct{ name, val string }

// w128 holds the bits of a field of at most 128 bits, low word first (the
// widest OVN field is 128 bits: ip6.src, xxreg0).
type w128 [2]uint64

func (a w128) and(b w128) w128    { return w128{a[0] & b[0], a[1] & b[1]} }
func (a w128) or(b w128) w128     { return w128{a[0] | b[0], a[1] | b[1]} }
func (a w128) andNot(b w128) w128 { return w128{a[0] &^ b[0], a[1] &^ b[1]} }

// shl shifts a left by n < 128 bits.
func (a w128) shl(n int) w128 {
	switch {
	case n == 0:
		return a
	case n >= 64:
		return w128{0, a[0] << (n - 64)}
	}
	return w128{a[0] << n, a[1]<<n | a[0]>>(64-n)}
}

// ones128 returns 2^n-1 for n ≤ 128.
func ones128(n int) w128 {
	switch {
	case n >= 128:
		return w128{^uint64(0), ^uint64(0)}
	case n >= 64:
		return w128{^uint64(0), ^uint64(0) >> (128 - n)}
	case n <= 0:
		return w128{}
	}
	return w128{^uint64(0) >> (64 - n), 0}
}

// words returns the low 128 bits of x (two's complement for negative x).
func words(x *big.Int) (w w128) {
	if x.Sign() < 0 {
		x = new(big.Int).And(x, ones(128))
	}
	for i, d := range x.Bits() {
		b := i * bits.UintSize
		if b >= 128 {
			break
		}
		w[b/64] |= uint64(d) << (b % 64)
	}
	return w
}

func (a w128) big() *big.Int {
	x := new(big.Int).SetUint64(a[1])
	x.Lsh(x, 64)
	return x.Or(x, new(big.Int).SetUint64(a[0]))
}

func newSolver(t Symtab, r Resolver) *solver {
	s := solverPool.Get().(*solver)
	s.t, s.r = t, r
	s.ints, s.strs, s.applied, s.pending = s.intsBuf[:0], s.strsBuf[:0], s.appliedBuf[:0], s.pendingBuf[:0]
	return s
}

// solverPool holds solvers nothing refers to any more (recycle): a check
// makes two per conjunction and a clone per alternative tried, most of
// them garbage at once.
var solverPool = sync.Pool{New: func() any { return new(solver) }}

// recycle returns s to the pool: nothing may refer to s or its buffers
// any more.
func (s *solver) recycle() {
	*s = solver{}
	solverPool.Put(s)
}

func (s *solver) clone() *solver {
	c := solverPool.Get().(*solver)
	c.t, c.r, c.changed, c.lenient, c.noPrereqs, c.terse = s.t, s.r, s.changed, s.lenient, s.noPrereqs, s.terse
	c.ints = append(c.intsBuf[:0], s.ints...)
	c.strs = append(c.strsBuf[:0], s.strs...)
	c.applied = append(c.appliedBuf[:0], s.applied...)
	c.pending = append(c.pendingBuf[:0], s.pending...)
	return c
}

// apply stores what s pinned into m.
func (s *solver) apply(m *Microflow) {
	for _, p := range s.ints {
		cur := m.ints[p.root.Name]
		if cur == nil {
			m.ints[p.root.Name] = p.val.big()
			continue
		}
		v := new(big.Int).AndNot(cur, p.known.big())
		m.ints[p.root.Name] = v.Or(v, p.val.big())
	}
	for _, p := range s.strs {
		m.strs[p.name] = p.val
	}
}

// str returns the value pinned for string field name.
func (s *solver) str(name string) (string, bool) {
	for _, p := range s.strs {
		if p.name == name {
			return p.val, true
		}
	}
	return "", false
}

// pinOf returns the index of root's entry in s.ints, -1 if none.
func (s *solver) pinOf(root *Symbol) int {
	for i := range s.ints {
		if s.ints[i].root == root {
			return i
		}
	}
	return -1
}

// fits reports whether the solver can represent f's root field (every
// field of OVN's symbol tables; a custom table might have wider ones).
func fits(f Field) bool {
	r, _ := f.Symbol.Root()
	return r.Width <= 128
}

// shifted returns the root field of f and c's mask and value shifted into
// it.
func shifted(f Field, c Const) (root *Symbol, mask, val w128) {
	b := bitsOf(f)
	mask, val = b.shifted(&c)
	return b.root, mask, val
}

// fieldBits is where a field's bits are in its root field, for testing
// many values against it.
type fieldBits struct {
	root *Symbol
	ofs  int
	ones w128 // the field's width of ones
}

func bitsOf(f Field) fieldBits {
	root, ofs := f.Symbol.Root()
	return fieldBits{root, ofs + f.Ofs, ones128(f.NBits)}
}

// shifted returns c's mask and value shifted into the root field.
func (b fieldBits) shifted(c *Const) (mask, val w128) {
	mask = b.ones
	if c.Kind == MaskedConst {
		mask = mask.and(words(c.Mask))
	}
	val = words(c.Value).and(mask)
	return mask.shl(b.ofs), val.shl(b.ofs)
}

// outcome says what pinning val under mask does to p: contradict it, or
// change it.
func (p *pin) outcome(mask, val w128) (contradicts, changes bool) {
	overlap := p.known.and(mask)
	if p.val.and(overlap) != val.and(overlap) {
		return true, false
	}
	return false, overlap != mask
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
		if err := s.constrain(expansionsOf(s.t, pre).prereqs, false); err != nil {
			return err
		}
	}
	return nil
}

func ambiguous(n Node) error { return ambiguousError{n} }

// ambiguous is ambiguous(n), or only ErrAmbiguous when no one reads which
// node (the checker's fact solvers).
func (s *solver) ambiguous(n Node) error {
	if s.terse {
		return ErrAmbiguous
	}
	return ambiguous(n)
}

// ambiguousError is ErrAmbiguous about a node, formatted only when read:
// the checker meets many and reads none.
type ambiguousError struct{ n Node }

func (e ambiguousError) Error() string { return ErrAmbiguous.Error() + ": " + e.n.String() }
func (e ambiguousError) Unwrap() error { return ErrAmbiguous }

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
		if !fits(n.Field) {
			return s.ambiguous(n)
		}
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
		if !fits(n.Field) {
			return s.ambiguous(n)
		}
		op := n.FieldOp()
		if neg {
			op = op.Invert()
		}
		var buf [4][]Const
		runs, err := expandRuns(s.r, n.Values, buf[:0])
		if err != nil {
			return err
		}
		count := 0
		for _, r := range runs {
			count += len(r)
		}
		if op == Eq && count > 1 && !n.Field.Symbol.IsPredicate() {
			return s.chooseValue(n.Field, runs, n)
		}
		var vals []Const
		switch len(runs) {
		case 0:
		case 1:
			vals = runs[0]
		default:
			vals = slices.Concat(runs...)
		}
		switch {
		case len(vals) == 0 && op == Eq:
			return ErrContradictory
		case len(vals) == 1 && op == Eq:
			return s.assign(n.Field, vals[0], n)
		case op == Eq: // a disjunction of single values
			return s.choose(len(vals), func(c *solver, i int) error { return c.assign(n.Field, vals[i], n) }, n)
		case len(vals) == 1 && op == Ne && n.Field.NBits == 1 && vals[0].Kind == IntConst:
			flipped := vals[0]
			flipped.Value = bigOne // (v & 1) ^ 1
			if vals[0].Value.Bit(0) == 1 {
				flipped.Value = bigZero
			}
			return s.assign(n.Field, flipped, n)
		}
		return s.ambiguous(n)
	}
	return s.ambiguous(n)
}

// disjunction handles `a || b': satisfied already if one alternative adds
// nothing new, forced if all but one contradict, ambiguous otherwise.
func (s *solver) disjunction(n *Binary, neg bool) error {
	return s.choose(len(n.Terms), func(c *solver, i int) error { return c.constrain(n.Terms[i], neg) }, n)
}

// choose applies one of the alternatives alt(c, 0..n-1), each to a clone
// c: none if one of them is already satisfied, the only one that does not
// contradict, or fails as ambiguous.
func (s *solver) choose(n int, alt func(c *solver, i int) error, node Node) error {
	var buf [4]*solver
	viable := buf[:0]
	// Every clone is recycled once done with (the one kept is copied
	// into s first).
	discard := func() {
		for _, c := range viable {
			c.recycle()
		}
	}
	for i := range n {
		c := s.clone()
		c.changed = false
		if err := alt(c, i); err != nil {
			c.recycle()
			continue
		}
		if !c.changed {
			c.recycle()
			discard()
			return nil
		}
		viable = append(viable, c)
	}
	switch len(viable) {
	case 0:
		return ErrContradictory
	case 1:
		s.adopt(viable[0])
		s.changed = true
		return nil
	}
	discard()
	if s.lenient {
		return nil
	}
	return s.ambiguous(node)
}

// adopt makes c's state s's and recycles c (a clone of s).
func (s *solver) adopt(c *solver) {
	s.copyState(c)
	c.recycle()
}

// copyState makes what c pinned and has pending s's, copied into s's own
// buffers (s and c share none).
func (s *solver) copyState(c *solver) {
	s.ints = append(s.intsBuf[:0], c.ints...)
	s.strs = append(s.strsBuf[:0], c.strs...)
	s.applied = append(s.appliedBuf[:0], c.applied...)
	s.pending = append(s.pendingBuf[:0], c.pending...)
}

// chooseValue is choose over the alternatives `f == v' for v in vals
// without cloning the solver per value (an address set of a thousand
// addresses made a thousand clones): assigning a value to a field that is
// not a predicate changes only that field and queues its prerequisites,
// so each alternative is decided by the field's pinned bits alone.
func (s *solver) chooseValue(f Field, runs [][]Const, n Node) error {
	viable, first := 0, (*Const)(nil)
	// What is pinned of a numeric field's root does not change while the
	// values are tried: found once.
	var b fieldBits
	var p pin
	str := f.Symbol.IsString()
	if !str {
		b = bitsOf(f)
		if i := s.pinOf(b.root); i >= 0 {
			p = s.ints[i]
		}
	}
	for _, vals := range runs {
		for i := range vals {
			v := &vals[i]
			var contradicts, changes bool
			if str {
				contradicts, changes = s.assignOutcome(f, *v)
			} else {
				contradicts, changes = p.outcome(b.shifted(v))
			}
			switch {
			case contradicts:
				continue
			case !changes:
				return nil
			}
			if viable++; viable == 1 {
				first = v
			} else if s.lenient {
				// Two viable values: whatever the rest hold, a lenient
				// solver's answer is nil (a value that changes nothing
				// returns nil too), so a set of thousands of addresses
				// need not be read to its end.
				return nil
			}
		}
	}
	switch viable {
	case 0:
		return ErrContradictory
	case 1:
		err := s.assign(f, *first, n)
		s.changed = true
		return err
	}
	if s.lenient {
		return nil
	}
	return s.ambiguous(n)
}

// assignOutcome says what assign(f, c) would do to a field that is not a
// predicate: fail as contradictory, or change what is pinned.
func (s *solver) assignOutcome(f Field, c Const) (contradicts, changes bool) {
	if f.Symbol.IsString() {
		cur, set := s.str(f.Symbol.Name)
		return set && cur != c.Str, !set
	}
	root, mask, val := shifted(f, c)
	var p pin
	if i := s.pinOf(root); i >= 0 {
		p = s.ints[i]
	}
	return p.outcome(mask, val)
}

// assign pins field f to constant c, then adds f's prerequisites.
func (s *solver) assign(f Field, c Const, n Node) error {
	sym := f.Symbol
	switch {
	case sym.IsPredicate():
		if c.Value.Bit(0) == 0 {
			return s.ambiguous(n) // a negated predicate pins nothing
		}
		if err := s.constrain(expansionsOf(s.t, sym).pred, false); err != nil {
			return err
		}
	case sym.IsString():
		cur, set := s.str(sym.Name)
		if set && cur != c.Str {
			return ErrContradictory
		}
		if !set {
			s.strs = append(s.strs, strPin{sym.Name, c.Str})
			s.changed = true
		}
	default:
		contradicts, changes := s.assignOutcome(f, c)
		if contradicts {
			return ErrContradictory
		}
		if changes {
			root, mask, val := shifted(f, c)
			i := s.pinOf(root)
			if i < 0 {
				i = len(s.ints)
				s.ints = append(s.ints, pin{root: root})
			}
			p := &s.ints[i]
			p.val = p.val.andNot(mask).or(val)
			p.known = p.known.or(mask)
			s.changed = true
		}
	}
	if sym.Prereqs != "" && !s.noPrereqs && !slices.Contains(s.applied, sym) {
		s.applied = append(s.applied, sym)
		s.pending = append(s.pending, sym)
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
		var buf [4][]Const
		runs, err := expandRuns(s.r, n.Values, buf[:0])
		if err != nil {
			return false
		}
		for _, vals := range runs {
			for _, v := range vals {
				if s.pinned(n.Field, v) {
					return true
				}
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
		return c.Value.Bit(0) == 1 && s.implied(expansionsOf(s.t, sym).pred)
	case sym.IsString():
		cur, ok := s.str(sym.Name)
		return ok && cur == c.Str
	case !fits(f):
		return false
	}
	root, mask, val := shifted(f, c)
	i := s.pinOf(root)
	return i >= 0 && s.ints[i].known.and(mask) == mask && s.ints[i].val.and(mask) == val
}
