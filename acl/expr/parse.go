package expr

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// MaxParenDepth is OVN's MAX_PAREN_DEPTH: at most this many parentheses may
// be open at once.
const MaxParenDepth = 100

// Error is a parse error: OVN's message and the byte offset of the token at
// which OVN's parser gave up.
type Error struct {
	// Offset is the byte offset in the parsed text.
	Offset int
	// Msg is the message, worded as the dialect's OVN release words it;
	// empty where OVN rejects the match without giving a reason (an
	// undefined template variable on 25.03+).
	Msg string
	// Note is aclc's explanation when OVN gives no message.
	Note string
}

// Error returns "offset N: message" (the Note when OVN has no message).
func (e *Error) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("offset %d: %s", e.Offset, e.Note)
	}
	return fmt.Sprintf("offset %d: %s", e.Offset, e.Msg)
}

// Resolver looks up address sets and port groups. AddressSet returns the
// addresses (as written in the NB/SB, e.g. "10.0.0.0/8") and whether the set
// exists; PortGroup returns the port names and whether the group exists on
// the datapath in question.
//
// OVN semantics: a port group exists on a datapath only where it has ports
// there, while the address sets `<pg>_ip4' and `<pg>_ip6' exist for every
// port group (ovn-northd creates them).
type Resolver interface {
	AddressSet(name string) ([]string, bool)
	PortGroup(name string) ([]string, bool)
}

// MemberResolver is an optional interface of a Resolver that converts an
// address set's entries and a port group's ports to constants itself, as
// OVN reads them (see MapResolver.Members); the slices are shared and must
// not be modified.
type MemberResolver interface {
	AddressSetMembers(name string) ([]Const, bool)
	PortGroupMembers(name string) ([]Const, bool)
}

// Expr is a parsed match expression.
type Expr struct {
	// Text is the parsed input.
	Text string
	// Root is the top of the syntax tree.
	Root Node
	// Warnings lists dubious-but-accepted constructs in order of position.
	Warnings []Warning
}

// String prints the expression canonically.
func (e *Expr) String() string { return e.Root.String() }

// Parse parses s as an OVN 23.03 logical-flow match expression against the
// default symbol table. With a nil resolver every $address_set and
// @port_group is assumed to exist. It returns an *Error on failure, which
// OVN would report as "parsing expression failed". Dialect.Parse parses
// for another release.
func Parse(s string, r Resolver) (*Expr, error) { return OVN2303().Parse(s, r) }

// ParseWithTemplates is Parse with chassis template variables defined, as
// ovn-controller expands them (see ExpandTemplates).
func ParseWithTemplates(s string, vars map[string]string, r Resolver) (*Expr, error) {
	return OVN2303().ParseWithTemplates(s, vars, r)
}

// ParseSymtab is Parse with an explicit symbol table.
func ParseSymtab(s string, t Symtab, r Resolver) (*Expr, error) {
	m := memoize(r)
	defer m.release()
	r = m.resolver()
	n, err := parseWith(s, t, r, nil)
	if err != nil {
		return nil, err
	}
	e := &Expr{Text: s, Root: n}
	e.Warnings = check(n, t, r)
	return e, nil
}

// Valid reports whether OVN 23.03 would accept s; the error says why not.
func Valid(s string, r Resolver) error { return OVN2303().Valid(s, r) }

type parser struct {
	text   string
	items  []item
	i      int
	symtab Symtab
	res    Resolver
	depth  int
	not    bool
	// negNominal accepts negated nominal tests (ParseNegatedNominals).
	negNominal bool

	// What the tree keeps is allocated from chunks sized for the whole
	// parse by counting its items (size), one allocation per kind instead
	// of one per node and constant.
	size   treeSize
	consts []Const
	cmps   []Cmp
	tests  []FieldTest
	terms  []Node
	boxes  boxes

	// Scratch that the next parse reuses: the members of the sets being
	// parsed (setState) and the terms of the conjunctions and disjunctions
	// being parsed.
	runs   [][]Const
	widths []int // per run, the widest constant's width; -1 unknown
	stack  []Node
}

// treeSize bounds what a parse allocates, counted from its items.
type treeSize struct{ consts, cmps, tests, terms, boxes int }

// sizeTree counts the items: every constant of the tree is a constant
// item, every integer needs at most a box for its value and one for its
// mask, every comparison has an operator (a range two: `relop field
// relop'), every field test is an identifier without one, and the terms
// of the chains are the operators plus one per chain (at most one chain
// per parenthesis level).
func sizeTree(items []item) treeSize {
	var z treeSize
	ids, rels, ranges, ops, parens := 0, 0, 0, 0, 0
	for i := range items {
		switch items[i].typ {
		case itemInteger:
			z.consts++
			z.boxes++
		case itemMaskedInteger:
			z.consts++
			z.boxes += 2
		case itemString, itemMacro, itemPortGroup:
			z.consts++
		case itemID:
			ids++
		case itemEq, itemNe, itemLt, itemLe, itemGt, itemGe:
			rels++
			if i >= 2 && items[i-1].typ == itemID && isRel(items[i-2].typ) {
				rels -= 2 // a range: one node, not a comparison
				ranges++
			}
		case itemAnd, itemOr:
			ops++
		case itemLParen:
			parens++
		}
	}
	z.cmps = max(rels, 0)
	z.tests = max(ids-z.cmps-ranges, 0)
	if ops > 0 {
		z.terms = ops + parens + 1
	}
	return z
}

func isRel(t itemType) bool { _, ok := isRelop(t); return ok }

// newCmp returns a zero Cmp of the parse's chunk.
func (p *parser) newCmp() *Cmp {
	if len(p.cmps) == cap(p.cmps) {
		p.cmps = make([]Cmp, 0, max(p.size.cmps, 1))
	}
	p.cmps = p.cmps[:len(p.cmps)+1]
	return &p.cmps[len(p.cmps)-1]
}

// newTest returns a zero FieldTest of the parse's chunk.
func (p *parser) newTest() *FieldTest {
	if len(p.tests) == cap(p.tests) {
		p.tests = make([]FieldTest, 0, max(p.size.tests, 2))
	}
	p.tests = p.tests[:len(p.tests)+1]
	return &p.tests[len(p.tests)-1]
}

// takeTerms copies a chain's terms into the parse's chunk, capped.
func (p *parser) takeTerms(ts []Node) []Node {
	if cap(p.terms)-len(p.terms) < len(ts) {
		p.terms = make([]Node, 0, max(p.size.terms, len(ts)))
	}
	n := len(p.terms)
	p.terms = append(p.terms, ts...)
	return p.terms[n : n+len(ts) : n+len(ts)]
}

// bailout carries the first error up to parseWith.
type bailout struct{ err *Error }

// parseState is a parser and lexer with their buffers, pooled: the parser
// copies what it keeps of the items, so their buffer is reused by the next
// parse (a 50k-ACL NB's matches lex into ~130 MB of items otherwise).
type parseState struct {
	p  parser
	lx lexer
}

var parseStates = sync.Pool{New: func() any { return new(parseState) }}

// release returns ps to the pool, keeping only its scratch buffers.
func (ps *parseState) release() {
	clear(ps.p.runs)
	clear(ps.p.stack)
	ps.p = parser{runs: ps.p.runs[:0], widths: ps.p.widths[:0], stack: ps.p.stack[:0]}
	putLexerBuf(&ps.lx)
	parseStates.Put(ps)
}

func parseWith(s string, t Symtab, r Resolver, vars map[string]string) (n Node, err error) {
	return parseMode(s, t, r, vars, false)
}

// parseMode is parseWith, accepting negated nominal tests when
// negNominal (Dialect.ParseNegatedNominals).
func parseMode(s string, t Symtab, r Resolver, vars map[string]string, negNominal bool) (n Node, err error) {
	text, origin := ExpandTemplates(s, vars)
	ps := parseStates.Get().(*parseState)
	p := &ps.p
	p.text, p.items, p.symtab, p.res = text, ps.lx.lex(text, false), t, r
	p.negNominal = negNominal
	p.size = sizeTree(p.items)
	p.boxes.reset(p.size.boxes)
	defer ps.release()
	defer func() {
		if e := recover(); e != nil {
			b, ok := e.(bailout)
			if !ok {
				panic(e)
			}
			n, err = nil, b.err
			if origin != nil && b.err.Offset < len(origin) {
				b.err.Offset = origin[b.err.Offset]
			}
		}
		if n != nil && origin != nil {
			remap(n, origin)
		}
	}()
	n = p.expr()
	if p.tok().typ != itemEOF {
		p.syntaxf("expecting end of input")
	}
	return n, nil
}

// ExpandTemplates is OVN 23.03's lexer_parse_template_string, which
// ovn-controller and ovn-trace apply to every logical-flow match before
// parsing it: when s contains a `^' anywhere, s is re-tokenized and the
// tokens are joined back without any separator, `^name' replaced by
// vars[name] or, when undefined, by `name'; a lexical error becomes
// `error("message")'. Without a `^' s is returned unchanged. The second
// result maps each byte offset of the result (and its end) to the offset in
// s it came from.
func ExpandTemplates(s string, vars map[string]string) (string, []int) {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i] // OVN works on C strings
	}
	if !strings.Contains(s, "^") {
		return s, nil
	}
	var b strings.Builder
	var origin []int
	for _, it := range lexMode(s, true) {
		if it.typ == itemEOF {
			break
		}
		text := it.val
		switch it.typ {
		case itemTemplate:
			text = it.str
			if v, ok := vars[it.str]; ok {
				text = v
			}
		case itemError:
			text = "error(" + quote(it.val) + ")"
		}
		b.WriteString(text)
		for range len(text) {
			origin = append(origin, it.pos)
		}
	}
	return b.String(), append(origin, len(s))
}

// remap translates the positions in n from expanded text back to the
// original text.
func remap(n Node, origin []int) {
	at := func(p *int) {
		if *p < len(origin) {
			*p = origin[*p]
		}
	}
	set := func(cs *ConstSet) {
		at(&cs.Pos)
		for i := range cs.Values {
			at(&cs.Values[i].Pos)
		}
	}
	Inspect(n, func(n Node) bool {
		switch n := n.(type) {
		case *Binary:
			at(&n.Pos)
		case *Not:
			at(&n.Pos)
		case *Paren:
			at(&n.Pos)
		case *Bool:
			at(&n.Pos)
		case *ChassisResident:
			at(&n.Pos)
		case *FieldTest:
			at(&n.Pos)
			at(&n.Field.Pos)
		case *Cmp:
			at(&n.Pos)
			at(&n.Field.Pos)
			set(&n.Values)
		case *Range:
			at(&n.Pos)
			at(&n.Field.Pos)
			set(&n.Low)
			set(&n.High)
		}
		return true
	})
}

func (p *parser) tok() item { return p.items[p.i] }

func (p *parser) next() {
	if p.i < len(p.items)-1 {
		p.i++
	}
}

func (p *parser) peek() itemType {
	if p.i+1 < len(p.items) {
		return p.items[p.i+1].typ
	}
	return itemEOF
}

func (p *parser) match(t itemType) bool {
	if p.tok().typ == t {
		p.next()
		return true
	}
	return false
}

// common is OVN's lexer_error_handle_common: a pending lexical error wins
// over whatever the parser wanted to say.
func (p *parser) common() {
	if t := p.tok(); t.typ == itemError {
		panic(bailout{&Error{Offset: t.pos, Msg: t.val}})
	}
}

// errorf is OVN's lexer_error.
func (p *parser) errorf(format string, args ...any) {
	p.common()
	panic(bailout{&Error{Offset: p.tok().pos, Msg: fmt.Sprintf(format, args...)}})
}

// syntaxf is OVN's lexer_syntax_error.
func (p *parser) syntaxf(format string, args ...any) {
	p.common()
	t := p.tok()
	msg := "Syntax error"
	if t.typ == itemEOF {
		msg += " at end of input"
	} else {
		msg += " at `" + t.val + "'"
	}
	if format != "" {
		msg += " " + fmt.Sprintf(format, args...)
	}
	panic(bailout{&Error{Offset: t.pos, Msg: msg + "."}})
}

func (p *parser) forceMatch(t itemType) {
	if !p.match(t) {
		p.syntaxf("expecting `%s'", itemNames[t])
	}
}

// expr is expr_parse__.
func (p *parser) expr() Node {
	pos := p.tok().pos
	e := p.notExpr()
	t := p.tok().typ
	if t != itemAnd && t != itemOr {
		return e
	}
	base := len(p.stack) // the terms of enclosing chains are below
	p.stack = append(p.stack, e)
	p.next()
	for {
		n := p.notExpr()
		p.stack = append(p.stack, n)
		if !p.match(t) {
			break
		}
	}
	if u := p.tok().typ; u == itemAnd || u == itemOr {
		p.errorf("&& and || must be parenthesized when used together.")
	}
	b := &Binary{Pos: pos, Or: t == itemOr, Terms: p.takeTerms(p.stack[base:])}
	clear(p.stack[base:])
	p.stack = p.stack[:base]
	return b
}

// notExpr is expr_parse_not.
func (p *parser) notExpr() Node {
	pos := p.tok().pos
	if !p.match(itemNot) {
		n, _ := p.primary()
		return n
	}
	p.not = !p.not
	n, atomic := p.primary()
	p.not = !p.not
	if !atomic {
		p.errorf("Missing parentheses around operand of !.")
	}
	return &Not{Pos: pos, X: n}
}

func isRelop(t itemType) (Relop, bool) {
	switch t {
	case itemEq:
		return Eq, true
	case itemNe:
		return Ne, true
	case itemLt:
		return Lt, true
	case itemLe:
		return Le, true
	case itemGt:
		return Gt, true
	case itemGe:
		return Ge, true
	}
	return 0, false
}

// primary is expr_parse_primary.
func (p *parser) primary() (Node, bool) {
	start := p.tok()
	if p.match(itemLParen) {
		if p.depth >= MaxParenDepth {
			p.errorf("Parentheses nested too deeply.")
		}
		p.depth++
		e := p.expr()
		p.depth--
		p.forceMatch(itemRParen)
		return &Paren{Pos: start.pos, X: e}, true
	}
	switch start.typ {
	case itemTemplate:
		p.errorf("Unexpanded template.")
	case itemID:
		if p.peek() == itemLParen {
			if start.str == "is_chassis_resident" {
				p.next()
				p.next()
				t := p.tok()
				if t.typ != itemString {
					p.syntaxf("expecting string")
				}
				p.next()
				p.forceMatch(itemRParen)
				return &ChassisResident{Pos: start.pos, Text: t.val, Port: t.str}, true
			}
			p.errorf("parsing function name")
		}
		f := p.field()
		r, ok := isRelop(p.tok().typ)
		if !ok {
			if f.NBits == 0 || p.tok().typ == itemEquals {
				p.syntaxf("expecting relational operator")
			} else if f.NBits > 1 && !p.not {
				p.errorf("Explicit `!= 0' is required for inequality test of multibit field against 0.")
			}
			p.checkNominal(f, Ne, zeroRuns)
			n := p.newTest()
			*n = FieldTest{Pos: start.pos, Field: f}
			return n, true
		}
		p.next()
		cs, st := p.constSet()
		p.makeCmp(f, r, cs, &st)
		n := p.newCmp()
		*n = Cmp{Pos: start.pos, Field: f, Op: r, Values: cs}
		return n, false
	}

	c1, st1 := p.constSet()
	if _, rel := isRelop(p.tok().typ); !rel && !st1.unknown && !c1.Curly {
		if ms := p.members(&st1); len(ms) == 1 && len(ms[0]) == 1 {
			v := ms[0][0]
			if v.Kind == IntConst && v.Format == Decimal && v.Value.Cmp(bigOne) <= 0 {
				return &Bool{Pos: start.pos, Value: v.Value.Sign() != 0}, true
			}
		}
	}
	r1, ok := isRelop(p.tok().typ)
	if !ok {
		p.syntaxf("expecting relational operator")
	}
	p.next()
	f := p.field()
	r2, ok := isRelop(p.tok().typ)
	if !ok {
		p.makeCmp(f, r1.Turn(), c1, &st1)
		n := p.newCmp()
		*n = Cmp{Pos: start.pos, Field: f, Op: r1, Values: c1, ConstFirst: true}
		return n, false
	}
	p.next()
	c2, st2 := p.constSet()
	lower := func(r Relop) bool { return r == Lt || r == Le }
	upper := func(r Relop) bool { return r == Gt || r == Ge }
	if !((lower(r1) && lower(r2)) || (upper(r1) && upper(r2))) {
		p.errorf("Range expressions must have the form `x < field < y' or `x > field > y', with each `<' optionally replaced by `<=' or `>' by `>=').")
	}
	p.makeCmp(f, r1.Turn(), c1, &st1)
	p.makeCmp(f, r2, c2, &st2)
	return &Range{Pos: start.pos, Low: c1, LowOp: r1, Field: f, HighOp: r2, High: c2}, false
}

// field is parse_field.
func (p *parser) field() Field {
	t := p.tok()
	if t.typ != itemID {
		p.syntaxf("expecting field name")
	}
	sym := p.symtab[t.str]
	if sym == nil {
		p.syntaxf("expecting field name")
	}
	p.next()
	f := Field{Pos: t.pos, Symbol: sym, NBits: sym.Width}
	if !p.match(itemLSquare) {
		return f
	}
	if sym.Width == 0 {
		p.errorf("Cannot select subfield of string field %s.", sym.Name)
	}
	low := p.smallInt()
	high := low
	if p.match(itemEllipsis) {
		high = p.smallInt()
	}
	p.forceMatch(itemRSquare)
	switch {
	case low > high:
		p.errorf("Invalid bit range %d to %d.", low, high)
	case high >= sym.Width:
		p.errorf("Cannot select bits %d to %d of %d-bit field %s.", low, high, sym.Width, sym.Name)
	case sym.Level == Nominal && (low != 0 || high != sym.Width-1):
		p.errorf("Cannot select subfield of nominal field %s.", sym.Name)
	}
	f.Sliced, f.Ofs, f.NBits = true, low, high-low+1
	return f
}

// smallInt is lexer_force_int: a decimal integer no larger than INT_MAX.
func (p *parser) smallInt() int {
	t := p.tok()
	if t.typ != itemInteger || t.fmt != Decimal || !t.small(1<<31-1) {
		p.syntaxf("expecting small integer")
	}
	p.next()
	return int(t.w[0])
}

// constSet is parse_constant_set. It returns the set as written and its
// resolved state (type and members) for make_cmp's checks.
func (p *parser) constSet() (ConstSet, setState) {
	cs := ConstSet{Pos: p.tok().pos}
	if len(p.consts) == cap(p.consts) {
		p.consts = make([]Const, 0, max(p.size.consts, 1))
	}
	free := p.consts[len(p.consts):]
	cs.Values = free[:0]
	st := setState{lo: len(p.runs)}
	if p.match(itemLCurly) {
		cs.Curly = true
		for {
			cs.Values = append(cs.Values, p.constant(&st, cs.Values))
			p.match(itemComma)
			if p.match(itemRCurly) {
				break
			}
		}
	} else {
		cs.Values = append(cs.Values, p.constant(&st, cs.Values))
	}
	p.flush(&st, cs.Values)
	st.hi = len(p.runs)
	n := len(cs.Values)
	if n <= cap(free) { // in the chunk (else append copied the set out)
		p.consts = p.consts[:len(p.consts)+n]
	}
	cs.Values = cs.Values[:n:n]
	return cs, st
}

// setState is what OVN's struct expr_constant_set knows while a set is
// parsed: its type and its resolved members. Unresolved references (nil
// resolver) are assumed to exist and to be non-empty. The members are
// runs, in order, of the parser's runs: the constants between references
// (slices of the set's values) and each resolved reference's members (the
// resolver's slices), never concatenated; empty runs are left out.
type setState struct {
	isStr   bool // cs->type == EXPR_C_STRING
	unknown bool // holds an unresolved reference
	any     bool // has a member
	start   int  // the first of the set's values not in a run yet
	lo, hi  int  // once parsed, the members are p.runs[lo:hi]
}

func (st *setState) nonEmpty() bool { return st.any || st.unknown }

// flush makes the set's constants since the last reference (vals[st.start:])
// a run.
func (p *parser) flush(st *setState, vals []Const) {
	if st.start < len(vals) {
		p.runs = append(p.runs, vals[st.start:len(vals):len(vals)])
		p.widths = append(p.widths, -1)
	}
}

// members returns the parsed set's members as runs.
func (p *parser) members(st *setState) [][]Const { return p.runs[st.lo:st.hi] }

// assign is assign_constant_set_type.
func (p *parser) assign(st *setState, isStr bool) {
	if !st.nonEmpty() || st.isStr == isStr {
		st.isStr = isStr
		return
	}
	if st.isStr {
		p.syntaxf("expecting string")
	}
	p.syntaxf("expecting integer")
}

var (
	bigZero = newInt(0)
	bigOne  = newInt(1)
)

// zeroConsts is `0' as a set, for the check of `!field' (read only);
// zeroRuns is it as the runs of a set's members.
var (
	zeroConsts = []Const{{Kind: IntConst, Format: Hexadecimal, Value: bigZero}}
	zeroRuns   = [][]Const{zeroConsts}
)

// constant is parse_constant; sofar are the set's constants before it.
func (p *parser) constant(st *setState, sofar []Const) Const {
	t := &p.items[p.i]
	c := Const{Pos: t.pos, Text: t.val}
	switch t.typ {
	case itemTemplate:
		p.errorf("Unexpanded template.")
	case itemString:
		p.assign(st, true)
		c.Kind, c.Str = StringConst, t.str
		st.any = true
	case itemInteger, itemMaskedInteger:
		p.assign(st, false)
		c.Kind, c.Format, c.Value = IntConst, t.fmt, t.value(&p.boxes)
		if t.typ == itemMaskedInteger {
			c.Kind, c.Mask, c.HostBits = MaskedConst, t.maskValue(&p.boxes), t.hostb
		}
		st.any = true
	case itemMacro, itemPortGroup:
		isStr := t.typ == itemPortGroup
		c.Kind, c.Str = AddressSetRef, t.str
		if isStr {
			c.Kind = PortGroupRef
		}
		if p.res == nil {
			p.assign(st, isStr)
			p.flush(st, sofar)
			st.start = len(sofar) + 1
			st.unknown = true
			break
		}
		members, ok := resolveRef(p.res, c)
		if !ok && isStr {
			p.syntaxf("expecting port group name")
		} else if !ok {
			p.syntaxf("expecting address set name")
		}
		p.assign(st, isStr)
		p.flush(st, sofar)
		st.start = len(sofar) + 1
		if len(members) > 0 {
			// The resolver's slice is shared and only read.
			w := -1
			if s := summaryOf(p.res, c, members); s != nil {
				w = s.maxWidth
			}
			p.runs = append(p.runs, members)
			p.widths = append(p.widths, w)
			st.any = true
		}
	default:
		p.syntaxf("expecting constant")
	}
	p.next()
	return c
}

// resolveRef expands an address set or port group reference through r into
// its members; ok is false when it does not exist.
func resolveRef(r Resolver, c Const) (members []Const, ok bool) {
	mr, cached := r.(MemberResolver)
	switch {
	case c.Kind == AddressSetRef && cached:
		return mr.AddressSetMembers(c.Str)
	case c.Kind == AddressSetRef:
		addrs, ok := r.AddressSet(c.Str)
		return addressSetMembers(addrs), ok
	case cached:
		return mr.PortGroupMembers(c.Str)
	}
	ports, ok := r.PortGroup(c.Str)
	return portGroupMembers(ports), ok
}

// portGroupMembers converts a port group's ports to string constants.
func portGroupMembers(ports []string) []Const {
	if len(ports) == 0 {
		return nil
	}
	members := make([]Const, 0, len(ports))
	for _, port := range ports {
		members = append(members, Const{Kind: StringConst, Str: port, Text: quote(port)})
	}
	return members
}

// ExpandSet returns the constants of cs with its $address_set and
// @port_group references expanded through r as Eval expands them
// (address set entries read as ovn-controller reads them, port group
// ports as string constants, in order), so that other evaluators of a
// match (package pset) see the same members; a reference needs a non-nil
// r and must exist. The result may share memory with cs or r's member
// cache: callers must not modify it.
func ExpandSet(r Resolver, cs ConstSet) ([]Const, error) { return expandSet(r, cs) }

// expandSet returns the constants of cs with references expanded through
// r; a reference needs a non-nil r and must exist.
func expandSet(r Resolver, cs ConstSet) ([]Const, error) {
	// Without references, or with a single one, the constants are a slice
	// that exists already (callers only read it).
	refs := 0
	for _, c := range cs.Values {
		if c.Kind == AddressSetRef || c.Kind == PortGroupRef {
			refs++
		}
	}
	if refs == 0 {
		return cs.Values, nil
	}
	if refs == 1 && len(cs.Values) == 1 && r != nil {
		if ms, ok := resolveRef(r, cs.Values[0]); ok {
			return ms, nil
		}
	}
	var out []Const
	for _, c := range cs.Values {
		if c.Kind != AddressSetRef && c.Kind != PortGroupRef {
			out = append(out, c)
			continue
		}
		if r == nil {
			return nil, fmt.Errorf("%s: cannot expand without a resolver", c.Text)
		}
		ms, ok := resolveRef(r, c)
		if !ok {
			return nil, fmt.Errorf("%s does not exist", c.Text)
		}
		out = append(out, ms...)
	}
	return out, nil
}

// expandRuns is expandSet without the copy: it appends to out the runs of
// constants expandSet would concatenate (the constants between references,
// and each reference's members), in order, with the same errors.
func expandRuns(r Resolver, cs ConstSet, out [][]Const) ([][]Const, error) {
	start := 0
	for i, c := range cs.Values {
		if c.Kind != AddressSetRef && c.Kind != PortGroupRef {
			continue
		}
		if start < i {
			out = append(out, cs.Values[start:i])
		}
		start = i + 1
		if r == nil {
			return nil, fmt.Errorf("%s: cannot expand without a resolver", c.Text)
		}
		ms, ok := resolveRef(r, c)
		if !ok {
			return nil, fmt.Errorf("%s does not exist", c.Text)
		}
		out = append(out, ms)
	}
	if start < len(cs.Values) {
		out = append(out, cs.Values[start:])
	}
	return out, nil
}

// addressSetMembers converts address set entries the way
// expr_constant_set_create_integers does: the first token of each entry
// must be an integer or masked integer, other entries are skipped; the result
// is sorted by value (masked after unmasked on ties).
func addressSetMembers(addrs []string) []Const {
	out := make([]Const, 0, len(addrs))
	l := lexers.Get().(*lexer) // the items are not kept: reused
	defer putLexer(l)
	b := boxes{hint: len(addrs)}
	for _, a := range addrs {
		t := &l.lex(a, false)[0]
		if t.typ != itemInteger && t.typ != itemMaskedInteger {
			continue
		}
		c := Const{Kind: IntConst, Text: t.val, Format: t.fmt, Value: t.value(&b)}
		if t.typ == itemMaskedInteger {
			c.Kind, c.Mask, c.HostBits = MaskedConst, t.maskValue(&b), t.hostb
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil
	}
	slices.SortStableFunc(out, func(x, y Const) int {
		if d := x.Value.Cmp(y.Value); d != 0 {
			return d
		}
		mx, my := x.Kind == MaskedConst, y.Kind == MaskedConst
		switch {
		case mx != my && mx:
			return -1
		case mx != my:
			return 1
		case mx:
			return x.Mask.Cmp(y.Mask)
		}
		return 0
	})
	return out
}

// makeCmp performs make_cmp's checks: type_check, then the operator rules.
func (p *parser) makeCmp(f Field, r Relop, cs ConstSet, st *setState) {
	isStrField := f.Symbol.Width == 0
	if st.isStr != isStrField {
		kind, ckind := "Integer", "integer"
		if isStrField {
			kind = "String"
		}
		if st.isStr {
			ckind = "string"
		}
		p.errorf("%s field %s is not compatible with %s constant.", kind, f.Symbol.Name, ckind)
	}
	members := p.members(st)
	if !isStrField {
		for i, run := range members {
			if w := p.widths[st.lo+i]; w >= 0 && w <= f.Symbol.Width {
				continue // none too wide (an address set's summary)
			}
			for _, v := range run {
				if w := v.Width(); w > f.Symbol.Width {
					p.errorf("%d-bit constant is not compatible with %d-bit field %s.", w, f.Symbol.Width, f.Symbol.Name)
				}
			}
		}
	}
	if r != Eq && r != Ne {
		if cs.Curly {
			p.errorf("Only == and != operators may be used with value sets.")
		}
		if f.Symbol.Level == Nominal || f.Symbol.Level == Boolean {
			p.errorf("Only == and != operators may be used with %s field %s.", f.Symbol.Level, f.Symbol.Name)
		}
		if !st.nonEmpty() {
			p.errorf("Only == and != operators may be used to compare a field against an empty value set.")
		}
		if len(members) > 0 && members[0][0].Kind == MaskedConst {
			p.errorf("Only == and != operators may be used with masked constants.  Consider using subfields instead (e.g. eth.src[0..15] > 0x1111 in place of eth.src > 00:00:00:00:11:11/00:00:00:00:ff:ff).")
		}
	}
	p.checkNominal(f, r, members)
}

// checkNominal checks the use of a nominal field against a set's members
// (runs of them).
func (p *parser) checkNominal(f Field, r Relop, members [][]Const) {
	if f.Symbol.Level != Nominal || p.negNominal {
		return
	}
	if f.Symbol.IsPredicate() {
		for _, run := range members {
			for _, v := range run {
				positive := v.Value.Bit(0) == 1
				positive = positive != (r == Ne)
				positive = positive != p.not
				if !positive {
					n := f.Symbol.Name
					p.errorf("Nominal predicate %s may only be tested positively, e.g. `%s' or `%s == 1' but not `!%s' or `%s == 0'.", n, n, n, n, n)
				}
			}
		}
		return
	}
	want := Eq
	if p.not {
		want = Ne
	}
	if r != want {
		p.errorf("Nominal field %s may only be tested for equality (taking enclosing `!' operators into account).", f.Symbol.Name)
	}
}
