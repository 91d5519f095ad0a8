package expr

import (
	"fmt"
	"math/big"
	"strings"
)

// Node is an element of a parsed match expression. Every node knows the byte
// offset where it starts in the parsed text and prints back as source text
// that parses to an equal tree (String is a fixed point after one round).
type Node interface {
	// Position returns the byte offset of the node's first token.
	Position() int
	// String returns the node as canonical source text.
	String() string
	writeTo(*strings.Builder)
}

// Relop is a relational operator.
type Relop int

// Relational operators.
const (
	Eq Relop = iota // ==
	Ne              // !=
	Lt              // <
	Le              // <=
	Gt              // >
	Ge              // >=
)

// String returns the operator's spelling.
func (r Relop) String() string {
	return [...]string{"==", "!=", "<", "<=", ">", ">="}[r]
}

// Turn returns the operator with its operands swapped: `1 < x` is `x > 1`.
func (r Relop) Turn() Relop {
	switch r {
	case Lt:
		return Gt
	case Le:
		return Ge
	case Gt:
		return Lt
	case Ge:
		return Le
	}
	return r
}

// Invert returns the logical negation: !(x < 1) is x >= 1.
func (r Relop) Invert() Relop {
	return [...]Relop{Ne, Eq, Ge, Gt, Le, Lt}[r]
}

// test applies r to the result of a three-way comparison.
func (r Relop) test(cmp int) bool {
	switch r {
	case Eq:
		return cmp == 0
	case Ne:
		return cmp != 0
	case Lt:
		return cmp < 0
	case Le:
		return cmp <= 0
	case Gt:
		return cmp > 0
	default:
		return cmp >= 0
	}
}

// Field is a reference to a symbol, optionally sliced: tcp.dst, reg0[3],
// xxreg1[0..63].
type Field struct {
	// Pos is the byte offset of the symbol name.
	Pos int
	// Symbol is the referenced symbol.
	Symbol *Symbol
	// Sliced reports whether a [...] selection was written.
	Sliced bool
	// Ofs and NBits give the selected bits; without a slice they are 0 and
	// Symbol.Width.
	Ofs, NBits int
}

// String prints the field as written, in OVN's expr_field_format notation:
// "name", "name[n]" or "name[lo..hi]".
func (f Field) String() string {
	var b strings.Builder
	f.writeTo(&b)
	return b.String()
}

func (f Field) writeTo(b *strings.Builder) {
	b.WriteString(f.Symbol.Name)
	if f.Sliced {
		if f.NBits == 1 {
			fmt.Fprintf(b, "[%d]", f.Ofs)
		} else {
			fmt.Fprintf(b, "[%d..%d]", f.Ofs, f.Ofs+f.NBits-1)
		}
	}
}

// ConstKind is the kind of a constant.
type ConstKind int

// Constant kinds.
const (
	IntConst      ConstKind = iota // 80, 0x50, 10.0.0.1, fe80::1, 00:00:00:00:00:01
	MaskedConst                    // 10.0.0.0/8, 0x8/0xc
	StringConst                    // "lsp1"
	AddressSetRef                  // $as
	PortGroupRef                   // @pg
)

// Const is one constant of a constant set.
type Const struct {
	// Pos is the byte offset of the constant.
	Pos int
	// Kind is the constant's kind.
	Kind ConstKind
	// Text is the constant as written (masked integers include the mask,
	// strings include quotes and escapes, references include the sigil).
	Text string
	// Format is how an integer was written (IntConst, MaskedConst).
	Format Format
	// Value is the integer value, already ANDed with Mask for MaskedConst.
	Value *big.Int
	// Mask is the mask of a MaskedConst (a CIDR prefix becomes its mask).
	Mask *big.Int
	// HostBits reports that the written value had 1-bits outside the mask,
	// which OVN clears silently (10.0.0.1/24).
	HostBits bool
	// Str is the unescaped string of a StringConst, or the name of an
	// address set or port group reference (without the sigil).
	Str string
}

// String returns the constant as written.
func (c Const) String() string { return c.Text }

// Width returns the constant's width as OVN's expr_constant_width: the
// mask's significant bits for masked constants, 32/128/48 for IPv4/IPv6/MAC
// and the value's significant bits for decimal and hex.
func (c Const) Width() int {
	if c.Kind == MaskedConst {
		return c.Mask.BitLen()
	}
	switch c.Format {
	case IPv4:
		return 32
	case IPv6:
		return 128
	case Ethernet:
		return 48
	}
	return c.Value.BitLen()
}

// ConstSet is a single constant or a {}-enclosed set.
type ConstSet struct {
	// Pos is the byte offset of the constant or the `{'.
	Pos int
	// Curly reports whether the set was written in braces.
	Curly bool
	// Values are the constants in order.
	Values []Const
}

// String prints the set: a lone constant as itself, a braced set as
// "{a, b}".
func (s ConstSet) String() string {
	var b strings.Builder
	s.writeTo(&b)
	return b.String()
}

func (s ConstSet) writeTo(b *strings.Builder) {
	if !s.Curly {
		b.WriteString(s.Values[0].Text)
		return
	}
	b.WriteByte('{')
	for i, v := range s.Values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(v.Text)
	}
	b.WriteByte('}')
}

// Binary is a chain of operands joined by one operator, && or ||:
// a && b && c. OVN forbids mixing the two without parentheses, so a chain
// has exactly one operator.
type Binary struct {
	Pos   int    // byte offset of the first operand
	Or    bool   // true for ||, false for &&
	Terms []Node // two or more operands
}

// Not is `!' applied to an atomic operand (a parenthesized expression, a
// bare field test, a 0/1 literal or a function call).
type Not struct {
	Pos int  // byte offset of the `!'
	X   Node // the operand
}

// Paren is a parenthesized expression.
type Paren struct {
	Pos int  // byte offset of the `('
	X   Node // the enclosed expression
}

// Bool is a literal 0 (false) or 1 (true).
type Bool struct {
	Pos   int  // byte offset of the literal
	Value bool // true for 1
}

// FieldTest is a field or predicate written without an operator: `tcp',
// `reg0[3]', or (only under `!') a multi-bit field such as `!reg0'. It means
// field != 0.
type FieldTest struct {
	Pos   int   // byte offset of the field name
	Field Field // the tested field
}

// Cmp compares a field with a constant set: tcp.dst == {80, 443}, or with
// the constant first, 80 == tcp.dst (then Op is as written and ConstFirst is
// set; the comparison means `field Op.Turn() constants').
type Cmp struct {
	Pos        int      // byte offset of the first token
	Field      Field    // the compared field
	Op         Relop    // the operator as written
	Values     ConstSet // the constant or set
	ConstFirst bool     // written as `constants Op field'
}

// FieldOp returns the operator as applied with the field on the left.
func (c *Cmp) FieldOp() Relop {
	if c.ConstFirst {
		return c.Op.Turn()
	}
	return c.Op
}

// Range is the two-sided comparison `Low LowOp field HighOp High', such as
// 1000 <= tcp.dst <= 2000 or 2000 > tcp.dst > 1000.
type Range struct {
	Pos    int      // byte offset of Low
	Low    ConstSet // the left constant
	LowOp  Relop    // operator between Low and the field
	Field  Field    // the compared field
	HighOp Relop    // operator between the field and High
	High   ConstSet // the right constant
}

// ChassisResident is is_chassis_resident("port").
type ChassisResident struct {
	Pos  int    // byte offset of is_chassis_resident
	Text string // the string literal as written
	Port string // its value
}

// Position returns the byte offset of the node.
func (n *Binary) Position() int { return n.Pos }

// Position returns the byte offset of the node.
func (n *Not) Position() int { return n.Pos }

// Position returns the byte offset of the node.
func (n *Paren) Position() int { return n.Pos }

// Position returns the byte offset of the node.
func (n *Bool) Position() int { return n.Pos }

// Position returns the byte offset of the node.
func (n *FieldTest) Position() int { return n.Pos }

// Position returns the byte offset of the node.
func (n *Cmp) Position() int { return n.Pos }

// Position returns the byte offset of the node.
func (n *Range) Position() int { return n.Pos }

// Position returns the byte offset of the node.
func (n *ChassisResident) Position() int { return n.Pos }

// String prints the node as canonical source text.
func (n *Binary) String() string { return str(n) }

// String prints the node as canonical source text.
func (n *Not) String() string { return str(n) }

// String prints the node as canonical source text.
func (n *Paren) String() string { return str(n) }

// String prints the node as canonical source text.
func (n *Bool) String() string { return str(n) }

// String prints the node as canonical source text.
func (n *FieldTest) String() string { return str(n) }

// String prints the node as canonical source text.
func (n *Cmp) String() string { return str(n) }

// String prints the node as canonical source text.
func (n *Range) String() string { return str(n) }

// String prints the node as canonical source text.
func (n *ChassisResident) String() string { return str(n) }

func str(n Node) string {
	var b strings.Builder
	n.writeTo(&b)
	return b.String()
}

func (n *Binary) writeTo(b *strings.Builder) {
	op := " && "
	if n.Or {
		op = " || "
	}
	for i, t := range n.Terms {
		if i > 0 {
			b.WriteString(op)
		}
		t.writeTo(b)
	}
}

func (n *Not) writeTo(b *strings.Builder) {
	b.WriteByte('!')
	n.X.writeTo(b)
}

func (n *Paren) writeTo(b *strings.Builder) {
	b.WriteByte('(')
	n.X.writeTo(b)
	b.WriteByte(')')
}

func (n *Bool) writeTo(b *strings.Builder) {
	if n.Value {
		b.WriteByte('1')
	} else {
		b.WriteByte('0')
	}
}

func (n *FieldTest) writeTo(b *strings.Builder) { n.Field.writeTo(b) }

func (n *Cmp) writeTo(b *strings.Builder) {
	if n.ConstFirst {
		n.Values.writeTo(b)
		b.WriteString(" " + n.Op.String() + " ")
		n.Field.writeTo(b)
		return
	}
	n.Field.writeTo(b)
	b.WriteString(" " + n.Op.String() + " ")
	n.Values.writeTo(b)
}

func (n *Range) writeTo(b *strings.Builder) {
	n.Low.writeTo(b)
	b.WriteString(" " + n.LowOp.String() + " ")
	n.Field.writeTo(b)
	b.WriteString(" " + n.HighOp.String() + " ")
	n.High.writeTo(b)
}

func (n *ChassisResident) writeTo(b *strings.Builder) {
	b.WriteString("is_chassis_resident(" + n.Text + ")")
}

// Inspect walks the tree in depth-first order, calling f for each node; if f
// returns false the node's children are skipped.
func Inspect(n Node, f func(Node) bool) {
	if n == nil || !f(n) {
		return
	}
	switch n := n.(type) {
	case *Binary:
		for _, t := range n.Terms {
			Inspect(t, f)
		}
	case *Not:
		Inspect(n.X, f)
	case *Paren:
		Inspect(n.X, f)
	}
}
