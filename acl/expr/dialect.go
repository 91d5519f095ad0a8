package expr

import (
	"fmt"
	"strings"
	"sync"
)

// A Dialect is the match language of one OVN version: its symbol table and
// the few parser rules that changed after 23.03. A dialect is 23.03.1's
// table and rules plus the named Changes its version has; which version
// has which change is not this package's to say (it needs nothing but the
// standard library): the caller asks its release facts (aclc's package
// release states each change's since-points; compile.Dialect maps a
// release onto a dialect). The oracle corpus checks every verified
// version's parser exactly.
type Dialect struct {
	name    string
	changes uint64 // bit i: changeList[i]
	symtab  func() Symtab
	// strictTemplates: a match that uses an undefined template variable
	// fails as a whole (OVN 25.03+), instead of the variable expanding to
	// its own name (23.03).
	strictTemplates bool
}

// Change names one change of the match language after 23.03.1.
type Change string

// The changes, by what they do (upstream order).
const (
	// ChangeLocalnetFlag: flags.localnet (flags[15]).
	ChangeLocalnetFlag Change = "localnet-flag"
	// ChangeTunnelFlags: flags.tunnel_rx, flags.icmp_snat (flags[16],
	// flags[17]).
	ChangeTunnelFlags Change = "tunnel-flags"
	// ChangeIGMPLoopback18: flags.igmp_loopback as flags[18], the bit of
	// its first, reverted backports.
	ChangeIGMPLoopback18 Change = "igmp-loopback-18"
	// ChangeMcastPredicates: igmp, mldv1 and mldv2 require multicast
	// addresses.
	ChangeMcastPredicates Change = "mcast-predicates"
	// ChangeNDNSMcast: the nd_ns_mcast predicate.
	ChangeNDNSMcast Change = "nd-ns-mcast"
	// ChangeSampling: ACL sampling's observation fields in ct_mark and
	// ct_label; ct_label's copies of ct_mark bits gone.
	ChangeSampling Change = "sampling"
	// ChangeFromCtrl: flags.from_ctrl (flags[19]).
	ChangeFromCtrl Change = "from-ctrl"
	// ChangeStrictTemplates: lexer_parse_template_string fails on an
	// undefined template variable (commit 6154aa104).
	ChangeStrictTemplates Change = "strict-templates"
	// ChangePersist: flags.unsnat_new, flags.unsnat_not_tracked,
	// ct_mark.allow_established, ct_label.acl_id.
	ChangePersist Change = "persist"
	// ChangeNetworkIDFlag: flags.network_id (flags[28..31]).
	ChangeNetworkIDFlag Change = "network-id-flag"
	// ChangeMcastRsvd: ip6.mcast_rsvd as the 16 addresses ff0X::0.
	ChangeMcastRsvd Change = "mcast-rsvd"
	// ChangeRemoteOutport: the remote_outport field.
	ChangeRemoteOutport Change = "remote-outport"
	// ChangeIGMPLoopback: flags.igmp_loopback as flags[22].
	ChangeIGMPLoopback Change = "igmp-loopback"
	// ChangeNF: flags.pkt_sampled, ct_label.nf, nf_id, tun_if, tun_if_id.
	ChangeNF Change = "nf"
	// ChangeEVPN: __inport/__outport and the from_evpn_vtep /
	// to_evpn_vtep predicates.
	ChangeEVPN Change = "evpn"
	// ChangeInnerIP4: icmp4.inner_ip4.src, the source of the IPv4 packet
	// an ICMPv4 error carries (an OVN field, like icmp4.frag_mtu).
	ChangeInnerIP4 Change = "inner-ip4"
)

// symtabChange is what one change does to ovn_init_symtab.
type symtabChange struct {
	name  Change
	apply func(b *symtabBuilder)
}

// changeList are the changes to lib/logical-fields.c and lib/lex.c after
// 23.03.1, in upstream order. Flag bits are include/ovn/logical-fields.h's
// MLF_*_BIT, ct_mark/ct_label bits its OVN_CT_*_BIT. The number of logical
// registers (MFF_N_LOG_REGS, 10: reg0..reg9, xreg0..xreg4,
// xxreg0..xxreg1) is the same in every version; reg10..reg15 stay the
// flags, zones and logical ports and have no symbol.
var changeList = []symtabChange{
	{ChangeLocalnetFlag, func(b *symtabBuilder) {
		b.sub("flags.localnet", "", "flags", 15, 15)
	}},
	{ChangeTunnelFlags, func(b *symtabBuilder) {
		b.sub("flags.icmp_snat", "", "flags", 17, 17)
		b.sub("flags.tunnel_rx", "", "flags", 16, 16)
	}},
	{ChangeIGMPLoopback18, func(b *symtabBuilder) {
		b.sub("flags.igmp_loopback", "", "flags", 18, 18)
	}},
	{ChangeMcastPredicates, func(b *symtabBuilder) {
		b.redefine("igmp", "ip4.mcast && ip.proto == 2")
		b.redefine("mldv1", "eth.mcastv6 && ip6.src == fe80::/10 && icmp6.type == {130, 131, 132}")
		b.redefine("mldv2", "eth.mcastv6 && ip6.dst == ff02::16 && icmp6.type == 143")
	}},
	{ChangeNDNSMcast, func(b *symtabBuilder) {
		b.pred("nd_ns_mcast", "ip6.mcast && icmp6.type == 135 && icmp6.code == 0 && ip.ttl == 255")
	}},
	{ChangeSampling, func(b *symtabBuilder) {
		// ACL sampling: observation stage and collector in ct_mark, the
		// point id in ct_label; the ct_label copies of ct_mark's bits
		// (blocked, natted, skip_snat, force_snat) and
		// ct_label.ecmp_reply_port are gone.
		b.sub("ct_mark.obs_stage", "", "ct_mark", 4, 5)
		b.sub("ct_mark.obs_collector_id", "", "ct_mark", 16, 23)
		b.remove("ct_label.blocked", "ct_label.natted", "ct_label.ecmp_reply_port",
			"ct_label.skip_snat", "ct_label.force_snat")
		b.sub("ct_label.obs_point_id", "", "ct_label", 96, 127)
		b.sub("ct_label.obs_unused", "", "ct_label", 0, 95)
	}},
	{ChangeFromCtrl, func(b *symtabBuilder) {
		b.sub("flags.from_ctrl", "", "flags", 19, 19)
	}},
	{ChangeStrictTemplates, nil},
	{ChangePersist, func(b *symtabBuilder) {
		b.sub("flags.unsnat_new", "", "flags", 20, 20)
		b.sub("flags.unsnat_not_tracked", "", "flags", 21, 21)
		// ACL options:persist-established.
		b.sub("ct_mark.allow_established", "", "ct_mark", 6, 6)
		b.sub("ct_label.acl_id", "", "ct_label", 80, 95)
	}},
	{ChangeNetworkIDFlag, func(b *symtabBuilder) {
		b.sub("flags.network_id", "", "flags", 28, 31)
	}},
	{ChangeMcastRsvd, func(b *symtabBuilder) {
		b.redefine("ip6.mcast_rsvd", "ip6.dst == {ff00::0, ff01::0, ff02::0, ff03::0, ff04::0, ff05::0, ff06::0, ff07::0, "+
			"ff08::0, ff09::0, ff0a::0, ff0b::0, ff0c::0, ff0d::0, ff0e::0, ff0f::0}")
	}},
	{ChangeRemoteOutport, func(b *symtabBuilder) {
		b.str("remote_outport")
	}},
	{ChangeIGMPLoopback, func(b *symtabBuilder) {
		b.sub("flags.igmp_loopback", "", "flags", 22, 22)
	}},
	{ChangeNF, func(b *symtabBuilder) {
		b.sub("flags.pkt_sampled", "", "flags", 23, 23)
		// Network functions and tunnel interfaces.
		b.sub("ct_label.nf", "", "ct_label", 7, 7)
		b.sub("ct_label.nf_id", "", "ct_label", 17, 24)
		b.sub("ct_label.tun_if", "", "ct_label", 8, 8)
		b.sub("ct_label.tun_if_id", "", "ct_label", 80, 95)
	}},
	{ChangeEVPN, func(b *symtabBuilder) {
		// The registers behind inport/outport as numbers, for the EVPN
		// predicates (OVN_EVPN_KEY_FLAG is bit 31).
		b.field("__inport", 32, true, "", false)
		b.field("__outport", 32, true, "", false)
		b.t["__inport"].PortRegister, b.t["__outport"].PortRegister = "inport", "outport"
		b.pred("from_evpn_vtep", "__inport[31]")
		b.pred("to_evpn_vtep", "__outport[31]")
	}},
	{ChangeInnerIP4, func(b *symtabBuilder) {
		b.add("icmp4.inner_ip4.src", 32, Nominal, "", false).OVNField = true
	}},
}

// Changes returns every change, in upstream order.
func Changes() []Change {
	out := make([]Change, len(changeList))
	for i, c := range changeList {
		out[i] = c.name
	}
	return out
}

type dialectKey struct {
	name    string
	changes uint64
}

var (
	dialectsMu sync.Mutex
	dialects   = map[dialectKey]*Dialect{}
	symtabs    = map[uint64]func() Symtab{}
)

// NewDialect returns the dialect named name (its OVN version, "26.03.1")
// with the changes has accepts. Dialects are shared, and so are the symbol
// tables of dialects with the same changes; a table is built on first use.
func NewDialect(name string, has func(Change) bool) *Dialect {
	var mask uint64
	for i, c := range changeList {
		if has != nil && has(c.name) {
			mask |= 1 << i
		}
	}
	dialectsMu.Lock()
	defer dialectsMu.Unlock()
	key := dialectKey{name, mask}
	if d := dialects[key]; d != nil {
		return d
	}
	st := symtabs[mask]
	if st == nil {
		st = sync.OnceValue(func() Symtab {
			b := &symtabBuilder{t: buildSymtab2303()}
			for i, c := range changeList {
				if mask&(1<<i) != 0 && c.apply != nil {
					c.apply(b)
				}
			}
			return b.t
		})
		symtabs[mask] = st
	}
	d := &Dialect{name: name, changes: mask, symtab: st}
	for i, c := range changeList {
		if c.name == ChangeStrictTemplates && mask&(1<<i) != 0 {
			d.strictTemplates = true
		}
	}
	dialects[key] = d
	return d
}

// Has reports whether the dialect has change c.
func (d *Dialect) Has(c Change) bool {
	for i, x := range changeList {
		if x.name == c {
			return d.changes&(1<<i) != 0
		}
	}
	return false
}

// OVN2303 is the dialect of OVN 23.03.1 — no changes — the one of Parse and
// Valid.
func OVN2303() *Dialect { return NewDialect("23.03.1", nil) }

// String is the dialect's name, its OVN version ("26.03.1").
func (d *Dialect) String() string { return d.name }

// Symtab returns the dialect's symbol table. It is shared; callers must
// not modify it.
func (d *Dialect) Symtab() Symtab { return d.symtab() }

// Parse parses s as a match of the dialect's release: its symbol table,
// and template expansion as its ovn-controller does it (no variables
// defined).
func (d *Dialect) Parse(s string, r Resolver) (*Expr, error) {
	return d.ParseWithTemplates(s, nil, r)
}

// ParseWithTemplates is Parse with chassis template variables defined
// (see ExpandTemplates).
func (d *Dialect) ParseWithTemplates(s string, vars map[string]string, r Resolver) (*Expr, error) {
	m := memoize(r)
	defer m.release()
	r = m.resolver()
	n, err := d.parse(s, r, vars)
	if err != nil {
		return nil, err
	}
	t := d.Symtab()
	return &Expr{Text: s, Root: n, Warnings: check(n, t, r)}, nil
}

// ParseNegatedNominals is Parse accepting also what OVN rejects only
// because it negates a nominal field or predicate: ip.proto != 6,
// !tcp, !(icmp6.type == 135), inport != "p1". It is not a release's
// language but a reader's: package pset describes sets with it where a
// complement is much shorter than the list of values OVN would need.
// Eval (and pset) give the negated tests their plain meaning: a negated
// comparison of a nominal field, like any field's, still requires the
// field's prerequisites (ip.proto != 6 is IP but not TCP); a negated
// predicate is its complement (!tcp: every packet but TCP ones).
func (d *Dialect) ParseNegatedNominals(s string, r Resolver) (*Expr, error) {
	m := memoize(r)
	defer m.release()
	r = m.resolver()
	n, err := parseMode(s, d.Symtab(), r, nil, true)
	if err != nil {
		return nil, err
	}
	return &Expr{Text: s, Root: n, Warnings: check(n, d.Symtab(), r)}, nil
}

// Valid reports whether the dialect's release accepts s; the error says
// why not.
func (d *Dialect) Valid(s string, r Resolver) error {
	_, err := d.parse(s, r, nil)
	return err
}

// ParseMicroflow is the package's ParseMicroflow in this dialect.
func (d *Dialect) ParseMicroflow(s string, r Resolver) (*Microflow, error) {
	e, err := d.Parse(s, r)
	if err != nil {
		return nil, err
	}
	return solveMicroflow(e, d.Symtab(), r)
}

// NewMicroflow returns an all-zero microflow over the dialect's fields.
func (d *Dialect) NewMicroflow() *Microflow { return NewMicroflowSymtab(d.Symtab()) }

func (d *Dialect) parse(s string, r Resolver, vars map[string]string) (Node, error) {
	if d.strictTemplates && strings.IndexByte(s, '^') >= 0 {
		if err := undefinedTemplate(s, vars); err != nil {
			return nil, err
		}
	}
	return parseWith(s, d.Symtab(), r, vars)
}

// undefinedTemplate returns the error of OVN 25.03+ for a match that uses
// a template variable vars does not define: lexer_parse_template_string
// fails and the flow is dropped. OVN gives no reason (ovn-controller logs
// `error parsing match', ovn-trace `parsing expression failed'), so the
// error's Msg is empty and its Note says what happened.
func undefinedTemplate(s string, vars map[string]string) error {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i] // OVN works on C strings
	}
	if !strings.Contains(s, "^") {
		return nil
	}
	for _, it := range lexMode(s, true) {
		if it.typ == itemEOF {
			break
		}
		if it.typ == itemTemplate {
			if _, ok := vars[it.str]; !ok {
				return &Error{Offset: it.pos, Note: fmt.Sprintf(
					"template variable ^%s is not defined; OVN drops the whole flow (it gives no message)", it.str)}
			}
		}
	}
	return nil
}
