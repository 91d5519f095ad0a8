package compile

import (
	"strconv"
	"sync"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// global is what every switch's compile shares: NB-wide options and the
// indexes northd builds before its per-datapath loops.
type global struct {
	s *nbschema.Snapshot
	r rules // the target release's construction rules (rules.go)

	useCtInvMatch   bool   // NB_Global options:use_ct_inv_match (default true)
	defaultACLDrop  bool   // NB_Global options:default_acl_drop (default false)
	controllerEvent bool   // NB_Global options:controller_event (default false)
	dropAction      string // northd's debug_drop_action()
	implicitDrop    string // northd's debug_implicit_drop_action()

	portSwitch map[string]string   // LSP UUID -> switch UUID
	portByName map[string]string   // LSP name -> LSP UUID
	switchPGs  map[string][]string // switch UUID -> port groups with a member port on it
	lrpNames   map[string]bool     // names of LRPs that belong to a router
	fairMeters map[string]bool     // meter name -> fair
	asNames    map[string]bool     // address set names, plus $<pg>_ip4/_ip6
	pgNames    map[string]bool
	aclOwners  map[string]string // ACL UUID -> "Logical_Switch sw0" / "Port_Group pg1"
	pgACLFlows sync.Map          // aclFlowKey -> []aclFlow, shared by every switch of a port group
	// shared is, in a full Compile only, the per-port-group flows and
	// facts every switch of the group shares (nil: compute per switch).
	shared map[string]*pgShared
}

func newGlobal(s *nbschema.Snapshot) *global {
	g := &global{
		s:               s,
		r:               newRules(nil),
		useCtInvMatch:   boolOption(s.GlobalOption("use_ct_inv_match"), true),
		defaultACLDrop:  boolOption(s.GlobalOption("default_acl_drop"), false),
		controllerEvent: boolOption(s.GlobalOption("controller_event"), false),
		portSwitch:      make(map[string]string, len(s.Ports)),
		portByName:      make(map[string]string, len(s.Ports)),
		switchPGs:       map[string][]string{},
		lrpNames:        map[string]bool{},
		fairMeters:      map[string]bool{},
		asNames:         make(map[string]bool, len(s.AddressSets)+2*len(s.PortGroups)),
		pgNames:         make(map[string]bool, len(s.PortGroups)),
		aclOwners:       make(map[string]string, len(s.ACLs)),
	}
	g.dropAction, g.implicitDrop = "drop;", "/* drop */"
	if set := uintOption(s.GlobalOption("debug_drop_collector_set")); set != 0 {
		dom := uintOption(s.GlobalOption("debug_drop_domain_id"))
		if dom < 255 {
			a := "sample(probability=65535,collector_set=" + strconv.FormatUint(set, 10) +
				",obs_domain=" + strconv.FormatUint(dom, 10) + ",obs_point=$cookie); /* drop */"
			g.dropAction, g.implicitDrop = a, a
		}
	}
	for _, id := range nbschema.SortedKeys(s.Switches) {
		ls := s.Switches[id]
		for _, p := range ls.Ports {
			if _, ok := s.Ports[p]; !ok {
				continue
			}
			if _, dup := g.portSwitch[p]; !dup {
				g.portSwitch[p] = id
			}
			g.portByName[s.Ports[p].Name] = p
		}
		owner := "Logical_Switch " + ls.Name
		for _, a := range ls.ACLs {
			g.aclOwners[a] = owner
		}
	}
	for _, r := range s.Routers {
		for _, p := range r.Ports {
			if lrp, ok := s.RouterPorts[p]; ok {
				g.lrpNames[lrp.Name] = true
			}
		}
	}
	for _, m := range s.Meters {
		g.fairMeters[m.Name] = m.Fair != nil && *m.Fair
	}
	for _, as := range s.AddressSets {
		g.asNames[as.Name] = true
	}
	for _, id := range nbschema.SortedKeys(s.PortGroups) {
		pg := s.PortGroups[id]
		g.pgNames[pg.Name] = true
		g.asNames[pg.Name+"_ip4"] = true
		g.asNames[pg.Name+"_ip6"] = true
		seen := map[string]bool{}
		for _, p := range pg.Ports {
			sw, ok := g.portSwitch[p]
			if !ok || seen[sw] {
				continue
			}
			seen[sw] = true
			g.switchPGs[sw] = append(g.switchPGs[sw], id)
		}
		owner := "Port_Group " + pg.Name
		for _, a := range pg.ACLs {
			g.aclOwners[a] = owner
		}
	}
	return g
}

// boolOption parses an smap boolean the way OVS's smap_get_bool does: only
// "true" is true, only "false" is false, anything else is the default.
func boolOption(v string, def bool) bool {
	switch v {
	case "true":
		return true
	case "false":
		return false
	}
	return def
}

func uintOption(v string) uint64 {
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return 0
	}
	return n
}

// datapath is northd's ovn_datapath for one logical switch, reduced to what
// the ACL stages read.
type datapath struct {
	id             string
	ls             *nbdb.LogicalSwitch
	pgs            []*nbdb.PortGroup // port groups with a member port here
	acls           []*nbdb.ACL       // the switch's own ACLs
	routerPorts    []*nbdb.LogicalSwitchPort
	localnetPorts  []*nbdb.LogicalSwitchPort
	hasACLs        bool
	hasStatefulACL bool
	hasLBVIP       bool
}

// datapath returns switch id with everything its compile reads: its
// flags and port groups (datapathFlags), its ACLs, and its router and
// localnet ports.
func (g *global) datapath(id string) *datapath {
	s := g.s
	od := g.datapathFlags(id)
	for _, a := range od.ls.ACLs {
		if acl, ok := s.ACLs[a]; ok {
			od.acls = append(od.acls, acl)
		}
	}
	for _, p := range od.ls.Ports {
		lsp, ok := s.Ports[p]
		if !ok || g.portSwitch[p] != id {
			continue
		}
		switch lsp.Type {
		case "router":
			if peer := lsp.Options["router-port"]; peer != "" && g.lrpNames[peer] {
				od.routerPorts = append(od.routerPorts, lsp)
			}
		case "localnet":
			od.localnetPorts = append(od.localnetPorts, lsp)
		}
	}
	return od
}

// datapathFlags returns switch id with its port groups and its flags
// (ls_get_acl_flags and the LB check) but neither its ACLs nor its ports:
// all that the incremental engine needs of each switch it patches.
func (g *global) datapathFlags(id string) *datapath {
	s := g.s
	ls := s.Switches[id]
	od := &datapath{id: id, ls: ls}
	for _, pgID := range g.switchPGs[id] {
		od.pgs = append(od.pgs, s.PortGroups[pgID])
	}
	// ls_get_acl_flags; like northd, stop at the first allow-related ACL
	// (it implies has_acls).
	for _, a := range ls.ACLs {
		if acl, ok := s.ACLs[a]; ok {
			od.hasACLs = true
			if acl.Action == "allow-related" {
				od.hasStatefulACL = true
				break
			}
		}
	}
	for _, pg := range od.pgs {
		if od.hasStatefulACL {
			break
		}
		if sh := g.shared[pg.UUID]; sh != nil {
			od.hasACLs = od.hasACLs || len(pg.ACLs) > 0
			od.hasStatefulACL = sh.info(g).hasStateful
			continue
		}
		for _, a := range pg.ACLs {
			od.hasACLs = true
			if acl, ok := s.ACLs[a]; ok && acl.Action == "allow-related" {
				od.hasStatefulACL = true
				break
			}
		}
	}
	od.hasLBVIP = len(g.switchLBs(ls, true)) > 0
	return od
}

// switchLBs returns the load balancers applied to ls directly and through
// its load balancer groups (each once). With withVIPs, only those that
// have VIPs.
func (g *global) switchLBs(ls *nbdb.LogicalSwitch, withVIPs bool) []*nbdb.LoadBalancer {
	var out []*nbdb.LoadBalancer
	seen := map[string]bool{}
	add := func(id string) {
		lb, ok := g.s.LoadBalancers[id]
		if !ok || seen[id] || (withVIPs && len(lb.Vips) == 0) {
			return
		}
		seen[id] = true
		out = append(out, lb)
	}
	for _, id := range ls.LoadBalancer {
		add(id)
	}
	for _, gid := range ls.LoadBalancerGroup {
		if grp, ok := g.s.LBGroups[gid]; ok {
			for _, id := range grp.LoadBalancer {
				add(id)
			}
		}
	}
	return out
}
