package compile

import (
	"strconv"
	"sync"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbview"
)

// global is what every switch's compile shares: NB-wide options, the
// target release's rules and northd's view of the NB (package nbview),
// which holds the indexes northd builds before its per-datapath loops.
type global struct {
	s *nbschema.Snapshot
	v *nbview.View
	r rules // the target release's construction rules (rules.go)
	// aclIDs is the SB ACL_ID of each persist-established ACL (25.03+).
	aclIDs  map[string]int
	lacking ChassisFeatures // Options.Lacking
	sb      *SBState        // Options.SB
	// anySamples: walk every switch's ACLs for sample flows (24.09+), not
	// only a switch where an applied ACL names a Sample (the engine, whose
	// rows come and go).
	anySamples bool
	// samplingApps: Sampling_App id by type (24.09+).
	samplingApps map[string]int

	useCtInvMatch   bool // NB_Global options:use_ct_inv_match (default true)
	defaultACLDrop  bool // NB_Global options:default_acl_drop (default false)
	controllerEvent bool // NB_Global options:controller_event (default false)
	// NB_Global options:install_ls_lb_from_router (default false)
	installLSLBFromRouter bool
	dropAction            string // northd's debug_drop_action()
	implicitDrop          string // northd's debug_implicit_drop_action()

	pgACLFlows sync.Map // aclFlowKey -> []aclFlow, shared by every switch of a port group
	// shared is, in a full Compile only, the per-port-group flows and
	// facts every switch of the group shares (nil: compute per switch).
	shared map[string]*pgShared
}

func newGlobal(v *nbview.View) *global {
	s := v.Snapshot()
	g := &global{
		s:                     s,
		v:                     v,
		useCtInvMatch:         boolOption(s.GlobalOption("use_ct_inv_match"), true),
		defaultACLDrop:        boolOption(s.GlobalOption("default_acl_drop"), false),
		controllerEvent:       boolOption(s.GlobalOption("controller_event"), false),
		installLSLBFromRouter: boolOption(s.GlobalOption("install_ls_lb_from_router"), false),
	}
	g.debugDrop(0)
	return g
}

// debugDrop is init_debug_config: northd's debug_drop_action() and
// debug_implicit_drop_action(), sampling drops with
// options:debug_drop_collector_set; the observation domain is the
// Sampling_App "drop" id when one is given (24.09+), else
// options:debug_drop_domain_id.
func (g *global) debugDrop(domainOverride uint64) {
	g.dropAction, g.implicitDrop = "drop;", "/* drop */"
	if set := uintOption(g.s.GlobalOption("debug_drop_collector_set")); set != 0 {
		dom := uintOption(g.s.GlobalOption("debug_drop_domain_id"))
		if domainOverride != 0 {
			dom = domainOverride
		}
		if dom < 255 {
			a := "sample(probability=65535,collector_set=" + strconv.FormatUint(set, 10) +
				",obs_domain=" + strconv.FormatUint(dom, 10) + ",obs_point=$cookie); /* drop */"
			g.dropAction, g.implicitDrop = a, a
		}
	}
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

// datapath is northd's ovn_datapath for one logical switch, as the view
// holds it.
type datapath = nbview.Switch
