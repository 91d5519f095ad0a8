// Package trace follows one packet through the logical flows aclc compiles,
// the way ovn-trace follows it through the Southbound: table by table,
// highest-priority matching flow first, executing the register and
// conntrack actions the ACL stages use and recirculating through conntrack
// with the ct_state values given by --ct (ovn-trace's semantics: ct_next
// sets the next state, ct_lb_mark ORs it in, est|trk once they run out).
//
// Stages aclc does not compile pass the packet through, except a few that
// are modelled from the NB because they decide where the packet goes or
// recirculate it: ls_in_lb (load balancer VIPs: ct_lb_mark(backends=...)),
// ls_in_pre_hairpin (chk_lb_hairpin, computed as ovn-trace does),
// ls_in_l2_lkup and ls_in_l2_unknown (the output port, from the port MAC
// addresses or an explicit outport; broadcast floods every port, an
// unknown MAC goes to the "unknown"-address ports), ls_in_arp_rsp (ARP
// replies for the ports' IPv4 addresses), ls_in_dns_lookup and the port security
// stages (check_in_port_sec()/check_out_port_sec() against the ports'
// port_security, as ovn-trace computes them; output).
package trace
