package compile

import (
	"strings"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
)

// Options select what Compile compiles for.
type Options struct {
	// Release is the OVN version whose northd the flows must equal (nil:
	// the Snapshot's, which every source sets when it is loaded).
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

// rules are the construction rules in which northd's versions differ,
// each read from the release's facts (package release states when each
// holds, with its upstream commit). The build passes consult them;
// everything else is the same northd function in every version. Adding a
// version adds its stage layout (lflow) when its series is new and, for
// each behaviour it changed, one fact in package release and one field
// here. The facts about northd's per-switch flags (release.ACLTiersPerStage,
// release.ACLFlagsFullScan: the highest ACL tier) are read by nbview, which
// derives those flags (Switch.MaxTier, Switch.TierContest) for the
// release's northd (nbview.NewFor).
type rules struct {
	rel    *release.Release
	layout *lflow.Layout
	regs   registers

	verdicts       bool // release.Verdicts
	dhcpPerAddress bool // release.DHCPPerAddress
	icmpTooBig     bool // release.ICMPTooBig
	igmpLoopback   bool // release.IGMPLoopback, or its first landing before the revert
	sampling       bool // release.Sampling
	ipFrag         bool // release.IPFrag
	dnsFromCtrl    bool // release.DNSFromCtrl
	persist        bool // release.Persist
	commitInHint   bool // release.CommitInHint
	noRedundantCt  bool // release.NoRedundantCt
	statelessLB    bool // release.StatelessLB
	nf             bool // release.NF
	ctTranslation  bool // release.CtTranslation
	pktSampled     bool // release.PktSampled
	setID32        bool // release.SetID32
	switchPorts    bool // release.SwitchPortsSkipCt
	evpn           bool // release.EVPN
}

// newRules reads release r's rules. r must not be nil: every source
// settles its release when it is loaded (nbschema).
func newRules(r *release.Release) rules {
	if r == nil {
		panic("compile: no release (nbschema sets Snapshot.Release when a source is loaded; compile.Options.Release overrides it)")
	}
	lay, ok := lflow.LayoutFor(r.Series())
	if !ok {
		panic("compile: no stage layout for OVN " + r.Name())
	}
	ru := rules{
		rel:            r,
		layout:         lay,
		verdicts:       r.Has(release.Verdicts),
		icmpTooBig:     r.Has(release.ICMPTooBig),
		dhcpPerAddress: r.Has(release.DHCPPerAddress),
		sampling:       r.Has(release.Sampling),
		igmpLoopback:   r.Has(release.IGMPLoopback) || r.Has(release.IGMPLoopbackFirst) && !r.Has(release.IGMPLoopbackReverted),
		ipFrag:         r.Has(release.IPFrag),
		dnsFromCtrl:    r.Has(release.DNSFromCtrl),
		persist:        r.Has(release.Persist),
		commitInHint:   r.Has(release.CommitInHint),
		noRedundantCt:  r.Has(release.NoRedundantCt),
		statelessLB:    r.Has(release.StatelessLB),
		nf:             r.Has(release.NF),
		ctTranslation:  r.Has(release.CtTranslation),
		pktSampled:     r.Has(release.PktSampled),
		setID32:        r.Has(release.SetID32),
		switchPorts:    r.Has(release.SwitchPortsSkipCt),
		evpn:           r.Has(release.EVPN),
	}
	ru.regs = registers2303
	if r.Has(release.Registers2503) {
		ru.regs = registers2503
	}
	return ru
}
