// Package pset is an exact algebra of packet sets over the fields OVN ACL
// matches test, and the conversion of a parsed match (package acl/expr)
// into the set of packets it matches.
//
// # Representation
//
// A set is a reduced ordered binary decision diagram (BDD) over the bits
// of a packet: one variable per bit of every root field of the match
// language's symbol table (subfields are folded into their roots as OVN
// stores them: reg0 is bits 96..127 of xxreg0, ct.est bit 1 of ct_state,
// vlan.vid bits 0..11 of vlan.tci), and for inport and outport the bits
// of a code numbering a finite domain of port names: the ports given to
// the Space, plus one code for "any other port". Fields come in a fixed
// order (Space.Fields), the ports, eth.type and ip.proto first (every
// prerequisite tests them), and each field's bits most-significant first,
// so that prefixes, masks and ranges are a chain of nodes.
//
// Nodes live in one Manager: a slice of (level, low, high) triples indexed
// by int32, a unique table that makes equal functions the same node (so
// two sets are equal exactly when their Set values are), and a lossy
// operation cache. Nodes are never freed: a Manager is meant for one
// analysis (one switch, one comparison) and dropped after it; NodeCount
// says how large it grew.
//
// # Exactness
//
// The conversion (Converter) follows acl/expr's Eval, which is pinned
// against ovn-trace: every comparison is ANDed with its symbol's
// prerequisites after negation was pushed in (so `!' never negates a
// prerequisite), predicates expand, $address_set and @port_group resolve
// through the Converter's resolver, masks and CIDRs select bits, `{...}'
// is a disjunction under == and a conjunction under the other operators,
// and <, <=, >, >= compare the (masked) field as an unsigned number. Every
// set is then the exact set of packets of the space for which Eval is
// true. What the space cannot represent is not approximated: the
// conversion fails with a *NotExactError saying why (is_chassis_resident
// without a ChassisResidency, a port name outside the domain that the
// resolver does not rule out, 26.03.1's __inport/__outport registers,
// which are a function of the port), so that a caller says "not exact"
// instead of giving a wrong answer.
//
// A set's Witness is one packet of it, the unconstrained bits filled
// with defaults (the first port of the domain, ip.ttl 64, zero
// elsewhere); WitnessPreferring steers it towards given packets and
// field values in order of importance (a port's own MAC and addresses,
// each field the value nearest the preferred one), never giving a field
// to a packet that lacks it. Microflow prints it as an ovn-trace
// microflow that acl/expr's ParseMicroflow reads back (an outport that
// names no port of the domain is left out: a packet before the L2 lookup
// has none). PortIs and AssignPort test and set the string fields, as a
// pipeline sets outport.
//
// # Descriptions
//
// Describe prints a set back as a short match over the header fields
// (describe*.go): the set as a decision over fields rather than bits, a
// field constraint common to a whole (sub)set factored out in front, each
// field's values as ranges, CIDRs, masks or named predicates (ip4, tcp,
// vlan.present), a prerequisite that a later comparison implies left out
// (`tcp.dst == 80', not `ip && tcp && tcp.dst == 80'), and a complement
// where shorter. OVN's syntax forbids negating a nominal field or
// predicate; a description does it where that is much shorter, says so
// (Description.OVN), and acl/expr's ParseNegatedNominals reads it. Every
// description is converted back and compared with the set before it is
// returned, so it is exact by construction and by check; one longer than
// its bound is cut to a prefix that says how many terms it leaves out.
package pset
