// Package reach answers, for an ordered pair of ports (from, to) of one
// logical switch, which packets the ACL stages let through from one to
// the other: the exact set of packets of each outcome (allowed, dropped,
// rejected), split by the ACL that decides it, whether it goes through
// conntrack and whether it is committed, with one witness packet each
// (issue 23, the engine of `aclc reach').
//
// # Many pairs
//
// Endpoints resolves a port, @port_group or $address_set to ports (an
// address set by the ports' addresses); Pairs answers every ordered pair
// of distinct ports of two lists, calling back pair by pair: the pairs of
// one switch share its model (ReachFrom; each pair is its own execution,
// since outport is set only by the L2 lookup), a pair on two switches no router joins has
// no path (NoPath), and a pair on two switches joined by routers is not
// exact (Routed: the routed path is not executed). Outcome.Summary sums a
// pair up in a word for a matrix.
//
// # How
//
// The answer is derived from the compiled flows (compile.CompileWith, the
// ACL-stage flows northd writes), never from the ACLs: reach executes the
// switch's tables symbolically over sets of package pset, the way package
// trace executes them on one packet. The state is a set over the packet
// fields, the registers and the conntrack fields of pset's Space. Tables
// run in the release's pipeline order (lflow.LayoutFor); within a table
// the flows are taken by descending priority, a flow taking
// `in ∧ match ∧ ¬(the matches of every higher-priority flow)', its match
// ANDed with its actions' prerequisites as ovn-trace does (ct_next needs
// ip). Flows of equal priority whose matches overlap with different
// actions are undefined in OVN: the overlap is a not-exact part. Where
// they have the same actions the outcome is the same whichever OVN
// takes; the part is credited to the first in lflow-list order, as
// package trace credits it.
//
// The actions are executed on sets: `next;' and next(N) continue, a load
// `X = c;' forgets X's bits (pset.Manager.Exists) and then requires the
// set of the match `X == c', a move `X = Y;' forgets X's bits and requires
// them equal to Y's (pset.Manager.Copy; X and Y must not overlap); drop and
// an empty action list drop; reject drops with a generated reply, except
// where ovn-trace's guards refuse to reject a reject (a TCP RST, an ICMP
// unreachable), which is a drop. ct_next, ct_lb_mark and ct_commit_nat
// recirculate with the ct_state of Options.CT (default new|trk: the first
// packet of a connection; ovn-trace itself assumes est|trk without --ct,
// so compare with `--ct new'): ct_next sets it, ct_lb_mark ORs it in,
// ct_commit_nat ORs it in when the packet is not tracked yet — package
// trace's semantics. ct_commit and ct_commit_nat mark the part committed;
// their nested actions change nothing the ACL stages read in the same
// pass (ovn-trace does not execute them either). ct_clear zeroes the
// conntrack fields; log, sample, trigger_event and meter change nothing.
// Any other action (a load of a packet header, inport or outport, an
// exchange, a function such as chk_lb_hairpin(), ct_lb_mark with
// backends, clone, output before the L2 lookup) makes the part that
// reaches it not exact, naming the action and stage. Not exact is never
// approximated.
//
// Only header fields are read and only metadata (registers, flags,
// conntrack fields, outport) is written, so the packets that entered a
// part are its final set with the metadata forgotten and zeroed, as the
// packet entered the switch: each part's Set is a set of entering
// packets, and its Witness is an ovn-trace microflow of one of them.
//
// # Witnesses
//
// A part's witness is the packet of its set the from port would really
// send to the to port (witness.go, on pset.WitnessPreferring): from's MAC
// and first IPv4/IPv6 address as source, to's as destination, eth.dst
// to's MAC so that the L2 lookup outputs it to to (broadcast for a port
// without a MAC, which only floods reach; a MAC no port has for a port
// with "unknown" addresses), tcp before udp before icmp with example
// values; only what the set forces differs. It names no outport: ovn-trace
// sets outport at the L2 lookup from eth.dst (overwriting a microflow's),
// so the microflow and one --ct new,trk per recirculation replay it with
// ovn-trace as it stands, and TestReplayWitnesses checks the exact
// witnesses of the bundled fixtures that way on each live release. A part
// whose set leaves no eth.dst that leads to to (an ACL on eth.dst; a
// port without a MAC when the part excludes multicast) is Undelivered: in
// OVN no packet of it reaches to, and its witness replays elsewhere.
//
// A part's Match is its set as a compact match over the header fields
// (pset.Describe within the pair's entering packets, so inport, outport
// and the zero metadata are left out), and Engine.DecidingACLs names its
// deciding ACLs as the NB has them (owner, priority, tier, name,
// external_ids).
//
// # What is assumed
//
// Stages aclc does not compile pass the packet through unchanged, as in
// package trace, with these limits made explicit:
//
//   - The from port sends: inport == from, outport unset (no port) until
//     the L2 lookup, which sets it to to whatever eth.dst (the MAC
//     lookup itself is not modelled: a part that no eth.dst leading to to
//     reaches is marked Undelivered). The port security stage's fixed drops
//     (eth.src[40], vlan.present) are a drop part of their own, its ACL
//     Default; so are, at ingress and egress, the packets the ports'
//     port_security drops (nbview.PortSecurityOf: ovn-trace's check of
//     it), except ICMPv6 ND from a port with port security, a not-exact
//     part (port security checks ND options reach does not model). A
//     pair where either port is mirrored, disabled or not a plain VIF
//     (router, localnet, ...) is not exact; from == to is an input error.
//   - A switch with load balancer VIPs (ls_in_lb, the hairpin stages) or
//     whose tiers northd may order either way (FDP-1154) is not exact.
//   - ARP and ND packets (the ARP/ND responder) and, on a switch with DNS
//     records, udp.dst == 53 (ls_in_dns_lookup) form a not-exact part.
//   - On the way from ingress to egress the registers xxreg0, xxreg1,
//     xreg4 and flags are cleared, as OVN (and package trace) does.
//
// # Comparing two NBs
//
// Diff (diff.go) answers `aclc diff --traffic': for every pair of ports
// present in two NBs of one release, the packets whose outcome differs —
// newly allowed, newly denied, drop ↔ reject, another conntrack handling
// — each with the parts before and after and a witness, or not exact. It
// executes both NBs' pairs over one Manager per switch, so that their
// parts intersect, and only where a flow differs (skip.go says why that
// is enough).
package reach
