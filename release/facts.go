package release

// The dated facts, each with the first version of every upstream branch
// that has it (checked at the tags of ovn-org/ovn and, for every branch
// aclc verifies, by goldens of the real northd on both sides of each
// point: TestSincePoints). Commits are ovn-org/ovn's.

// NB inputs the ACL stages read.
var (
	// ACLTier is ACL column tier (0..3).
	ACLTier = newInput("acl-tier", "ACL column tier", "46dacbb75", At("23.06.0"))
	// ACLPass is the ACL action "pass".
	ACLPass = newInput("acl-pass", `ACL action "pass"`, "46dacbb75", At("23.06.0"))
	// RouterPortACL is Logical_Switch_Port options:enable_router_port_acl.
	RouterPortACL = newInput("router-port-acl", "Logical_Switch_Port options:enable_router_port_acl", "9a0f30756", At("24.03.0"))
	// ACLSample is ACL columns sample_new and sample_est and the tables
	// Sample, Sample_Collector and Sampling_App.
	ACLSample = newInput("acl-sample", "ACL sampling (sample_new, sample_est; Sample, Sample_Collector, Sampling_App)", "55782afd7", At("24.09.0"))
	// SwitchPort is Logical_Switch_Port type "switch" and its column peer
	// (spine-leaf switches connected port to port).
	SwitchPort = newInput("switch-port", `Logical_Switch_Port type "switch" (and its column peer)`, "", At("25.03.0"))
	// PersistEstablished is ACL options:persist-established.
	PersistEstablished = newInput("persist-established", "ACL options:persist-established", "03556dc05", At("25.03.0"))
	// StatelessACLWithLB is Logical_Switch
	// other_config:enable-stateless-acl-with-lb.
	StatelessACLWithLB = newInput("stateless-acl-with-lb", "Logical_Switch other_config:enable-stateless-acl-with-lb", "abbc272ac", At("25.09.0"))
	// NetworkFunction is ACL column network_function_group and the tables
	// Network_Function, Network_Function_Group and
	// Network_Function_Health_Check.
	NetworkFunction = newInput("network-function", "network functions (ACL network_function_group; Network_Function, Network_Function_Group, Network_Function_Health_Check)", "", At("26.03.0"))
	// ACLCtTranslation is NB_Global options:acl_ct_translation.
	ACLCtTranslation = newInput("acl-ct-translation", "NB_Global options:acl_ct_translation", "f9ffb0ee9 (8fbda461f, f8c8b8370, 8dda00d51)", At("24.03.8", "25.03.3", "25.09.3", "26.03.0"))
)

// northd's construction of the ACL stages (compile/rules.go reads these).
var (
	// Verdicts: ACL eval stages set verdict bits and ACL action stages act
	// on them; tiers and "pass". DHCP replies no longer commit.
	Verdicts = newFact("verdicts", "46dacbb75", "eval stages set verdict bits, action stages act on them (tiers, pass)", At("23.06.0"))
	// DHCPPerAddress: the DHCP reply flows come with a port's DHCP
	// response flows: only for an enabled, non-router port on a switch
	// without other_config:dhcp_relay_port, and only when one of the
	// port's own addresses lies in the options' cidr.
	DHCPPerAddress = newFact("dhcp-per-address", "aa352ac88", "DHCP ACL-stage flows per port address in the options' cidr", At("24.03.0"))
	// ACLTiersPerStage: ls_stateful_record keeps the highest ACL tier per
	// ACL stage (ingress before and after load balancing, egress); before,
	// one max_acl_tier per switch served all three eval/action stage pairs
	// ("northd: Track max ACL tiers more accurately"). nbview's MaxTier.
	ACLTiersPerStage = newFact("acl-tiers-per-stage", "6aa66f9e1 (177ce930c)", "the highest ACL tier is tracked per ACL stage (was one per switch)", At("24.09.2", "25.03.0"))
	// ACLFlagsFullScan: ls_stateful_record_set_acl_flags_ reads the tier
	// of every ACL of the switch (FDP-1154, "northd: Fix missing tier
	// related ACL flows"). Before, it compared the running highest tier
	// with nbrec_acl_col_tier.type.value.integer.max, which is 0, and so
	// stopped at the first allow-related ACL met while no tier above 0 had
	// been seen: the tiers of the ACLs after it were ignored. nbview's
	// MaxTier (tiers.go).
	ACLFlagsFullScan = newFact("acl-flags-full-scan", "d3c791358 (58213ce91, 2049364bb)", "every ACL's tier counts towards the switch's highest tier (FDP-1154)", At("24.09.3", "25.03.0", "25.09.0"))
	// ICMPTooBig: pre-ACL and pre-LB skip conntrack for ICMP "packet too
	// big" arriving from a tunnel ("northd: Fix pmtud related issues").
	ICMPTooBig = newFact("icmp-too-big", "ccc72067f (239e9783b)", `pre-ACL/pre-LB skip conntrack for ICMP "too big" from a tunnel`, At("24.03.6", "24.09.0"))
	// Sampling: ACL sample stages, observation registers, drop commits
	// carry ct_label.obs_point_id.
	Sampling = newFact("sampling", "55782afd7", "ACL sample stages and observation registers", At("24.09.0"))
	// IPFrag: pre-stateful keeps ip.is_frag in a register across
	// recirculation ("Fix load balanced hairpin traffic for fragmented
	// packets").
	IPFrag = newFact("ip-frag", "0f806cf08 (3a3b28d94, 0e2fb834f)", "pre-stateful keeps ip.is_frag in reg0[19]", At("24.03.5", "24.09.2", "25.03.0"))
	// DNSFromCtrl: the DNS reply flow matches flags.from_ctrl ("Skip
	// only OVN DNS responder packets from OUT_ACL").
	DNSFromCtrl = newFact("dns-from-ctrl", "474bdfcad (70618a65f, 249c52ad0)", "the egress DNS reply flow matches flags.from_ctrl", At("24.03.5", "24.09.2", "25.03.0"))
	// Persist: ACL options:persist-established, ct_mark.allow_established
	// and ct_label.acl_id.
	Persist = newFact("persist", "03556dc05", "persist-established ACLs (ACL ids, ct_mark.allow_established)", At("25.03.0"))
	// Registers2503: the original destination of a load balanced packet
	// is reg4 (was reg1).
	Registers2503 = newFact("registers-2503", "91988089c", "REG_ORIG_DIP_IPV4 is reg4 (was reg1)", At("25.03.0"))
	// CommitInHint: the ACL hint stage sets the commit bit for new
	// connections instead of the allow ACLs and the default flows.
	CommitInHint = newFact("commit-in-hint", "0aa2a4828 (c26b6a3b2, f8d6d7b46, 745421361)", "the hint stage sets REGBIT_CONNTRACK_COMMIT for new connections", At("24.03.6", "24.09.3", "25.03.1", "25.09.0"))
	// NoRedundantCt: "!ct.new" and "!ct.inv" dropped from the reply
	// flows' matches.
	NoRedundantCt = newFact("no-redundant-ct", "8828b6120", `"!ct.new"/"!ct.inv" dropped from reply matches`, At("25.09.0"))
	// StatelessLB: LS other_config:enable-stateless-acl-with-lb.
	StatelessLB = newFact("stateless-lb", "abbc272ac", "the stateless-ACL-with-LB mode", At("25.09.0"))
	// IGMPLoopback: a transit switch punts only IGMP/MLD that is not
	// looped back (first landed and reverted before 24.09).
	IGMPLoopback = newFact("igmp-loopback", "d3cb5a0ba", "transit switches punt only IGMP/MLD not looped back", At("25.09.0"))
	// IGMPLoopbackFirst and IGMPLoopbackReverted: the first landing of
	// the same change (4494e0215, 29af310ce on branch-24.03) and its
	// revert (05187a0a6, c00a2c625), both before 24.09.0; compile's rule is
	// IGMPLoopback or (IGMPLoopbackFirst and not IGMPLoopbackReverted):
	// only 24.03.2 on the branches aclc verifies.
	IGMPLoopbackFirst    = newFact("igmp-loopback-first", "4494e0215 (29af310ce, 8091ef796, 828d95e89)", "transit switches punt only IGMP/MLD not looped back (first landing)", At("23.06.4", "23.09.4", "24.03.2", "24.09.0"))
	IGMPLoopbackReverted = newFact("igmp-loopback-reverted", "05187a0a6 (c00a2c625, 848b17e90)", "the first landing of igmp-loopback reverted", At("23.09.5", "24.03.3", "24.09.0"))
	// SetID32: sample() prints the collector's set_id in full, not
	// truncated to 8 bits.
	SetID32 = newFact("set-id-32", "a5b147828 (6d5c6d70a)", "sample() prints the collector set_id in full", At("25.03.1", "25.09.0"))
	// NF: network functions and their stages; eval flows copy ct_label.nf.
	NF = newFact("nf", "", "network function stages", At("26.03.0"))
	// CtTranslation: NB_Global options:acl_ct_translation.
	CtTranslation = newFact("ct-translation", "f9ffb0ee9 (8fbda461f, f8c8b8370, 8dda00d51)", "options:acl_ct_translation flows", At("24.03.8", "25.03.3", "25.09.3", "26.03.0"))
	// PktSampled: a packet is sampled once — sample flows set and test
	// flags.pkt_sampled, a port skipped from conntrack clears it with
	// ct_clear.
	PktSampled = newFact("pkt-sampled", "68850ba3e", "flags.pkt_sampled", At("26.03.0"))
	// SwitchPortsSkipCt: ports of type "switch" skip conntrack like router
	// ports.
	SwitchPortsSkipCt = newFact("switch-ports-skip-ct", "2f2b263df", `ports of type "switch" skip conntrack`, At("26.03.0"))
	// EVPN: EVPN remote VTEP traffic skips conntrack.
	EVPN = newFact("evpn", "e8dc42020", "EVPN remote VTEP traffic skips conntrack", At("26.03.1"))
)

// What trace and nbview read of northd's other stages.
var (
	// FloodARPsToL2: LS other_config:broadcast-arps-to-all-routers=false
	// floods ARP requests and ND NS to _MC_flood_l2, without the router
	// ports ("northd: add router broadcast option to logical switch").
	FloodARPsToL2 = newFact("flood-arps-to-l2", "37d308a20", "broadcast-arps-to-all-routers=false floods ARP/ND NS to _MC_flood_l2", At("23.06.0"))
	// FloodIPToL2: IP and non-ARP L2 multicast go to _MC_flood_l2, ARP
	// and ND NA/RS/RA to _MC_flood ("northd: Don't forward IP multicast
	// to routers without IGMP relay"); before, every eth.mcast packet went
	// to _MC_flood.
	FloodIPToL2 = newFact("flood-ip-to-l2", "0d49036fc (124d86e23, 248eb2777, 1d14f5e2c)", "IP multicast flooded to _MC_flood_l2", At("24.03.8", "25.03.3", "25.09.3", "26.03.1"))
	// FloodReceiveMulticast: a port with options:receive_multicast=false
	// is in neither flood group (the network-function series).
	FloodReceiveMulticast = newFact("flood-receive-multicast", "8e2d6fa14", "options:receive_multicast=false ports leave the flood groups", At("26.03.0"))
	// ARPRspBroadcastOnly: the ARP responder answers broadcast requests
	// only, unicast ones go to their target ("Do not reply on unicast arps
	// for IPv4 targets"; northd writes eth.dst == ff:ff:ff:ff:ff:ff into
	// its ls_in_arp_rsp flows). Branch-24.03 got it with "northd: Ensure
	// unicast ARPs are forwarded properly" (24.03.7).
	ARPRspBroadcastOnly = newFact("arp-rsp-broadcast-only", "c48ed1736 (4fa78fa1f)", "the ARP responder answers only broadcast requests", At("24.03.7", "24.09.0"))
	// LBRegsInAction: the VIP flow stores the VIP and port in the
	// original-destination registers in its action (reg4/xxreg1,
	// reg2[0..15]) rather than ls_in_pre_stateful's.
	// Came with "Fix load balanced hairpin traffic for fragmented
	// packets", with ls_in_lb's flows for fragments.
	LBRegsInAction = newFact("lb-regs-in-action", "0f806cf08 (3a3b28d94, 0e2fb834f)", "ls_in_lb actions load the original destination", At("24.03.5", "24.09.2", "25.03.0"))
	// LBNoCommitClear: the VIP flow no longer starts with
	// REGBIT_CONNTRACK_COMMIT = 0 ("northd: Commit from-lport ACL label
	// (and state) when LBs are used").
	LBNoCommitClear = newFact("lb-no-commit-clear", "a0beaab8c", "ls_in_lb VIP actions do not clear reg0[1]", At("24.09.0"))
	// LBCtExtract: ls_in_ct_extract stores ct_proto()/ct_tp_dst() in
	// reg1 for new connections and the VIP flows match on those registers
	// instead of tcp.dst/udp.dst ("northd: Fix HW offload problem related
	// to ct_tuple"); ovn-trace then executes ct_proto() and ct_tp_dst() on
	// the packet's own fields.
	LBCtExtract = newFact("lb-ct-extract", "8e6f9a835", "ls_in_ct_extract and VIP flows on its registers", At("25.09.0"))
	// LBFragEst: the LB fragment flows also require ct.est ("physical:
	// Support ct.new state in ct_xxx actions").
	LBFragEst = newFact("lb-frag-est", "9d8afd441", "LB fragment flows require ct.est", At("25.09.0"))
	// LBFromDatapath: ls_in_lb holds the flows of every load balancer the
	// switch's datapath has — its own, its groups', and with
	// install_ls_lb_from_router its routers' — and template load
	// balancers are instantiated per chassis (23.03.1: the switch's own
	// load balancers only).
	LBFromDatapath = newFact("lb-from-datapath", "", "ls_in_lb flows of every load balancer of the datapath", At("23.06.0"))
	// CtFieldsEveryRecirculation: ovn-trace sets the ct_* fields on every
	// conntrack action (populate_ct_fields: ct_next, ct_dnat/ct_snat,
	// ct_commit_nat, ct_lb), not only when ct_lb DNATs (with
	// ct_proto()/ct_tp_dst()).
	CtFieldsEveryRecirculation = newFact("ct-fields-every-recirculation", "", "ovn-trace sets the ct fields on every conntrack action", At("25.09.0"))
	// SvcMonitorMACDst: northd adds svc_monitor_mac_dst to the
	// svc_monitor_mac address set ("Network Function Health monitoring").
	SvcMonitorMACDst = newFact("svc-monitor-mac-dst", "b42edf4a4", "svc_monitor_mac_dst in the svc_monitor_mac address set", At("26.03.0"))
)

// The match language (acl/expr's dialect changes, by their names there).
var (
	// DialectLocalnetFlags: flags.localnet, flags.icmp_snat,
	// flags.tunnel_rx.
	DialectLocalnetFlags = newDialect("localnet-flags", "", At("24.03.0"))
	// DialectSampling: ct_mark.obs_*, ct_label.obs_*; the ct_label copies
	// of ct_mark's bits gone; multicast predicates require multicast.
	DialectSampling = newDialect("sampling", "", At("24.09.0"))
	// DialectPersist: flags.unsnat_*, flags.from_ctrl,
	// ct_mark.allow_established, ct_label.acl_id.
	DialectPersist = newDialect("persist", "", At("25.03.0"))
	// DialectStrictTemplates: a match using an undefined template
	// variable fails as a whole.
	DialectStrictTemplates = newDialect("strict-templates", "6154aa104", At("25.03.0"))
	// DialectNetworkID: remote_outport, flags.network_id,
	// flags.igmp_loopback, ip6.mcast_rsvd redefined.
	DialectNetworkID = newDialect("network-id", "", At("25.09.0"))
	// DialectNF: flags.pkt_sampled, ct_label.nf/nf_id/tun_if/tun_if_id.
	DialectNF = newDialect("nf", "", At("26.03.0"))
	// DialectEVPN: __inport/__outport, from_evpn_vtep, to_evpn_vtep.
	DialectEVPN = newDialect("evpn", "e8dc42020", At("26.03.1"))
)

// newDialect declares a change of the match language; name is the
// change's name in acl/expr (expr.Changes).
func newDialect(name, commits string, since Since) *Fact {
	f := newFact("dialect-"+name, commits, "match language: "+name, since)
	f.dialect = name
	return f
}

// DialectChange is, for a fact that is a change of the match language,
// the change's name in acl/expr; else "".
func (f *Fact) DialectChange() string { return f.dialect }

// DialectFact is the fact of the match-language change named name (an
// acl/expr Change), nil when there is none.
func DialectFact(name string) *Fact {
	for _, f := range facts {
		if f.dialect == name && name != "" {
			return f
		}
	}
	return nil
}
