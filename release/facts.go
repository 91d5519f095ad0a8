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
	// LportMirror is Mirror type "lport" ("northd: Added support for
	// port mirroring in OVN overlay"): a port whose mirror_rules name an
	// lport mirror gets a serving port mp-SWITCH-SINK, and
	// build_mirror_lflows skips every ACL stage for traffic to it
	// (ls_out_pre_acl, priority 65535).
	LportMirror = newInput("lport-mirror", `Mirror type "lport" (a switch port's mirror_rules mirroring to another port)`, "2a2fe266d", At("25.09.0"))
	// NFVtap is Network_Function_Group mode "vtap" and a Network_Function
	// without an outport (NB schema 7.19.0, "ovn-nb: Network Function vtap
	// mode schema changes"; northd's flows: 8c45b31f1). A vtap group
	// mirrors its traffic to the function's one port instead of
	// redirecting it.
	NFVtap = newInput("nf-vtap", `Network_Function_Group mode "vtap" (and Network_Function without outport)`, "4981ad6fa, 8c45b31f1", At("26.09.0"))
)

// northd's construction of the ACL stages (compile/rules.go reads these).
var (
	// Verdicts: ACL eval stages set verdict bits and ACL action stages act
	// on them; tiers and "pass".
	Verdicts = newFact("verdicts", "46dacbb75", "eval stages set verdict bits, action stages act on them (tiers, pass)", At("23.06.0"))
	// DHCPNoCommit: the DHCP reply flows no longer commit to conntrack on
	// a stateful switch (the ls_stateful node's build_acls).
	DHCPNoCommit = newFact("dhcp-no-commit", "81ef77242 (38f6a7e7d)", "DHCP reply ACL flows no longer ct_commit", At("24.03.0"))
	// DHCPPerAddress: the DHCP reply flows come with a port's DHCP
	// response flows (build_dhcpv4/6_options_flows): only for an enabled,
	// non-router port, and only when one of the port's own addresses lies
	// in the options' cidr.
	DHCPPerAddress = newFact("dhcp-per-address", "aa352ac88 (9d3f0d8602)", "DHCP ACL-stage flows per port address in the options' cidr", At("23.09.0", "24.03.0"))
	// DHCPOneRequestFlow: a port's DHCPv4 requests, discover and renewal,
	// meet one ls_in_dhcp_options flow ("(ip4.src == {OFFER, 0.0.0.0} &&
	// ip4.dst == {SERVER, 255.255.255.255})") instead of two ("Reduce
	// number of DHCP responder flows for LSPs").
	DHCPOneRequestFlow = newTraceFact("dhcp-one-request-flow", "2132acb16 (faeb96968)", "one ls_in_dhcp_options flow per port for discover and renewal", At("24.03.0"))
	// DHCPv6Multicast: the DHCPv6 responder's flows match ip6.mcast before
	// ip6.dst == ff02::1:2 ("northd: Add missing multicast match to DHCPv6
	// options flows").
	DHCPv6Multicast = newTraceFact("dhcpv6-multicast", "03ef56f9c (120ba7d87, f90dc351d)", "the DHCPv6 responder flows match ip6.mcast", At("24.03.5", "24.09.2", "25.03.0"))
	// DHCPRelaySkip: a switch with other_config:dhcp_relay_port has no
	// DHCP server flows ("DHCP Relay Agent support for overlay IPv4
	// subnets").
	DHCPRelaySkip = newFact("dhcp-relay-skip", "dce4abfc6", "no DHCP ACL flows on a switch with dhcp_relay_port", At("24.09.0"))
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
	// big" arriving from a tunnel ("Fix pmtud for non routed traffic").
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
	// StatelessLBEgressCt: in that mode a to-lport allow-stateless ACL
	// keeps its ls_out_pre_acl filter flow, and each load balancer of the
	// switch adds ls_out_pre_lb 115 (reg0[16] == 1 -> reg0[2] = 1) and
	// ls_out_stateful 110 ("Fix connection tracking for
	// enable-stateless-acl-with-lb option"); 25.09.0 skipped the filter
	// and had neither.
	StatelessLBEgressCt = newFact("stateless-lb-egress-ct", "1539dba68 (b9db5287e)", "stateless-with-LB mode: egress filter kept, pre_lb 115 and stateful 110 flows", At("25.09.1", "26.03.0"))
	// StatelessLBHairpin: in that mode the ls_in_pre_stateful 150 VIP flow
	// stores the original destination before ct_lb_mark ("Fix
	// enable-stateless-acl-with-lb hairpin use").
	StatelessLBHairpin = newFact("stateless-lb-hairpin", "635f6ee47 (b1384b05a)", "stateless-with-LB mode: the 150 VIP flow stores the original destination", At("25.09.3", "26.03.0"))
	// IGMPLoopback: a transit switch punts only IGMP/MLD that is not
	// looped back; backported to 23.06.4, 23.09.4 and 24.03.2, and
	// reverted again in 23.09.5 and 24.03.3.
	IGMPLoopback = newFact("igmp-loopback", "d3cb5a0ba", "transit switches punt only IGMP/MLD not looped back", At("23.06.4", "23.09.4..23.09.5", "24.03.2..24.03.3", "25.09.0"))
	// SetID32: sample() prints the collector's set_id in full, not
	// truncated to 8 bits.
	SetID32 = newFact("set-id-32", "a5b147828 (6d5c6d70a)", "sample() prints the collector set_id in full", At("24.09.3", "25.03.1", "25.09.0"))
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
	SwitchPortsSkipCt = newFact("switch-ports-skip-ct", "2f2b263df (13ec14884)", `ports of type "switch" skip conntrack`, At("25.09.3", "26.03.0"))
	// EVPN: EVPN remote VTEP traffic skips conntrack.
	EVPN = newFact("evpn", "e8dc42020", "EVPN remote VTEP traffic skips conntrack", At("26.03.1"))
	// BlockedAllowAtMaxTier: build_acls' priority-1 eval flow that lets an
	// established connection with ct_mark.blocked resume also matches
	// reg8[30..31] == the stage's highest tier, so that it competes only
	// after every tier was evaluated ("northd: Gate priority-1
	// default-allow on REG_ACL_TIER for tiered ACLs"). branch-26.03 has the
	// backport 9be8b2cfb after v26.03.2 (26.03.2's goldens lack it): add
	// its since-point when that branch's next version is verified.
	BlockedAllowAtMaxTier = newFact("blocked-allow-at-max-tier", "2c67789ce (9be8b2cfb)", "the ct_mark.blocked allow flow of a tiered eval stage waits for its highest tier", At("26.09.0"))
	// LocalnetEgressCtClear: skip_port_from_conntrack clears the
	// conntrack state of traffic leaving by a localnet port even on a
	// stateful switch ("northd: Always clear ct_state on localnet port
	// egress"; main only).
	LocalnetEgressCtClear = newFact("localnet-egress-ct-clear", "904052866", "egress to a localnet port always does ct_clear", At("26.09.0"))
	// StatelessLBGroups: with enable-stateless-acl-with-lb, the load
	// balancers of the switch's load balancer groups are in stateless mode
	// too (their priority-150/105 ls_in_pre_stateful flows). The commit is
	// after the fetched main (2026-08-03, whose build_lb_datapaths marks
	// only the switch's own load balancers); the rule is 26.09.0's
	// observed behaviour: a router's load balancers installed with
	// install_ls_lb_from_router still are not.
	StatelessLBGroups = newFact("stateless-lb-groups", "", "stateless-ACL-with-LB mode covers the switch's load balancer groups", At("26.09.0"))
	// NFPortBinding: network_function_update_active counts a function
	// healthy only when its ports (inline: inport and outport; vtap: the
	// inport) are bound to one chassis and up in the SB, and then (inline
	// with a health check) its Service_Monitor is online (8c45b31f1, with
	// vtap mode). With no chassis no function is active.
	NFPortBinding = newFact("nf-port-binding", "8c45b31f1", "a network function is active only when its ports are bound and up", At("26.09.0"))
	// NFOrigInport: inline network functions learn the packet's original
	// inport — ls_in_network_function's redirects and, on a switch without
	// a localnet port, a priority-50 flow for traffic not redirected do
	// nf_learn_orig_inport(ipv6 = ...), split into ip4 and ip6 — and
	// traffic back from the function looks it up
	// (reg8[24] = nf_lookup_orig_inport(): ls_out_pre_acl at priority 115,
	// was 110, and ls_out_network_function at priority 2). The commit is
	// after the fetched main; the flows are 26.09.0's observed ones.
	NFOrigInport = newFact("nf-orig-inport", "", "inline network functions learn and look up the original inport", At("26.09.0"))
)

// What trace and nbview read of northd's other stages.
var (
	// FloodARPsToL2: LS other_config:broadcast-arps-to-all-routers=false
	// floods ARP requests and ND NS to _MC_flood_l2, without the router
	// ports ("northd: add router broadcast option to logical switch").
	FloodARPsToL2 = newTraceFact("flood-arps-to-l2", "37d308a20", "broadcast-arps-to-all-routers=false floods ARP/ND NS to _MC_flood_l2", At("23.06.0"))
	// FloodNonIPToL2: multicast that is neither ARP nor IP goes to
	// _MC_flood_l2 (71 eth.mcast && (arp || ip) -> _MC_flood, 70 eth.mcast
	// -> _MC_flood_l2: "Do not forward unknown ether type to router
	// ports"); before, every eth.mcast packet went to _MC_flood. Shipped
	// with FloodIPToL2 on every branch but 26.03, whose 26.03.0 has it
	// alone.
	FloodNonIPToL2 = newTraceFact("flood-non-ip-to-l2", "7ac96b657 (fac50ea32, 15ef9a08f, 1252ba385)", "non-IP, non-ARP multicast flooded to _MC_flood_l2", At("24.03.8", "25.03.3", "25.09.3", "26.03.0"))
	// FloodIPToL2: IP and non-ARP L2 multicast go to _MC_flood_l2, ARP
	// and ND NA/RS/RA to _MC_flood ("northd: Don't forward IP multicast
	// to routers without IGMP relay").
	FloodIPToL2 = newTraceFact("flood-ip-to-l2", "0d49036fc (124d86e23, 248eb2777, 1d14f5e2c)", "IP multicast flooded to _MC_flood_l2", At("24.03.8", "25.03.3", "25.09.3", "26.03.1"))
	// FloodReceiveMulticast: a port with options:receive_multicast=false
	// is in neither flood group (the network-function series).
	FloodReceiveMulticast = newTraceFact("flood-receive-multicast", "8e2d6fa14", "options:receive_multicast=false ports leave the flood groups", At("26.03.0"))
	// ARPRspBroadcastOnly: the ARP responder answers broadcast requests
	// only, unicast ones go to their target ("Do not reply on unicast arps
	// for IPv4 targets"; northd writes eth.dst == ff:ff:ff:ff:ff:ff into
	// its ls_in_arp_rsp flows).
	ARPRspBroadcastOnly = newTraceFact("arp-rsp-broadcast-only", "c48ed1736 (4fa78fa1f)", "the ARP responder answers only broadcast requests", At("24.03.7", "24.09.0"))
	// LBOrigDstInAction: the ls_in_lb VIP flow stores the VIP and port in
	// the original-destination registers in its action (REG_ORIG_DIP_*:
	// reg1 or, from Registers2503, reg4; xxreg1; reg2[0..15]), and
	// fragments get their original destination from conntrack ("Fix load
	// balanced hairpin traffic for fragmented packets").
	LBOrigDstInAction = newTraceFact("lb-orig-dst-in-action", "0f806cf08 (3a3b28d94, 0e2fb834f)", "ls_in_lb actions load the original destination", At("24.03.5", "24.09.2", "25.03.0"))
	// LBNoCommitReset: the ls_in_lb VIP actions no longer start with
	// `reg0[1] = 0; `.
	LBNoCommitReset = newTraceFact("lb-no-commit-reset", "a0beaab8c", "ls_in_lb VIP actions without reg0[1] = 0", At("24.09.0"))
	// LBCtExtract: ls_in_ct_extract stores ct_proto()/ct_tp_dst() in
	// reg1 for new connections and the VIP flows match on those registers
	// instead of tcp.dst/udp.dst ("northd: Fix HW offload problem related
	// to ct_tuple"); ovn-trace then executes ct_proto() and ct_tp_dst() on
	// the packet's own fields.
	LBCtExtract = newTraceFact("lb-ct-extract", "8e6f9a835", "ls_in_ct_extract and VIP flows on its registers", At("25.09.0"))
	// LBFragEst: the LB fragment flows also require ct.est ("physical:
	// Support ct.new state in ct_xxx actions").
	LBFragEst = newTraceFact("lb-frag-est", "9d8afd441", "LB fragment flows require ct.est", At("25.09.0"))
	// LBFromDatapath: ls_in_lb holds the flows of every load balancer the
	// switch's datapath has — its own, its groups', and with
	// install_ls_lb_from_router its routers' — and template load
	// balancers are instantiated per chassis (23.03.1: the switch's own
	// load balancers only).
	LBFromDatapath = newTraceFact("lb-from-datapath", "", "ls_in_lb flows of every load balancer of the datapath", At("23.06.0"))
	// CtFieldsEveryRecirculation: ovn-trace sets the ct_* fields on every
	// conntrack action (populate_ct_fields: ct_next, ct_dnat/ct_snat,
	// ct_commit_nat, ct_lb), not only when ct_lb DNATs (with
	// ct_proto()/ct_tp_dst()).
	CtFieldsEveryRecirculation = newTraceFact("ct-fields-every-recirculation", "", "ovn-trace sets the ct fields on every conntrack action", At("25.09.0"))
	// ExtPortInportRewrite: on a switch with a localnet port, a packet
	// from it whose source is an external port's MAC takes that port as
	// its inport in ls_in_check_port_sec ("Fix HM reply lflow for
	// type=external backends on localnet LS"; reverted on branch-26.03
	// after 26.03.2 and on main).
	ExtPortInportRewrite = newTraceFact("ext-port-inport-rewrite", "579abb5e4 (reverted ca33b0daf, d533ac479)", "localnet packets from an external port's MAC take its inport", At("26.03.2..26.03.3"))
	// FromRouterPortBit: ls_in_check_port_sec marks packets from a
	// router port (REGBIT_FROM_ROUTER_PORT, reg0[18], priority 70) instead
	// of checking their port security; only the proxy-ARP responder,
	// which trace does not model, reads it ("northd: Skip arp-proxy flows
	// if the lsp is a router port").
	FromRouterPortBit = newTraceFact("from-router-port-bit", "cc4187b4b (7973b4152, cf6cd0f57, 57e8d78f5)", "router-port packets set reg0[18] in ls_in_check_port_sec", At("23.06.5", "23.09.5", "24.03.3", "24.09.0"))
	// LocalnetARPResponder: packets from a localnet port set
	// flags.localnet in ls_in_lookup_fdb (priority 50) instead of skipping
	// the ARP/ND responder, whose replies on a switch with a localnet
	// port add "((flags.localnet == 1 && is_chassis_resident(PORT)) ||
	// flags.localnet == 0)" ("northd: Enable ARP/ND responder for
	// localnet-sourced requests", FDP-3436).
	LocalnetARPResponder = newTraceFact("localnet-arp-responder", "e6ffc4919 (20ee3d9a0, 39ca8ea00, 6a360b624)", "localnet packets set flags.localnet; ARP/ND replies check chassis residency", At("24.03.9", "25.09.4", "26.03.2", "26.09.0"))
	// OvnTraceNDRAOpts: ovn-trace executes put_nd_ra_opts(); before, it
	// executed it as put_dhcpv6_opts() and aborted ("ovn-trace: Fix
	// copy-paste error for tracing put_nd_ra_opts()"), so aclc has no
	// answer to compare with and does not trace a router solicitation
	// that reaches one.
	OvnTraceNDRAOpts = newTraceFact("ovn-trace-nd-ra-opts", "ae352404a (44fe79b1e, ebe86803d, 1b8ac2678)", "ovn-trace executes put_nd_ra_opts()", At("23.09.6", "24.03.4", "24.09.1", "25.03.0"))
	// ARPProxyMAC: a router port's arp_proxy option may start with a MAC,
	// which the switch's L2 lookup sends to that router port along with
	// the router port's own MAC ("eth.dst == { PROXY, LRP }"; "northd,
	// lsp: Add additional arp proxy features"). Before it, the option
	// held IPs only.
	ARPProxyMAC = newTraceFact("arp-proxy-mac", "77846b215", "the arp_proxy MAC in the router port's L2 lookup flow", At("23.06.0"))
	// ARPProxyResponder: the switch's proxy ARP responder for a router
	// port's arp_proxy addresses answers at priority 30 (below the ports'
	// own addresses) for "ADDR/PLEN" networks, with the option's MAC if it
	// starts with one, and ND too; a switch with an arp_proxy port no
	// longer skips the responder for its localnet ports' requests
	// ("northd, lsp: Add additional arp proxy features", "northd: Decrease
	// arp_proxy priority to 30", "northd, arp_proxy: response ARP at
	// localnet lsp"). Before it, priority 50, IPv4 addresses only and the
	// peer router port's MAC.
	ARPProxyResponder = newTraceFact("arp-proxy-responder", "77846b215, 9e3429289, 551439cb6", "the proxy ARP responder at priority 30 for networks, with the option's MAC", At("23.06.0"))
	// ARPProxyUnicast: on a switch with an arp_proxy port, a unicast
	// ARP request (or ND solicitation) for a port's address goes on to
	// its target (a priority-50 `next;` on eth.dst == the port's MAC, ip6.dst
	// == the address) instead of being answered by the proxy responder
	// ("northd: Ensure unicast ARPs are forwarded properly").
	ARPProxyUnicast = newTraceFact("arp-proxy-unicast", "c73f79126 (4fa78fa1f, b8d16d432, 1a7489211)", "unicast ARP/NS for a port's address skip the proxy responder", At("24.03.7", "25.03.2", "25.09.1", "26.03.0"))
	// SwitchChassisRedirect: a switch port peered with its router's only
	// distributed gateway port, on a switch without localnet ports, gets a
	// chassis-redirect port of its own ("cr-" + its name), which northd's
	// L2 lookup and the switch's flood group use instead of the port off
	// the gateway chassis ("Add support for centralize routing for
	// distributed gw ports"; join_logical_ports
	// peer_needs_cr_port_creation).
	SwitchChassisRedirect = newTraceFact("switch-chassis-redirect", "8d13579bf (24.03: 04533ea43)", "switch-side chassis-redirect port of a router's only distributed gateway port", At("24.03.6", "24.09.0"))
	// RportARPBroadcast: the L2 lookup sends an ARP request for a router
	// port's address to the router only when it is broadcast ("northd:
	// Restrict ARP/ND_NS L2 lookup flows to broadcast"; arp_nd_ns_match).
	// Backported to branch-25.09 (484480bcb) and branch-26.03 (31447d9fa)
	// after 25.09.4 and 26.03.2: add their first releases here.
	RportARPBroadcast = newTraceFact("rport-arp-broadcast", "ff4abb271", "ARP requests for a router port's address go to the router only when broadcast", At("26.09.0"))
	// RportARPUnknown: on a switch with other ports, an ARP request for a
	// router port's address is flooded to _MC_unknown besides the copy
	// for the router, and one whose sender is that address too (a GARP)
	// to _MC_flood_l2 only, ten priorities higher ("northd: Use MC_UNKNOWN
	// for broadcast ARP requests"; build_lswitch_rport_arp_req_flow).
	// Backported to branch-25.09 (f2557ab57) and branch-26.03 (8aa51920d)
	// after 25.09.4 and 26.03.2: add their first releases here.
	RportARPUnknown = newTraceFact("rport-arp-unknown", "1872d61e3", "ARP requests for a router port's address flooded to _MC_unknown; GARPs of it to _MC_flood_l2", At("26.09.0"))
	// SelfOrigBroadcast: the L2 lookup floods a router's own ARP
	// requests, RARPs and neighbour solicitations to _MC_flood_l2 only
	// when they are broadcast (eth.dst == ff:ff:ff:ff:ff:ff); before, any
	// with the router's MAC as source ("northd: Limit flooding the self
	// originated neigh disc packets"; build_lswitch_rport_arp_req_self_orig_flow).
	SelfOrigBroadcast = newTraceFact("self-orig-broadcast", "6f7f86942 (655381c6a, c05c56554, fe5740e2c)", "a router's own ARP/ND is flooded to _MC_flood_l2 only when broadcast", At("24.03.6", "24.09.3", "25.03.1", "25.09.0"))
	// RouterL2PeerMAC: a switch port of type router with a peer router
	// port gets one L2 lookup flow for the peer's MAC, whatever its
	// addresses ("northd: Don't reparse lport's addresses while adding
	// L2_LKUP flows"); before it, one per address ("router": the peer's
	// MAC; a MAC: that MAC).
	RouterL2PeerMAC = newTraceFact("router-l2-peer-mac", "373c458e2", "a router port's L2 lookup flow is its peer's MAC whatever its addresses", At("24.09.0"))
	// SvcMonitorMACDst: northd adds svc_monitor_mac_dst to the
	// svc_monitor_mac address set ("Network Function Health monitoring").
	SvcMonitorMACDst = newTraceFact("svc-monitor-mac-dst", "b42edf4a4", "svc_monitor_mac_dst in the svc_monitor_mac address set", At("26.03.0"))
)

// The match language: acl/expr's dialect changes, by their names there
// (lib/logical-fields.c and lib/lex.c at each tag; pinned by each
// version's own parser through acl/expr's oracle corpus).
var (
	DialectLocalnetFlag    = newDialect("localnet-flag", "2acf91e96 (8befadaf9, 33b011759)", At("23.06.3", "23.09.1", "24.03.0"))
	DialectTunnelFlags     = newDialect("tunnel-flags", "221476a01, 43f741c2f (6d2f9d607, 6a4c412f4, f2e8130d0)", At("23.09.2", "24.03.0"))
	DialectIGMPLoopback18  = newDialect("igmp-loopback-18", "828d95e89, 8091ef796, 29af310ce; reverted 848b17e90, c00a2c625", At("23.06.4", "23.09.4..23.09.5", "24.03.2..24.03.3"))
	DialectMcastPredicates = newDialect("mcast-predicates", "43c34f2e6 (d15c6fb48, ea584fd60, 18d66c853)", At("23.06.5", "23.09.5", "24.03.3", "24.09.0"))
	DialectNDNSMcast       = newDialect("nd-ns-mcast", "2e7f318c9 (6b6bfd53d, bc56bc6f7, 30a502e9f)", At("23.09.6", "24.03.4", "24.09.0"))
	DialectSampling        = newDialect("sampling", "d15b12da6, 539f7676b, f1f5c34f1", At("24.09.0"))
	DialectFromCtrl        = newDialect("from-ctrl", "474bdfcad (70618a65f, 249c52ad0)", At("24.03.5", "24.09.2", "25.03.0"))
	DialectStrictTemplates = newDialect("strict-templates", "6154aa104 (29113e8da, 0a767e8d8)", At("24.03.5", "24.09.2", "25.03.0"))
	DialectPersist         = newDialect("persist", "800fd0681, 03556dc05, 2aaf905e4", At("25.03.0"))
	DialectNetworkIDFlag   = newDialect("network-id-flag", "af6e83707 (c9a2a6357, 73a236071, 6756ece39)", At("24.03.6", "24.09.3", "25.03.1", "25.09.0"))
	DialectMcastRsvd       = newDialect("mcast-rsvd", "ab1937541 (d162828a3, 054552f17)", At("24.03.7", "25.03.2", "25.09.0"))
	DialectRemoteOutport   = newDialect("remote-outport", "889e1fc50", At("25.09.0"))
	DialectIGMPLoopback    = newDialect("igmp-loopback", "d3cb5a0ba", At("25.09.0"))
	DialectNF              = newDialect("nf", "68850ba3e, e21e0b0c1, 62cccf1d5", At("26.03.0"))
	DialectEVPN            = newDialect("evpn", "e8dc42020 (main c420b6fbf)", At("26.03.1"))
	DialectInnerIP4        = newDialect("inner-ip4", "32b440983", At("26.09.0"))
)

// newDialect declares a change of the match language; name is the
// change's name in acl/expr (expr.Changes).
func newDialect(name, commits string, since Since) *Fact {
	return declare(&Fact{kind: MatchFact, name: "dialect-" + name, what: "match language: " + name,
		commits: commits, since: since, dialect: name})
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

// northd's construction of the logical router pipeline, for the routers
// aclc compiles (compile/router*.go reads these): every difference
// between 23.03.1's router flows and a later version's.
var (
	// RouterNetworkID: the router stage lr_in_network_id, between
	// lr_in_gw_redirect and lr_in_arp_request ("northd: Use next-hop
	// network for SNAT when lb_force_snat_ip=router_ip").
	RouterNetworkID = newRouterFact("router-network-id", "af6e83707 (c9a2a6357, 73a236071, 6756ece39)", "the router stage lr_in_network_id", At("24.03.6", "24.09.3", "25.03.1", "25.09.0"))
	// RouterECMPStatefulEgr: the router stage lr_in_ecmp_stateful_egr,
	// the last of the ingress pipeline ("northd: Commit ECMP symmetric
	// egress traffic earlier").
	RouterECMPStatefulEgr = newRouterFact("router-ecmp-stateful-egr", "c7b845f49 (86075a018, e97f7caf4)", "the router stage lr_in_ecmp_stateful_egr", At("25.03.3", "25.09.3", "26.03.0"))
)

// The router flows' changes (compile/router*.go reads these).
var (
	// RouterPMTUDDrop: lr_in_admission drops, at priority 110, an ICMP
	// "fragmentation needed"/"packet too big" that came in from a tunnel
	// ("ovn: Add tunnel PMTUD support"); the same commit turns such a
	// packet for a distributed gateway port's MAC that came in off its
	// gateway chassis around to the port (priority 120).
	RouterPMTUDDrop = newRouterFact("router-pmtud-drop", "221476a01 (6d2f9d607)", "lr_in_admission drops tunnelled ICMP too-big at priority 110", At("23.09.2", "24.03.0"))
	// RouterMACCacheUse: the lr_in_learn_neighbor priority-100 flow for a
	// known neighbour does mac_cache_use ("northd, controller: Use the
	// MAC cache table").
	RouterMACCacheUse = newRouterFact("router-mac-cache-use", "c23059318", "lr_in_learn_neighbor 100: mac_cache_use; next;", At("23.09.0"))
	// RouterVPortDynamicMAC: a virtual port's IP gets no lr_in_arp_resolve
	// flow: the router learns its MAC from the active parent's gratuitous
	// ARP, as for any neighbour ("northd: Use dynamic mac-binding for
	// virtual port IPs"). Before it, northd wrote one from the SB binding:
	// all zeros (resolve with arp { }) while no parent claims the port,
	// else the parent's MAC.
	RouterVPortDynamicMAC = newRouterFact("router-vport-dynamic-mac", "98531a4d5", "no lr_in_arp_resolve flow for a virtual port's IP", At("23.06.0"))
	// RouterLookupNDTarget: with always_learn_from_arp_request=false the
	// link-local NA lookup (lr_in_lookup_neighbor 110) looks up nd.target,
	// not ip6.src ("northd: Use proper field for lookup_nd"). Also
	// backported to 23.03.3 (56a755211), a version aclc does not support.
	RouterLookupNDTarget = newRouterFact("router-lookup-nd-target", "e3b798bec (7e812349d, 8e25c1c37)", "the link-local NA lookup uses nd.target", At("23.06.3", "23.09.2", "24.03.0"))
	// RouterDHCPv6PDOnly: the handle_dhcpv6_reply flows only for a port
	// with prefix delegation ("northd: Don't generate IPv6 prefix
	// delegation flows if not configured").
	RouterDHCPv6PDOnly = newRouterFact("router-dhcpv6-pd-only", "3e177f726 (81ef85707, 20d28fcc3)", "DHCPv6 reply flows only with prefix delegation", At("24.03.5", "24.09.2", "25.03.0"))
	// RouterNexthopFamily: routes and reroute policies set reg9[9]
	// (REGBIT_NEXTHOP_IS_IPV4), which lr_in_arp_resolve and
	// lr_in_arp_request match instead of ip4/ip6 ("northd: Handle routing
	// for other address families").
	RouterNexthopFamily = newRouterFact("router-nexthop-family", "559924291", "routes set reg9[9], ARP resolve/request match it", At("25.03.0"))
	// RouterSrcReg5: the router's source address for ARP requests,
	// REG_SRC_IPV4, is reg5 (was reg1) ("northd: Move REG_SRC_IPV4 from
	// reg1 to reg5").
	RouterSrcReg5 = newRouterFact("router-src-reg5", "1db758ecc", "REG_SRC_IPV4 is reg5 (was reg1)", At("25.03.0"))
	// RouterRoutePrio8: a route's priority is prefix length * 8 plus 4
	// (static) or 6 (connected), was * 3 plus 1 or 2, and a src-ip static
	// route matches the route table (reg7 == 0) too ("northd: Handle
	// learned routes"). 25.09.0 through 25.09.x ranked every src-ip route
	// below all dst-ip ones (27cc274e6), later reverted; aclc verifies no
	// 25.09 router.
	RouterRoutePrio8 = newRouterFact("router-route-prio-8", "966ca1c91", "route priority = plen*8 + 4 (static) or 6 (connected)", At("25.03.0"))
	// RouterDGPNDSkip: lr_in_lookup_neighbor, at priority 120, does not
	// learn from multicast ND that a distributed gateway port receives
	// off its gateway chassis (`inport == P && (nd_na || nd_ns) &&
	// eth.mcast && !is_chassis_resident(cr-P)`: "controller: Avoid IPv6
	// Mac_Binding related transaction errors", then eth.mcast from "northd:
	// Fix receiving NA on non resident chassis", backported together; on
	// branch-24.09 in no release yet).
	RouterDGPNDSkip = newRouterFact("router-dgp-nd-skip", "987adc9e5 (93be64d9e, 8dde6c5c5, 774fae622), a2bbad695 (2b5e2c787, e42c8e6f6, d76d6feab)", "a gateway port's multicast ND off its chassis is not learned (lr_in_lookup_neighbor 120)", At("24.03.7", "25.03.2", "25.09.1", "26.03.0"))
	// RouterDGPARPOnSwitch: a distributed gateway port's ARP-request
	// lookups in lr_in_lookup_neighbor (priorities 110 and 100) carry no
	// is_chassis_resident() check: it moved to the peer switch, for ARP
	// from its localnet and l2gateway ports ("northd: Process external
	// arps on ha chassis"), reverted for 26.03.2 (092d45d6f, on main
	// 78659febd).
	RouterDGPARPOnSwitch = newRouterFact("router-dgp-arp-on-switch", "1b4058b91", "a gateway port's ARP lookups have no residence check (moved to the switch)", At("26.03.0..26.03.2"))
	// RouterPolicyNexthopIgnored: a Logical_Router_Policy with the
	// deprecated nexthop column set is ignored, whatever its action
	// ("northd: Stop using nexthop column of Logical Router Policy").
	RouterPolicyNexthopIgnored = newRouterFact("router-policy-nexthop-ignored", "206e05a33", "a router policy with the deprecated nexthop column is ignored", At("26.03.0"))
	// RouterTTLExceeded: lr_in_ip_input answers TTL exceeded for IPv4
	// and IPv6 from any source at priority 30 (from the port's first
	// address), the IPv4 priority-31 flows match the source network like
	// the IPv6 ones, and the TTL drop is at 29 (was 30) ("northd:
	// Improvements of ICMP TTL exceeded behavior").
	RouterTTLExceeded = newRouterFact("router-ttl-exceeded", "213d1bae5 (b56d5097c, 153440f0c, 33dfbceab)", "TTL exceeded from any source (30), networks' (31), drop at 29", At("24.03.8", "25.03.3", "25.09.3", "26.03.0"))
)

var (
	// RouterARPRequestResume: the lr_in_arp_request actions go on with
	// the packet after the ARP/ND request (`arp { ... }; output;`; was
	// `arp { ... };`) ("northd, controller: Use paused controller action
	// for packet buffering").
	RouterARPRequestResume = newRouterFact("router-arp-request-resume", "c141d8b19 (e5c3331cb, 1e89d06e6)", "ARP/ND requests continue the packet (`}; output;`)", At("23.09.4", "24.03.2", "24.09.0"))
)

// The router flows' changes of 26.09 (main only).
var (
	// RouterRoutePrio12: a route's priority is (129 + prefix length) * 12
	// plus 4 (static) or 6 (connected) ("northd, ovn-ic: Add support for
	// east-west traffic PBR": ROUTE_PRIO_OFFSET_MULTIPLIER 12 and
	// ROUTE_PRIO_BASE_SHIFT).
	RouterRoutePrio12 = newRouterFact("router-route-prio-12", "ca4f75e38", "route priority = (129 + plen)*12 + 4 (static) or 6 (connected)", At("26.09.0"))
	// RouterTTLSourceMAC: the TTL-exceeded replies set eth.src to the
	// port's MAC (`eth.dst = eth.src; eth.src = MAC;`, was `eth.dst <->
	// eth.src;`) ("northd: Use source IP for TTL expire on gw ports").
	RouterTTLSourceMAC = newRouterFact("router-ttl-source-mac", "f5025f58e", "TTL-exceeded replies come from the port's MAC", At("26.09.0"))
	// RouterNoRouteNDNS: no priority-200 lr_in_arp_request nd_ns flow per
	// IPv6 static route next hop ("northd: Remove per-IPv6-route
	// priority-200 nd_ns flows").
	RouterNoRouteNDNS = newRouterFact("router-no-route-nd-ns", "796071dc8", "no per-IPv6-route nd_ns flows in lr_in_arp_request", At("26.09.0"))
	// RouterNDTllZeroLookup: lr_in_lookup_neighbor looks up an NA
	// without a target link-layer address by eth.src (priority 105, and
	// 115 for the link-local one when learning only from its own
	// requests) ("northd: Make sure lookup_nd works with ND if nd.tll is
	// 0").
	RouterNDTllZeroLookup = newRouterFact("router-nd-tll-zero-lookup", "2d80cdf08", "NA lookup by eth.src when nd.tll is 0", At("26.09.0"))
	// RouterNSLookupPerNetwork: lr_in_lookup_neighbor looks up an NS only
	// from a port's own IPv6 networks (`inport == P && ip6.src == NET &&
	// nd_ns`), not from anywhere (`nd_ns`). The commit is after the
	// fetched main; the flows are 26.09.0's observed ones.
	RouterNSLookupPerNetwork = newRouterFact("router-ns-lookup-per-network", "", "NS lookup only from the port's IPv6 networks", At("26.09.0"))
)

var (
	// RouterECMPHashOrder: northd numbers ECMP route groups and their
	// members in the iteration order of its parsed-route hash map, now
	// hashed by each route's own UUID ("northd: Use uuid hash from source
	// of parsed route"; before, every route of a router hashed alike and
	// kept the NB order). That order depends on the map's size history,
	// which no NB says: aclc does not compile a router with an ECMP group
	// on a version that has this.
	RouterECMPHashOrder = newRouterFact("router-ecmp-hash-order", "655f7bfd8 (6fd646b86, e9322719e)", "ECMP group and member ids follow a hash order the NB does not give", At("25.09.4", "26.03.2", "26.09.0"))
)
