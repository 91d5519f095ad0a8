package compile

import (
	"strings"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
)

// Options select what Compile compiles for.
type Options struct {
	// Release is the OVN release whose northd the flows must equal
	// (nil: 23.03.1).
	Release *release.Release
	// ACLIDs are the ids northd allocated in the SB ACL_ID table (ACL
	// UUID -> id), read from a live SB. Nil: aclc allocates them as
	// northd does on an empty SB, but in ACL UUID order (northd goes in
	// its hash order, which differs from run to run), so the ids equal
	// northd's up to a renaming (lflow.RenumberACLIDs).
	ACLIDs map[string]int
	// Lacking are chassis features that some chassis lack. northd
	// enables a feature only when every chassis has it, and with no
	// Chassis rows assumes all; so does aclc unless told here. Ignored
	// when the NB says ignore_chassis_features (IgnoresChassisFeatures).
	Lacking ChassisFeatures
}

// IgnoresChassisFeatures is NB_Global options:ignore_chassis_features
// (smap_get_bool, default false): northd then enables every chassis
// feature whatever the chassis say, so Options.Lacking does not apply.
func IgnoresChassisFeatures(s *nbschema.Snapshot) bool {
	return strings.EqualFold(s.GlobalOption("ignore_chassis_features"), "true")
}

// ChassisFeatures are the chassis features the ACL stages depend on.
type ChassisFeatures struct {
	// SampleWithReg: sample() with registers; without it a sample with
	// one collector gets per-ACL flows like one with several.
	SampleWithReg bool
	// CTLabelFlush: flushing conntrack entries by ct_label; without it
	// persist-established is not honoured (no ACL id is loaded).
	CTLabelFlush bool
}

// rules are the construction rules in which the supported releases'
// northd differ, each switched on from the upstream release that
// introduced it (the commit is the one in ovn-org/ovn that did). The build
// passes consult them; everything else is the same northd function in
// every release. Adding a release adds its stage layout (lflow) and, for
// each behaviour it changed, one rule here.
type rules struct {
	rel    *release.Release
	layout *lflow.Layout
	regs   registers

	// verdicts: ACL eval stages set verdict bits and ACL action stages act
	// on them; tiers and "pass" (23.06, 46dacbb75). DHCP replies no longer
	// commit.
	verdicts bool
	// dhcpPerAddress: the DHCP reply flows come with a port's DHCP
	// response flows: only for an enabled, non-router port on a switch
	// without other_config:dhcp_relay_port, and only when one of the
	// port's own addresses lies in the options' cidr (24.03, aa352ac88).
	dhcpPerAddress bool
	// icmpTooBig: pre-ACL and pre-LB skip conntrack for ICMP "packet too
	// big" arriving from a tunnel (24.03; e3bc68c3b).
	icmpTooBig bool
	// igmpLoopback: a transit switch punts only IGMP/MLD that is not
	// looped back (25.09, d3cb5a0ba; first landed and reverted before 24.09).
	igmpLoopback bool
	// sampling: ACL sample stages, observation registers, drop commits
	// carry ct_label.obs_point_id (24.09; 55782afd7).
	sampling bool
	// ipFrag: pre-stateful keeps ip.is_frag in a register across
	// recirculation (25.03, 0f806cf08).
	ipFrag bool
	// dnsFromCtrl: the DNS reply flow matches flags.from_ctrl (25.03,
	// 474bdfcad).
	dnsFromCtrl bool
	// persist: ACL options:persist-established, ct_mark.allow_established
	// and ct_label.acl_id (25.03, 03556dc05).
	persist bool
	// commitInHint: the ACL hint stage sets the commit bit for new
	// connections instead of the allow ACLs and the default flows (25.09,
	// 0aa2a4828).
	commitInHint bool
	// noRedundantCt: "!ct.new" and "!ct.inv" dropped from the reply
	// flows' matches (25.09, 8828b6120).
	noRedundantCt bool
	// statelessLB: LS other_config:enable-stateless-acl-with-lb (25.09,
	// abbc272ac).
	statelessLB bool
	// nf: network functions and their stages; eval flows copy
	// ct_label.nf (26.03).
	nf bool
	// ctTranslation: NB_Global options:acl_ct_translation (26.03,
	// f9ffb0ee9).
	ctTranslation bool
	// pktSampled: a packet is sampled once — sample flows set and test
	// flags.pkt_sampled, a port skipped from conntrack clears it with
	// ct_clear (26.03, 68850ba3e).
	pktSampled bool
	// setID32: sample() prints the collector's set_id in full, not
	// truncated to 8 bits (25.09, a5b147828).
	setID32 bool
	// switchPorts: ports of type "switch" skip conntrack like router ports
	// (26.03, 2f2b263df).
	switchPorts bool
	// evpn: EVPN remote VTEP traffic skips conntrack (26.03.1, e8dc42020).
	evpn bool
}

func newRules(r *release.Release) rules {
	if r == nil {
		r = release.OVN2303
	}
	lay, ok := lflow.LayoutFor(r.Series())
	if !ok {
		panic("compile: no stage layout for OVN " + r.Name())
	}
	at := func(v string) bool { return r.Version.Compare(release.MustVersion(v)) >= 0 }
	ru := rules{
		rel:            r,
		layout:         lay,
		verdicts:       at("23.06.0"),
		icmpTooBig:     at("24.03.0"),
		dhcpPerAddress: at("24.03.0"),
		sampling:       at("24.09.0"),
		igmpLoopback:   at("25.09.0"),
		ipFrag:         at("25.03.0"),
		dnsFromCtrl:    at("25.03.0"),
		persist:        at("25.03.0"),
		commitInHint:   at("25.09.0"),
		noRedundantCt:  at("25.09.0"),
		statelessLB:    at("25.09.0"),
		nf:             at("26.03.0"),
		ctTranslation:  at("26.03.0"),
		pktSampled:     at("26.03.0"),
		setID32:        at("25.09.0"),
		switchPorts:    at("26.03.0"),
		evpn:           at("26.03.1"),
	}
	ru.regs = registers2303
	if at("25.03.0") { // 91988089c
		ru.regs = registers2503
	}
	return ru
}
