package trace

import (
	"maps"
	"slices"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/release"
)

// This file models how a switch floods broadcast and multicast packets:
// the ls_in_l2_lkup flows of northd's
// build_lswitch_destination_lookup_bmcast and the members of the SB
// Multicast_Group rows _MC_flood and _MC_flood_l2 (en-multicast.c
// build_mcast_groups) that ovn-trace follows, per release (release.FloodARPsToL2,
// FloodNonIPToL2, FloodIPToL2, FloodReceiveMulticast).

// modelFlood adds the ls_in_l2_lkup flows for eth.mcast packets.
func (d *dpModel) modelFlood() {
	if d.has(release.FloodARPsToL2) && d.ls.OtherConfig["broadcast-arps-to-all-routers"] == "false" {
		d.add(lflow.InL2Lkup, 72, "eth.mcast && (arp.op == 1 || nd_ns)", `outport = "_MC_flood_l2"; output;`, "")
	}
	switch {
	case !d.has(release.FloodNonIPToL2):
		d.add(lflow.InL2Lkup, 70, "eth.mcast", `outport = "_MC_flood"; output;`, "")
		return
	case !d.has(release.FloodIPToL2):
		d.add(lflow.InL2Lkup, 71, "eth.mcast && (arp || ip)", `outport = "_MC_flood"; output;`, "")
		d.add(lflow.InL2Lkup, 70, "eth.mcast", `outport = "_MC_flood_l2"; output;`, "")
		return
	}
	d.add(lflow.InL2Lkup, 72, "eth.mcast && (nd_na || nd_rs || nd_ra)", `outport = "_MC_flood"; output;`, "")
	d.add(lflow.InL2Lkup, 71, "eth.mcast && arp", `outport = "_MC_flood"; output;`, "")
	d.add(lflow.InL2Lkup, 71, "eth.mcast && ip", `outport = "_MC_flood_l2"; output;`, "")
	d.add(lflow.InL2Lkup, 70, "eth.mcast", `outport = "_MC_flood_l2"; output;`, "")
}

// floodPorts returns, in name order, the members of _MC_flood (l2 false:
// every enabled port) or _MC_flood_l2 (l2: those that are not of type
// router).
func (d *dpModel) floodPorts(l2 bool) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(d.ports)) {
		p := d.ports[name]
		if p.Enabled != nil && !*p.Enabled {
			continue
		}
		if d.has(release.FloodReceiveMulticast) && p.Options["receive_multicast"] == "false" {
			continue
		}
		if l2 && p.Type == "router" {
			continue
		}
		out = append(out, name)
	}
	return out
}
