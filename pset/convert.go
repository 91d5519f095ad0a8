package pset

import (
	"math/big"

	"github.com/aclc/aclc/acl/expr"
)

// Converter turns parsed matches into sets, exactly as acl/expr's Eval
// evaluates them (the package comment lists the rules), with $address_set
// and @port_group references resolved through one resolver. It caches the
// sets of comparisons with references, so that an address set named by
// many matches is converted once. A Converter is not safe for concurrent
// use.
type Converter struct {
	m *Manager
	r expr.Resolver
	// Residency, when set, decides is_chassis_resident(port) (a constant
	// for the chassis in question); when nil a match that calls it is not
	// exact: it depends on where the packet is processed.
	Residency expr.ChassisResidency
	refSets   map[refKey]Set
}

// refKey identifies a comparison of some bits with a constant set that
// names references, without its prerequisites.
type refKey struct {
	sym       *expr.Symbol
	ofs, n    int
	op        expr.Relop
	any       bool
	constants string
}

// Converter returns a converter into m's sets resolving references
// through r (nil: a match with a reference cannot be converted).
func (m *Manager) Converter(r expr.Resolver) *Converter {
	return &Converter{m: m, r: r, refSets: map[refKey]Set{}}
}

// Match parses text in the space's dialect with the converter's resolver
// and converts it.
func (c *Converter) Match(text string) (Set, error) {
	e, err := c.m.space.dialect.Parse(text, c.r)
	if err != nil {
		return Empty, err
	}
	return c.Convert(e.Root)
}

// Convert returns the set of packets of the space that match n; the
// error is a *NotExactError when n's set cannot be stated exactly, or
// the resolver's when a reference cannot be expanded.
func (c *Converter) Convert(n expr.Node) (s Set, err error) {
	defer func() {
		if x := recover(); x != nil {
			switch e := x.(type) {
			case *NotExactError:
				s, err = Empty, e
			case convError:
				s, err = Empty, e.err
			default:
				panic(x)
			}
		}
	}()
	return c.m.And(c.node(n, false), c.m.univ), nil
}

// convError carries an error out of a conversion.
type convError struct{ err error }

// node converts n under an odd (neg) or even number of `!', as Eval's
// evaluator does: negation goes down to the comparisons.
func (c *Converter) node(n expr.Node, neg bool) Set {
	m := c.m
	switch n := n.(type) {
	case *expr.Binary:
		or := n.Or != neg // De Morgan
		terms := make([]Set, len(n.Terms))
		for i, t := range n.Terms {
			terms[i] = c.node(t, neg)
		}
		if or {
			return m.reduce(opOr, terms, Empty)
		}
		return m.reduce(opAnd, terms, all)
	case *expr.Not:
		return c.node(n.X, !neg)
	case *expr.Paren:
		return c.node(n.X, neg)
	case *expr.Bool:
		return truth(n.Value != neg)
	case *expr.ChassisResident:
		if c.Residency == nil {
			notExact(n.Pos, "is_chassis_resident(%s) depends on the chassis that processes the packet", n.Text)
		}
		return truth(c.Residency.IsChassisResident(n.Port) != neg)
	case *expr.FieldTest:
		zero := []expr.Const{{Kind: expr.IntConst, Value: new(big.Int)}}
		return c.cmp(n.Pos, n.Field, expr.Ne, zero, nil, neg)
	case *expr.Cmp:
		return c.cmp(n.Pos, n.Field, n.FieldOp(), nil, &n.Values, neg)
	case *expr.Range:
		lo := c.cmp(n.Pos, n.Field, n.LowOp.Turn(), nil, &n.Low, neg)
		hi := c.cmp(n.Pos, n.Field, n.HighOp, nil, &n.High, neg)
		if neg {
			return m.Or(lo, hi)
		}
		return m.And(lo, hi)
	}
	notExact(n.Position(), "unknown node %T", n)
	return Empty
}

func truth(b bool) Set {
	if b {
		return all
	}
	return Empty
}

// cmp is Eval's cmp: field f compared with orig (the operator as written,
// field on the left) against the constants values, or the set cs expanded
// through the resolver, under neg. An empty set makes == false and !=
// true, without prerequisites; otherwise the members' tests are a
// disjunction under == and a conjunction under the other operators
// (swapped by negation), and the symbol's prerequisites are ANDed in.
func (c *Converter) cmp(pos int, f expr.Field, orig expr.Relop, values []expr.Const, cs *expr.ConstSet, neg bool) Set {
	m := c.m
	var key refKey
	cached := false
	if cs != nil {
		var err error
		if values, err = expr.ExpandSet(c.r, *cs); err != nil {
			panic(convError{err})
		}
		cached = hasRef(*cs)
	}
	if len(values) == 0 {
		return truth((orig == expr.Ne) != neg)
	}
	o := orig
	if neg {
		o = orig.Invert()
	}
	anyOf := (orig == expr.Eq) != neg
	var combined Set
	if cached {
		key = refKey{sym: f.Symbol, ofs: f.Ofs, n: f.NBits, op: o, any: anyOf, constants: cs.String()}
		if s, ok := c.refSets[key]; ok {
			combined = s
		} else {
			cached = false
		}
	}
	if !cached {
		tests := make([]Set, len(values))
		for i, v := range values {
			tests[i] = c.test(pos, f, o, v)
		}
		if anyOf {
			combined = m.reduce(opOr, tests, Empty)
		} else {
			combined = m.reduce(opAnd, tests, all)
		}
		if cs != nil && hasRef(*cs) {
			c.refSets[key] = combined
		}
	}
	return m.And(m.prereqs(f.Symbol), combined)
}

// hasRef reports whether cs names an address set or port group.
func hasRef(cs expr.ConstSet) bool {
	for _, v := range cs.Values {
		if v.Kind == expr.AddressSetRef || v.Kind == expr.PortGroupRef {
			return true
		}
	}
	return false
}

// test is Eval's cmpOne without the prerequisites: field f op constant v.
func (c *Converter) test(pos int, f expr.Field, o expr.Relop, v expr.Const) Set {
	m := c.m
	sym := f.Symbol
	switch {
	case sym.IsPredicate():
		p := m.predicate(sym)
		if positive := (v.Value != nil && v.Value.Bit(0) == 1) != (o == expr.Ne); !positive {
			return m.apply(opDiff, all, p)
		}
		return p
	case sym.IsString():
		return c.portTest(pos, sym, o, v)
	}
	root, ofs := sym.Root()
	if root.PortRegister != "" {
		notExact(pos, "%s is the register of %s's tunnel key, a function of the port", root.Name, root.PortRegister)
	}
	fl := m.space.byName[root.Name]
	if fl == nil {
		notExact(pos, "field %s is not in the space", root.Name)
	}
	if v.Value == nil {
		notExact(pos, "%s is not an integer constant", v.Text)
	}
	var mask *big.Int
	val := v.Value
	if v.Kind == expr.MaskedConst {
		mask = v.Mask
		val = new(big.Int).And(val, mask)
	}
	return m.cmpBits(bitsOf{fl, ofs + f.Ofs, f.NBits}, o, val, mask)
}

// portTest compares a string field with a port name: false whatever the
// operator for a name the resolver says is no port of the datapath (as
// ovn-trace, which compares tunnel keys), the port's code otherwise. A
// name the domain lacks that may be a port is not exact.
func (c *Converter) portTest(pos int, sym *expr.Symbol, o expr.Relop, v expr.Const) Set {
	m := c.m
	if pl, ok := c.r.(expr.PortLookup); ok && !pl.PortExists(v.Str) {
		return Empty
	}
	fl := m.space.byName[sym.Name]
	code, ok := fl.code[v.Str]
	switch {
	case !ok:
		notExact(pos, "port %q is not in the domain of %s", v.Str, sym.Name)
	case o == expr.Eq:
		return m.portIs(fl, code)
	case o == expr.Ne:
		return m.apply(opDiff, all, m.portIs(fl, code))
	}
	notExact(pos, "%s %s on a string field", sym.Name, o)
	return Empty
}

// prereqs returns the set of sym's prerequisites (all for none).
func (m *Manager) prereqs(sym *expr.Symbol) Set {
	if sym.Prereqs == "" {
		return all
	}
	return m.expansion(sym, false)
}

// predicate returns the set of predicate sym's expansion.
func (m *Manager) predicate(sym *expr.Symbol) Set { return m.expansion(sym, true) }

// symKey identifies a symbol's prerequisites or predicate expansion.
type symKey struct {
	sym  *expr.Symbol
	pred bool
}

// expansion converts sym's predicate expansion (pred) or prerequisites
// once per Manager: they name no references and no ports.
func (m *Manager) expansion(sym *expr.Symbol, pred bool) Set {
	k := symKey{sym, pred}
	if s, ok := m.symSets[k]; ok {
		return s
	}
	text := sym.Prereqs
	if pred {
		text = sym.Predicate
	}
	e, err := m.space.dialect.Parse(text, nil)
	if err != nil {
		panic("pset: the symbol table's own expression " + text + " does not parse: " + err.Error())
	}
	s := (&Converter{m: m}).node(e.Root, false)
	m.symSets[k] = s
	return s
}
