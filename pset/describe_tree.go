package pset

import (
	"strconv"
	"strings"
)

// This file holds a description's form as a tree, its size in terms, and
// its printing within a bound of terms.

type dop uint8

const (
	dTrue  dop = iota // 1
	dFalse            // 0
	dAtom             // text, not to be cut: a comparison, a predicate, a != set
	dList             // field == {items}: a disjunction that can be cut
	dAnd
	dOr
	dNot
)

// dnode is one node of a form. size is its terms (saturating); min the
// fewest terms a prefix of it can have.
type dnode struct {
	op    dop
	text  string   // dAtom: the text; dList: the field
	items []string // dList: the constants printed, the first of total
	total int64    // dList: how many constants the set has
	// compound: a dAtom whose text is a conjunction (a range).
	compound bool
	// nominal: the node tests a nominal field (eth.type, ip.proto, a
	// port, ...), which OVN's syntax forbids under a `!'.
	nominal   bool
	kids      []*dnode
	size, min int64
	// pre is a set the packets the node matches are in (its
	// comparisons' prerequisites and values): the describer's, all when
	// unknown (0, Empty, is never a node's pre but falseNode's).
	pre    Set
	hasPre bool
	// fieldVals is, for the constraint of one field, its values (Empty
	// for other nodes): what the conjunction drops when implied.
	fieldVals Set
}

var (
	trueNode  = &dnode{op: dTrue}
	falseNode = &dnode{op: dFalse, size: 1, min: 1}
	// busyNode stands for a form being made: too large to be chosen.
	busyNode = &dnode{op: dAtom, text: "<busy>", size: maxSize, min: maxSize}
)

// constNode is the node of a terminal.
func constNode(s Set) *dnode {
	if s == Empty {
		return falseNode
	}
	return trueNode
}

// maxSize saturates sizes.
const maxSize = int64(1) << 60

func addSize(a, b int64) int64 { return min(a+b, maxSize) }

func atom(text string, size int64) *dnode {
	return &dnode{op: dAtom, text: text, size: size, min: size}
}

func rangeAtom(text string) *dnode {
	n := atom(text, 1)
	n.compound = true
	return n
}

// listNode is field == {items...}: total constants, the first len(items)
// of them known.
func listNode(field string, items []string, total int64) *dnode {
	return &dnode{op: dList, text: field, items: items, total: total, size: total, min: 1}
}

// nominalNode marks n as nominal.
func nominalNode(n *dnode) *dnode {
	if n.op != dTrue && n.op != dFalse {
		n.nominal = true
	}
	return n
}

// andNode is the conjunction of kids (true dropped, nested conjunctions
// flattened).
func andNode(kids []*dnode) *dnode {
	var ks []*dnode
	for _, k := range kids {
		switch k.op {
		case dTrue:
			continue
		case dFalse:
			return falseNode
		case dAnd:
			ks = append(ks, k.kids...)
			continue
		}
		ks = append(ks, k)
	}
	switch len(ks) {
	case 0:
		return trueNode
	case 1:
		return ks[0]
	}
	n := &dnode{op: dAnd, kids: ks}
	for _, k := range ks {
		n.size, n.min = addSize(n.size, k.size), addSize(n.min, k.min)
		n.nominal = n.nominal || k.nominal
	}
	return n
}

// orNode is the disjunction of kids (false dropped, nested disjunctions
// flattened).
func orNode(kids []*dnode) *dnode {
	var ks []*dnode
	for _, k := range kids {
		switch k.op {
		case dFalse:
			continue
		case dTrue:
			return trueNode
		case dOr:
			ks = append(ks, k.kids...)
			continue
		}
		ks = append(ks, k)
	}
	switch len(ks) {
	case 0:
		return falseNode
	case 1:
		return ks[0]
	}
	n := &dnode{op: dOr, kids: ks, min: ks[0].min}
	for _, k := range ks {
		n.size = addSize(n.size, k.size)
		n.nominal = n.nominal || k.nominal
	}
	return n
}

// notNode is !(x): its terms are x's, and it cannot be cut. x must not
// be nominal.
func notNode(x *dnode) *dnode {
	switch x.op {
	case dTrue:
		return falseNode
	case dFalse:
		return trueNode
	}
	return &dnode{op: dNot, kids: []*dnode{x}, size: x.size, min: x.size}
}

// render prints n within max terms (Description's rules).
func render(n *dnode, max int64) Description {
	var b strings.Builder
	used := int64(0)
	if n.size <= max {
		write(&b, n, dTrue)
		used = n.size
	} else {
		used = writeCut(&b, n, max, dTrue)
	}
	if n.op == dFalse || n.op == dTrue {
		used = n.size
	}
	return Description{Text: b.String(), Terms: n.size, Omitted: n.size - used}
}

// write prints the whole of n; parent is the operator it is an operand
// of (dTrue at the top), for parentheses: && and || do not mix without
// them in OVN's syntax.
func write(b *strings.Builder, n *dnode, parent dop) {
	switch n.op {
	case dTrue:
		b.WriteString("1")
	case dFalse:
		b.WriteString("0")
	case dAtom:
		paren := n.compound && (parent == dOr || parent == dNot)
		wrap(b, paren, func() { b.WriteString(n.text) })
	case dList:
		writeList(b, n, len(n.items))
	case dAnd, dOr:
		sep := " && "
		if n.op == dOr {
			sep = " || "
		}
		wrap(b, parent == dAnd || parent == dOr || parent == dNot, func() {
			for i, k := range n.kids {
				if i > 0 {
					b.WriteString(sep)
				}
				write(b, k, n.op)
			}
		})
	case dNot:
		b.WriteString("!")
		x := n.kids[0]
		bare := x.op == dAtom && !strings.ContainsAny(x.text, " ()")
		wrap(b, !bare, func() { write(b, x, dTrue) })
	}
}

func wrap(b *strings.Builder, paren bool, body func()) {
	if paren {
		b.WriteString("(")
	}
	body()
	if paren {
		b.WriteString(")")
	}
}

// writeList prints the first k constants of a list.
func writeList(b *strings.Builder, n *dnode, k int) {
	b.WriteString(n.text)
	b.WriteString(" == ")
	if k == 1 {
		b.WriteString(n.items[0])
		return
	}
	b.WriteString("{")
	b.WriteString(strings.Join(n.items[:k], ", "))
	b.WriteString("}")
}

// writeCut prints a prefix of n of about budget terms (never fewer than
// n.min) and returns the terms printed: the first members of a list, the
// first alternatives of a disjunction, every conjunct of a conjunction
// each cut to its share. Negations and atoms are printed whole. Every
// prefix is a subset of n: only disjunctions lose operands, and none
// under a negation.
func writeCut(b *strings.Builder, n *dnode, budget int64, parent dop) int64 {
	budget = max(budget, n.min)
	if n.size <= budget {
		write(b, n, parent)
		return n.size
	}
	switch n.op {
	case dList:
		k := int(min(budget, int64(len(n.items))))
		writeList(b, n, k)
		return int64(k)
	case dOr:
		var kids []*dnode
		var shares []int64
		left := budget
		for _, k := range n.kids {
			if k.size <= left {
				kids, shares = append(kids, k), append(shares, k.size)
				left -= k.size
				continue
			}
			if len(kids) == 0 || k.min <= left {
				kids, shares = append(kids, k), append(shares, left)
			}
			break
		}
		used := int64(0)
		wrap(b, len(kids) > 1 && parent != dTrue && parent != dOr, func() {
			for i, k := range kids {
				if i > 0 {
					b.WriteString(" || ")
				}
				used += writeCut(b, k, shares[i], dOr)
			}
		})
		return used
	case dAnd:
		rest := n.min
		used := int64(0)
		wrap(b, parent != dTrue && parent != dAnd, func() {
			for i, k := range n.kids {
				if i > 0 {
					b.WriteString(" && ")
				}
				rest -= k.min
				used += writeCut(b, k, budget-used-rest, dAnd)
			}
		})
		return used
	}
	write(b, n, parent)
	return n.size
}

// quoteAll quotes port names as match string constants.
func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, s := range names {
		out[i] = strconv.Quote(s)
	}
	return out
}
