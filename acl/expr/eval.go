package expr

import (
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// Microflow is one packet as the evaluator sees it: a value for every field
// of the symbol table (unset fields are 0, unset string fields are ""), like
// the struct flow that ovn-trace evaluates logical flows against.
//
// Values are stored per underlying field: reg0 is kept as bits 96..127 of
// xxreg0, ct.new as bit 0 of ct_state, so every alias sees the same bits.
type Microflow struct {
	symtab Symtab
	ints   map[string]*big.Int // root field name → value
	strs   map[string]string   // inport, outport
}

// NewMicroflow returns an all-zero microflow over the default symbol table.
func NewMicroflow() *Microflow { return NewMicroflowSymtab(DefaultSymtab()) }

// NewMicroflowSymtab returns an all-zero microflow over symbol table t.
func NewMicroflowSymtab(t Symtab) *Microflow {
	return &Microflow{symtab: t, ints: map[string]*big.Int{}, strs: map[string]string{}}
}

// Clone returns an independent copy of m.
func (m *Microflow) Clone() *Microflow {
	c := NewMicroflowSymtab(m.symtab)
	for k, v := range m.ints {
		c.ints[k] = new(big.Int).Set(v)
	}
	for k, v := range m.strs {
		c.strs[k] = v
	}
	return c
}

// shallowClone copies m sharing the stored values, which are replaced, never
// modified in place.
func (m *Microflow) shallowClone() *Microflow {
	c := NewMicroflowSymtab(m.symtab)
	for k, v := range m.ints {
		c.ints[k] = v
	}
	for k, v := range m.strs {
		c.strs[k] = v
	}
	return c
}

// parseFieldRef parses a field reference such as "reg0[16]" or "ct.new".
func parseFieldRef(t Symtab, name string) (f Field, err error) {
	p := &parser{text: name, items: lex(name), symtab: t}
	defer func() {
		if e := recover(); e != nil {
			b, ok := e.(bailout)
			if !ok {
				panic(e)
			}
			err = fmt.Errorf("field %q: %s", name, b.err.Msg)
		}
	}()
	f = p.field()
	if p.tok().typ != itemEOF {
		p.syntaxf("expecting end of input")
	}
	return f, nil
}

// Set assigns a field by its OVN name, optionally sliced: Set("reg0[16]", 1),
// Set("ip4.src", "10.0.0.1"), Set("eth.src", "00:00:00:00:00:01"),
// Set("inport", "lsp1"), Set("ct.new", true), Set("ct_label.label", 42).
// Integer values may be Go integers, bool, *big.Int, or strings in any
// constant syntax of the match language. Setting a predicate to true
// (Set("tcp", 1), Set("ip4", true)) assigns the fields its expansion and
// prerequisites pin down (tcp sets ip.proto = 6); choices it leaves open,
// such as ip4 versus ip6 for tcp or the whole of "ip", are left unset.
func (m *Microflow) Set(name string, v any) error {
	f, err := parseFieldRef(m.symtab, name)
	if err != nil {
		return err
	}
	if f.Symbol.IsString() {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s is a string field; got %T", name, v)
		}
		m.strs[f.Symbol.Name] = s
		return nil
	}
	n, err := toBig(v)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if n.BitLen() > f.NBits {
		return fmt.Errorf("%s: %d-bit value does not fit %d-bit field", name, n.BitLen(), f.NBits)
	}
	if f.Symbol.IsPredicate() {
		if n.Sign() == 0 {
			return fmt.Errorf("%s: only true can be set on a predicate", name)
		}
		s := newSolver(m.symtab, nil)
		s.lenient = true
		for name, v := range m.strs { // the ports set so far must agree
			s.strs = append(s.strs, strPin{name, v})
		}
		err := s.constrainAll(mustParse(m.symtab, f.Symbol.Predicate), false)
		s.apply(m)
		return err
	}
	m.setBits(f, n, nil)
	return nil
}

// setBits stores v (masked by mask when non-nil, in slice coordinates) into
// the bits of f.
func (m *Microflow) setBits(f Field, v, mask *big.Int) {
	root, ofs := f.Symbol.Root()
	ofs += f.Ofs
	all := ones(f.NBits)
	if mask == nil {
		mask = all
	}
	mask = new(big.Int).And(mask, all)
	cur := m.ints[root.Name]
	if cur == nil {
		cur = new(big.Int)
	}
	shMask := new(big.Int).Lsh(mask, uint(ofs))
	cur = new(big.Int).AndNot(cur, shMask)
	cur.Or(cur, new(big.Int).Lsh(new(big.Int).And(v, mask), uint(ofs)))
	m.ints[root.Name] = cur
}

// Get returns the value of an integer field (optionally sliced) or, for
// inport/outport, the port name.
func (m *Microflow) Get(name string) (any, error) {
	f, err := parseFieldRef(m.symtab, name)
	if err != nil {
		return nil, err
	}
	if f.Symbol.IsString() {
		return m.strs[f.Symbol.Name], nil
	}
	if f.Symbol.IsPredicate() {
		return nil, fmt.Errorf("%s is a predicate; use Eval", name)
	}
	return m.bits(f), nil
}

// bits returns the bits of f.
func (m *Microflow) bits(f Field) *big.Int {
	root, ofs := f.Symbol.Root()
	cur := m.ints[root.Name]
	if cur == nil {
		return new(big.Int)
	}
	v := new(big.Int).Rsh(cur, uint(ofs+f.Ofs))
	return v.And(v, ones(f.NBits))
}

// String prints m as a microflow expression ovn-trace would accept: every
// non-zero field and non-empty port, in name order, e.g.
// `eth.type == 0x800 && inport == "lsp1" && ip.proto == 6 && ...'.
func (m *Microflow) String() string {
	var parts []string
	for name, v := range m.ints {
		if v.Sign() != 0 {
			parts = append(parts, name+" == "+formatValue(m.symtab[name], v))
		}
	}
	for name, s := range m.strs {
		if s != "" {
			parts = append(parts, name+" == "+quote(s))
		}
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "1"
	}
	return strings.Join(parts, " && ")
}

// formatValue prints v in the natural notation of field sym.
func formatValue(sym *Symbol, v *big.Int) string {
	switch {
	case sym == nil:
	case sym.Width == 48 && (strings.HasPrefix(sym.Name, "eth.") || strings.HasSuffix(sym.Name, ".sha") ||
		strings.HasSuffix(sym.Name, ".tha") || strings.HasSuffix(sym.Name, ".sll") || strings.HasSuffix(sym.Name, ".tll")):
		b := make([]byte, 6)
		v.FillBytes(b)
		return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", b[0], b[1], b[2], b[3], b[4], b[5])
	case sym.Width == 32 && (strings.HasPrefix(sym.Name, "ip4.") || strings.HasSuffix(sym.Name, ".spa") || strings.HasSuffix(sym.Name, ".tpa")):
		var b [4]byte
		v.FillBytes(b[:])
		return netip.AddrFrom4(b).String()
	case sym.Width == 128 && (strings.HasPrefix(sym.Name, "ip6.") || sym.Name == "nd.target"):
		var b [16]byte
		v.FillBytes(b[:])
		return netip.AddrFrom16(b).String()
	}
	if v.IsUint64() && v.Uint64() < 10 {
		return v.String()
	}
	return "0x" + v.Text(16)
}

// onesTable holds 2^n-1 for every field width; callers never modify it.
var onesTable = func() (t [129]*big.Int) {
	for n := range t {
		t[n] = new(big.Int).Sub(new(big.Int).Lsh(bigOne, uint(n)), bigOne)
	}
	return t
}()

// ones returns 2^n-1. The result must not be modified.
func ones(n int) *big.Int {
	if n < len(onesTable) {
		return onesTable[n]
	}
	return new(big.Int).Sub(new(big.Int).Lsh(bigOne, uint(n)), bigOne)
}

// toBig converts a Go value or a constant in match syntax to an integer.
func toBig(v any) (*big.Int, error) {
	switch v := v.(type) {
	case bool:
		if v {
			return big.NewInt(1), nil
		}
		return big.NewInt(0), nil
	case int:
		if v < 0 {
			return nil, fmt.Errorf("negative value %d", v)
		}
		return big.NewInt(int64(v)), nil
	case int64:
		if v < 0 {
			return nil, fmt.Errorf("negative value %d", v)
		}
		return big.NewInt(v), nil
	case int32:
		return toBig(int64(v))
	case uint:
		return new(big.Int).SetUint64(uint64(v)), nil
	case uint8:
		return new(big.Int).SetUint64(uint64(v)), nil
	case uint16:
		return new(big.Int).SetUint64(uint64(v)), nil
	case uint32:
		return new(big.Int).SetUint64(uint64(v)), nil
	case uint64:
		return new(big.Int).SetUint64(v), nil
	case *big.Int:
		if v.Sign() < 0 {
			return nil, fmt.Errorf("negative value %s", v)
		}
		return new(big.Int).Set(v), nil
	case netip.Addr:
		return new(big.Int).SetBytes(v.AsSlice()), nil
	case string:
		items := lex(v)
		if len(items) != 2 || items[0].typ != itemInteger {
			return nil, fmt.Errorf("%q is not an integer, IPv4, IPv6 or Ethernet constant", v)
		}
		return items[0].bigValue(), nil
	}
	return nil, fmt.Errorf("unsupported value type %T", v)
}

// Eval evaluates e against microflow m the way ovn-trace does: with every
// field's prerequisites ANDed in (so tcp.dst == 80 is false for a UDP
// packet, and so is !(tcp.dst == 80): negation does not cover
// prerequisites), predicates expanded, address sets and port groups
// resolved through r. With a nil r an expression that references a set
// cannot be evaluated and an error is returned. is_chassis_resident(port)
// asks r if it implements ChassisResidency (ovn-trace: true for every port
// that exists); otherwise it is true, as in OVN's expr_evaluate.
func Eval(e *Expr, m *Microflow, r Resolver) (bool, error) {
	return EvalNode(e.Root, m, r)
}

// EvalNode is Eval on a syntax tree.
func EvalNode(n Node, m *Microflow, r Resolver) (ok bool, err error) {
	ev := &evaluator{m: m, r: r}
	defer func() {
		if e := recover(); e != nil {
			ee, isEval := e.(evalError)
			if !isEval {
				panic(e)
			}
			ok, err = false, ee.err
		}
	}()
	return ev.eval(n, false), nil
}

// ChassisResidency is an optional interface of a Resolver that decides
// is_chassis_resident(port) for Eval.
type ChassisResidency interface {
	IsChassisResident(port string) bool
}

// PortTunnelKeys is an optional interface of a Resolver: the tunnel key
// of a logical port of the datapath, which OVN keeps in the register behind
// inport/outport, so that Eval can read 26.03.1's __inport and __outport
// (from_evpn_vtep is __inport[31]) as ovn-trace does. Without it, or for
// a name that is no port, the register is 0 unless the microflow sets it.
type PortTunnelKeys interface {
	PortTunnelKey(name string) (uint32, bool)
}

// PortLookup is an optional interface of a Resolver: when implemented,
// comparing inport/outport with a name that is not a logical port of the
// datapath is false whatever the operator, as in ovn-trace (which compares
// port tunnel keys).
type PortLookup interface {
	PortExists(name string) bool
}

type evalError struct{ err error }

type evaluator struct {
	m *Microflow
	r Resolver
}

func (ev *evaluator) eval(n Node, neg bool) bool {
	switch n := n.(type) {
	case *Binary:
		or := n.Or != neg // De Morgan
		for _, t := range n.Terms {
			if ev.eval(t, neg) == or {
				return or
			}
		}
		return !or
	case *Not:
		return ev.eval(n.X, !neg)
	case *Paren:
		return ev.eval(n.X, neg)
	case *Bool:
		return n.Value != neg
	case *ChassisResident:
		resident := true
		if c, ok := ev.r.(ChassisResidency); ok {
			resident = c.IsChassisResident(n.Port)
		}
		return resident != neg
	case *FieldTest:
		return ev.cmp(n.Field, Ne, []Const{{Kind: IntConst, Format: Hexadecimal, Value: bigZero}}, neg)
	case *Cmp:
		return ev.cmp(n.Field, n.FieldOp(), ev.members(n.Values), neg)
	case *Range:
		lo := ev.cmp(n.Field, n.LowOp.Turn(), ev.members(n.Low), neg)
		hi := ev.cmp(n.Field, n.HighOp, ev.members(n.High), neg)
		if neg {
			return lo || hi
		}
		return lo && hi
	}
	panic(evalError{fmt.Errorf("unknown node %T", n)})
}

func (ev *evaluator) members(cs ConstSet) []Const {
	out, err := expandSet(ev.r, cs)
	if err != nil {
		panic(evalError{err})
	}
	return out
}

// cmp is make_cmp + expr_not + annotation + expr_evaluate_cmp for a field
// compared (with orig, the operator as written with the field on the left)
// against a set; neg says an odd number of `!' enclose it.
func (ev *evaluator) cmp(f Field, orig Relop, values []Const, neg bool) bool {
	if len(values) == 0 {
		return (orig == Ne) != neg
	}
	op := orig
	if neg {
		op = orig.Invert()
	}
	// A set under == is a disjunction, under any other operator a
	// conjunction; negation swaps the two (De Morgan).
	any := (orig == Eq) != neg
	for _, v := range values {
		if ev.cmpOne(f, op, v) == any {
			return any
		}
	}
	return !any
}

func (ev *evaluator) cmpOne(f Field, op Relop, c Const) bool {
	sym := f.Symbol
	if sym.Prereqs != "" && !ev.eval(expansionsOf(ev.m.symtab, sym).prereqs, false) {
		return false
	}
	if sym.IsPredicate() {
		positive := (c.Value.Bit(0) == 1) != (op == Ne)
		return ev.eval(expansionsOf(ev.m.symtab, sym).pred, false) == positive
	}
	if sym.IsString() {
		if pl, ok := ev.r.(PortLookup); ok && !pl.PortExists(c.Str) {
			return false // ovn-trace: a name that is no port never compares
		}
		return op.test(strings.Compare(ev.m.strs[sym.Name], c.Str))
	}
	all := ones(f.NBits)
	mask := all
	val := new(big.Int).And(c.Value, all)
	if c.Kind == MaskedConst {
		mask = new(big.Int).And(c.Mask, all)
		val.And(val, mask)
	}
	got := ev.bits(f)
	got.And(got, mask)
	return op.test(got.Cmp(val))
}

// bits is Microflow.bits, with a port register that the microflow does not
// set read as its port's tunnel key.
func (ev *evaluator) bits(f Field) *big.Int {
	root, ofs := f.Symbol.Root()
	if root.PortRegister == "" || ev.m.ints[root.Name] != nil {
		return ev.m.bits(f)
	}
	var key uint32
	if pk, ok := ev.r.(PortTunnelKeys); ok {
		key, _ = pk.PortTunnelKey(ev.m.strs[root.PortRegister])
	}
	v := new(big.Int).Rsh(new(big.Int).SetUint64(uint64(key)), uint(ofs+f.Ofs))
	return v.And(v, ones(f.NBits))
}

type expKey struct {
	t uintptr // identity of the symbol table
	s string
}

var (
	expMu    sync.RWMutex
	expCache = map[expKey]Node{}
)

// symExpansions are a symbol's Predicate and Prereqs parsed against the
// symbol table t (its identity), nil where empty.
type symExpansions struct {
	t             uintptr
	pred, prereqs Node
}

// expansionsOf returns sym's expansions in table t, from the symbol for
// the table it was last used with (a symbol belongs to one table; a
// table built from another's symbols still gets its own), so that the
// solver and the evaluator need no map look-up per use.
func expansionsOf(t Symtab, sym *Symbol) *symExpansions {
	id := reflect.ValueOf(t).Pointer()
	if e := sym.exp.Load(); e != nil && e.t == id {
		return e
	}
	e := &symExpansions{t: id}
	if sym.Predicate != "" {
		e.pred = expansion(t, sym.Predicate)
	}
	if sym.Prereqs != "" {
		e.prereqs = expansion(t, sym.Prereqs)
	}
	sym.exp.Store(e)
	return e
}

// expansion parses a predicate expansion or prerequisite expression once
// per symbol table.
func expansion(t Symtab, s string) Node {
	key := expKey{reflect.ValueOf(t).Pointer(), s}
	expMu.RLock()
	n, ok := expCache[key]
	expMu.RUnlock()
	if ok {
		return n
	}
	n = mustParse(t, s)
	expMu.Lock()
	expCache[key] = n
	expMu.Unlock()
	return n
}

func mustParse(t Symtab, s string) Node {
	n, err := parseWith(s, t, nil, nil)
	if err != nil {
		panic(fmt.Sprintf("expr: symbol table expression %q: %v", s, err))
	}
	return n
}

// ErrAmbiguous and ErrContradictory classify ParseMicroflow failures, like
// ovn-trace's "Constraints are ambiguous" / "Constraints are contradictory".
var (
	ErrAmbiguous     = errors.New("constraints are ambiguous")
	ErrContradictory = errors.New("constraints are contradictory")
)
