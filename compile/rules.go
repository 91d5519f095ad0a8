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
	// SB is what northd reads of the SB to choose a network function
	// group's active function (26.03+): port bindings and service monitor
	// health. Nil: an SB with no chassis, as northd starts — no port is
	// bound, no monitor is online, so from 26.09 no function is active.
	SB *SBState
}

// SBState is the SB state network_function_update_active reads.
type SBState struct {
	// Ports are the SB Port_Binding rows by logical_port.
	Ports map[string]PortBinding
	// NFMonitorOnline holds the logical ports (a network function's
	// outport) whose Service_Monitor of type "network-function" has status
	// "online".
	NFMonitorOnline map[string]bool
}

// PortBinding is what northd reads of a Port_Binding for a network
// function's health (network_function_port_binding_state, 26.09+): the
// name of the chassis it is bound to ("" for none) and column up.
type PortBinding struct {
	Chassis string
	Up      bool
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
	dhcpNoCommit   bool // release.DHCPNoCommit
	dhcpPerAddress bool // release.DHCPPerAddress
	dhcpRelaySkip  bool // release.DHCPRelaySkip
	lportMirror    bool // release.LportMirror
	icmpTooBig     bool // release.ICMPTooBig
	igmpLoopback   bool // release.IGMPLoopback, or its first landing before the revert
	sampling       bool // release.Sampling
	ipFrag         bool // release.IPFrag
	dnsFromCtrl    bool // release.DNSFromCtrl
	persist        bool // release.Persist
	commitInHint   bool // release.CommitInHint
	noRedundantCt  bool // release.NoRedundantCt
	statelessLB    bool // release.StatelessLB
	statelessLBCt  bool // release.StatelessLBEgressCt
	statelessLBHp  bool // release.StatelessLBHairpin
	nf             bool // release.NF
	ctTranslation  bool // release.CtTranslation
	pktSampled     bool // release.PktSampled
	setID32        bool // release.SetID32
	switchPorts    bool // release.SwitchPortsSkipCt
	evpn           bool // release.EVPN
	// 26.09
	blockedAtMaxTier  bool // release.BlockedAllowAtMaxTier
	localnetCtClear   bool // release.LocalnetEgressCtClear
	statelessLBGroups bool // release.StatelessLBGroups
	nfVtap            bool // release.NFVtap
	nfPortBinding     bool // release.NFPortBinding
	nfOrigInport      bool // release.NFOrigInport
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
		dhcpNoCommit:   r.Has(release.DHCPNoCommit),
		dhcpPerAddress: r.Has(release.DHCPPerAddress),
		dhcpRelaySkip:  r.Has(release.DHCPRelaySkip),
		lportMirror:    r.Has(release.LportMirror),
		sampling:       r.Has(release.Sampling),
		igmpLoopback:   r.Has(release.IGMPLoopback),
		ipFrag:         r.Has(release.IPFrag),
		dnsFromCtrl:    r.Has(release.DNSFromCtrl),
		persist:        r.Has(release.Persist),
		commitInHint:   r.Has(release.CommitInHint),
		noRedundantCt:  r.Has(release.NoRedundantCt),
		statelessLB:    r.Has(release.StatelessLB),
		statelessLBCt:  r.Has(release.StatelessLBEgressCt),
		statelessLBHp:  r.Has(release.StatelessLBHairpin),
		nf:             r.Has(release.NF),
		ctTranslation:  r.Has(release.CtTranslation),
		pktSampled:     r.Has(release.PktSampled),
		setID32:        r.Has(release.SetID32),
		switchPorts:    r.Has(release.SwitchPortsSkipCt),
		evpn:           r.Has(release.EVPN),

		blockedAtMaxTier:  r.Has(release.BlockedAllowAtMaxTier),
		localnetCtClear:   r.Has(release.LocalnetEgressCtClear),
		statelessLBGroups: r.Has(release.StatelessLBGroups),
		nfVtap:            r.Has(release.NFVtap),
		nfPortBinding:     r.Has(release.NFPortBinding),
		nfOrigInport:      r.Has(release.NFOrigInport),
	}
	ru.regs = registers2303
	if r.Has(release.Registers2503) {
		ru.regs = registers2503
	}
	return ru
}
