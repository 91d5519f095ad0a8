package pset

import (
	"fmt"
	"strconv"
)

// This file holds Describe: a set printed back as a short OVN match over
// the header fields an operator reads, checked exact by converting it
// back. How the form is found is in describe_form.go, the field values in
// describe_values.go, the printing and its bound in describe_tree.go.

// DefaultMaxTerms is the bound on a description's terms when
// DescribeOptions.MaxTerms is 0.
const DefaultMaxTerms = 64

// DescribeOptions tune Describe.
type DescribeOptions struct {
	// MaxTerms bounds the terms printed (DefaultMaxTerms when 0). A term
	// is a comparison or a named predicate (`tcp', `tcp.dst >= 80 &&
	// tcp.dst <= 443' as a range), each member of a `{...}' set counting
	// as one.
	MaxTerms int
	// OVNOnly restricts the form to the syntax OVN accepts: no negated
	// nominal tests (ip.proto != 6, !tcp), even where a complement would
	// be much shorter than the list of values.
	OVNOnly bool
}

// Description is the compact header-space form of a set: an OVN match
// expression, in the set's dialect, that matches exactly the packets of
// the set (within the context Describe was given).
//
// When the form has more than DescribeOptions.MaxTerms terms, Text is a
// prefix of it: the first alternatives of its disjunctions and the first
// members of its `{...}' sets, as many as the bound allows (or the
// fewest that still make a match, if more). It is then still a valid
// match, of a subset of the set, and Omitted says how many terms it
// leaves out: never cut silently.
type Description struct {
	// Text is the match (the whole form, or its prefix when Omitted > 0).
	Text string
	// Terms is the number of terms of the whole form.
	Terms int64
	// Omitted is the number of the form's terms Text leaves out (0 when
	// Text is the whole form).
	Omitted int64
	// OVN reports whether Text is a match OVN's parser accepts. It is
	// not when it negates a nominal field or predicate (ip.proto != 6,
	// !tcp), which OVN forbids but expr.Dialect.ParseNegatedNominals
	// reads, with their plain meaning.
	OVN bool
}

// Truncated reports whether Text is only a prefix of the form.
func (d Description) Truncated() bool { return d.Omitted > 0 }

// String returns Text, followed when truncated by the marker
// " ... and N more terms".
func (d Description) String() string {
	if d.Omitted == 0 {
		return d.Text
	}
	return d.Text + " ... and " + strconv.FormatInt(d.Omitted, 10) + " more terms"
}

// DescribeError says why a set has no description: no OVN match matches
// exactly its packets (a set that tests a field where the field's
// prerequisites do not hold, which no match can express, since every
// comparison carries its prerequisites).
type DescribeError struct {
	Reason string
}

func (e *DescribeError) Error() string { return "pset: no match describes the set: " + e.Reason }

// Describe returns the compact form of s within the packets of within:
// a match E with E ∧ within = s ∧ within, E's set being what the
// Converter makes of it. Fields within fixes to one value (a reach
// pair's inport and outport, the metadata of an entering packet) do not
// appear in E; pass All to describe s on its own.
//
// The form is a decision over the fields in the space's order (ports,
// eth.type, ip.proto, L4 ports, ..., addresses last), each field's
// values printed as few comparisons as its value set allows (ranges,
// CIDRs, masks, named protocols: ip4, tcp, vlan.present), a field whose
// constraint is common to the whole (sub)set factored out in front, and
// a (sub)set printed as !(its complement) where that is shorter:
// "everything IPv4 except TCP port 22" is `ip4 && !(tcp && tcp.dst ==
// 22)'. Every description is checked before it is returned: E (or its
// prefix, which must be a non-empty subset) is parsed and converted back
// and compared with s, node for node; a form that fails the check is
// replaced by a plainer one (no negated nominal tests, no complements,
// then no factoring), and the error is a *DescribeError when even that
// fails.
//
// OVN's syntax allows no negation of a nominal field (eth.type,
// ip.proto, the ICMP types, the ports) or predicate (ip4, tcp): "IPv4 but
// TCP port 22" is, in it, the list of the other 255 protocols. Unless
// opt.OVNOnly, the form negates them where that is shorter (`ip4 &&
// !(tcp && tcp.dst == 22)'), and Description.OVN says whether OVN would
// accept the text.
func (m *Manager) Describe(s, within Set, opt DescribeOptions) (Description, error) {
	max := int64(opt.MaxTerms)
	if max <= 0 {
		max = DefaultMaxTerms
	}
	want := m.And(s, within)
	if want == Empty {
		return Description{Text: "0", OVN: true}, nil
	}
	r := m.restrict(want, within)
	if why := m.inconsistent(r); why != "" {
		return Description{}, &DescribeError{Reason: why}
	}
	styles := []formStyle{{neg: true, pull: true}, {pull: true}, {}}
	if !opt.OVNOnly {
		styles = append([]formStyle{{neg: true, pull: true, negNominal: true}}, styles...)
	}
	var why string
	for _, style := range styles {
		d := m.describer(style, max)
		n := d.node(r, 0)
		desc := render(n, max)
		got, err := m.readForm(desc.Text)
		switch {
		case err != nil:
			why = fmt.Sprintf("%q does not convert: %v", desc.Text, err)
		case desc.Omitted == 0 && m.And(got, within) != want:
			why = fmt.Sprintf("%q is not the set", desc.Text)
		case desc.Omitted > 0 && (m.And(got, within) == Empty || !m.Subset(m.And(got, within), want)):
			why = fmt.Sprintf("the prefix %q is not a non-empty subset of the set", desc.Text)
		default:
			desc.OVN = m.space.dialect.Valid(desc.Text, nil) == nil
			return desc, nil
		}
	}
	return Description{}, &DescribeError{Reason: why}
}

// inconsistent says why no match can state s, if s depends on a field
// where the field's prerequisites fail (a set made with a raw field, as
// ovn-trace reads tcp.flags for an SCTP packet): every comparison of the
// field carries its prerequisites, so no match tells such packets
// apart.
func (m *Manager) inconsistent(s Set) string {
	for _, f := range m.support(s) {
		pre := m.prereqs(f.sym)
		if pre == all {
			continue
		}
		out := m.Diff(s, pre)
		if m.quantify(out, f.first, f.end()-1, true) != out {
			return fmt.Sprintf("the set tells packets apart by %s where its prerequisites (%s) do not hold", f.name, f.sym.Prereqs)
		}
	}
	return ""
}

// describer returns the Manager's describer of style and bound, made on
// first use: the forms of the sets it has described are kept, so that
// describing the parts of one analysis, which share subsets, is cheaper.
func (m *Manager) describer(style formStyle, max int64) *describer {
	k := describerKey{style, max}
	if d := m.describers[k]; d != nil {
		return d
	}
	if m.describers == nil {
		m.describers = map[describerKey]*describer{}
	}
	d := newDescriber(m, style, max)
	m.describers[k] = d
	return d
}

type describerKey struct {
	style formStyle
	max   int64
}

// readForm converts a description's text back into a set.
func (m *Manager) readForm(text string) (Set, error) {
	e, err := m.space.dialect.ParseNegatedNominals(text, nil)
	if err != nil {
		return Empty, err
	}
	return (&Converter{m: m, refSets: map[refKey]Set{}}).Convert(e.Root)
}

// restrict returns a set that agrees with s wherever c holds, simplified
// where c does not (Coudert and Madre's restrict): where c fixes a bit,
// the bit's test is dropped. restrict(s, c) ∧ c = s ∧ c.
func (m *Manager) restrict(s, c Set) Set {
	memo := map[[2]Set]Set{}
	var re func(f, c Set) Set
	re = func(f, c Set) Set {
		if c == all || f <= all || c == Empty {
			return f
		}
		k := [2]Set{f, c}
		if r, ok := memo[k]; ok {
			return r
		}
		nf, nc := m.nodes[f], m.nodes[c]
		var r Set
		switch {
		case nc.level < nf.level:
			r = re(f, m.Or(nc.lo, nc.hi))
		case nc.level > nf.level:
			r = m.mk(nf.level, re(nf.lo, c), re(nf.hi, c))
		case nc.lo == Empty:
			r = re(nf.hi, nc.hi)
		case nc.hi == Empty:
			r = re(nf.lo, nc.lo)
		default:
			r = m.mk(nf.level, re(nf.lo, nc.lo), re(nf.hi, nc.hi))
		}
		memo[k] = r
		return r
	}
	return re(s, c)
}
