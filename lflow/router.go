package lflow

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// RouterStage is one logical router stage kind: the same stage in every
// release, whose table number its release's RouterLayout gives. Router
// stages are a type of their own so that the switch stage table (Stage,
// Stages, StageByName) keeps meaning "logical switch". Unlike the switch
// stages, a router stage keeps its name in every release.
type RouterStage uint8

// The logical router stage kinds of every supported release, in pipeline
// order (northd.h's PIPELINE_STAGES, the ROUTER half; each release's
// stages are a subsequence).
const (
	LRInAdmission RouterStage = iota
	LRInLookupNeighbor
	LRInLearnNeighbor
	LRInIPInput
	LRInDHCPRelayReq
	LRInUnsnat
	LRInPostUnsnat
	LRInDefrag
	LRInCtExtract
	LRInLBAffCheck
	LRInDNAT
	LRInLBAffLearn
	LRInECMPStateful
	LRInNDRAOptions
	LRInNDRAResponse
	LRInIPRoutingPre
	LRInIPRouting
	LRInIPRoutingECMP
	LRInPolicy
	LRInPolicyECMP
	LRInDHCPRelayRespChk
	LRInDHCPRelayResp
	LRInARPResolve
	LRInChkPktLen
	LRInLargerPkts
	LRInGWRedirect
	LRInNetworkID
	LRInARPRequest
	LRInECMPStatefulEgr
	LROutChkDNATLocal
	LROutUndnat
	LROutPostUndnat
	LROutSNAT
	LROutPostSNAT
	LROutEgrLoop
	LROutDelivery
	numRouterStages
)

// routerStageNames names each kind.
var routerStageNames = [numRouterStages]string{
	LRInAdmission:        "lr_in_admission",
	LRInLookupNeighbor:   "lr_in_lookup_neighbor",
	LRInLearnNeighbor:    "lr_in_learn_neighbor",
	LRInIPInput:          "lr_in_ip_input",
	LRInDHCPRelayReq:     "lr_in_dhcp_relay_req",
	LRInUnsnat:           "lr_in_unsnat",
	LRInPostUnsnat:       "lr_in_post_unsnat",
	LRInDefrag:           "lr_in_defrag",
	LRInCtExtract:        "lr_in_ct_extract",
	LRInLBAffCheck:       "lr_in_lb_aff_check",
	LRInDNAT:             "lr_in_dnat",
	LRInLBAffLearn:       "lr_in_lb_aff_learn",
	LRInECMPStateful:     "lr_in_ecmp_stateful",
	LRInNDRAOptions:      "lr_in_nd_ra_options",
	LRInNDRAResponse:     "lr_in_nd_ra_response",
	LRInIPRoutingPre:     "lr_in_ip_routing_pre",
	LRInIPRouting:        "lr_in_ip_routing",
	LRInIPRoutingECMP:    "lr_in_ip_routing_ecmp",
	LRInPolicy:           "lr_in_policy",
	LRInPolicyECMP:       "lr_in_policy_ecmp",
	LRInDHCPRelayRespChk: "lr_in_dhcp_relay_resp_chk",
	LRInDHCPRelayResp:    "lr_in_dhcp_relay_resp",
	LRInARPResolve:       "lr_in_arp_resolve",
	LRInChkPktLen:        "lr_in_chk_pkt_len",
	LRInLargerPkts:       "lr_in_larger_pkts",
	LRInGWRedirect:       "lr_in_gw_redirect",
	LRInNetworkID:        "lr_in_network_id",
	LRInARPRequest:       "lr_in_arp_request",
	LRInECMPStatefulEgr:  "lr_in_ecmp_stateful_egr",
	LROutChkDNATLocal:    "lr_out_chk_dnat_local",
	LROutUndnat:          "lr_out_undnat",
	LROutPostUndnat:      "lr_out_post_undnat",
	LROutSNAT:            "lr_out_snat",
	LROutPostSNAT:        "lr_out_post_snat",
	LROutEgrLoop:         "lr_out_egr_loop",
	LROutDelivery:        "lr_out_delivery",
}

// Name returns the stage name, e.g. "lr_in_ip_routing".
func (s RouterStage) Name() string {
	if s >= numRouterStages {
		return fmt.Sprintf("router-stage(%d)", s)
	}
	return routerStageNames[s]
}

// String is Name.
func (s RouterStage) String() string { return s.Name() }

// Pipeline returns the pipeline the stage belongs to.
func (s RouterStage) Pipeline() Pipeline {
	if s >= LROutChkDNATLocal {
		return Egress
	}
	return Ingress
}

// RouterStageByName returns the router stage called name.
func RouterStageByName(name string) (RouterStage, bool) {
	for i, n := range routerStageNames {
		if n == name {
			return RouterStage(i), true
		}
	}
	return 0, false
}

// RouterLayout is one OVN release's logical router pipelines: which
// router stages it has and their table numbers. Unlike the switch stages,
// router stages came with backports inside a series (lr_in_network_id in
// 24.03.6 and 25.03.1), so a layout is a release's: its series' stage list
// (Layout.Routers) less the stages the release lacks, which the release
// facts say (compile.RouterLayout).
type RouterLayout struct {
	// Name is the release the layout is of ("26.03.1").
	Name    string
	table   [numRouterStages]int // -1: the release has no such stage
	byTable [2][]RouterStage
}

// Routers returns the router layout of release name of l's series: l's
// router stages that keep accepts, numbered in order within each
// pipeline.
func (l *Layout) Routers(name string, keep func(RouterStage) bool) *RouterLayout {
	rl := &RouterLayout{Name: name}
	for k := range rl.table {
		rl.table[k] = -1
	}
	for _, k := range l.routers {
		if !keep(k) {
			continue
		}
		p := k.Pipeline()
		rl.table[k] = len(rl.byTable[p])
		rl.byTable[p] = append(rl.byTable[p], k)
	}
	return rl
}

// Has reports whether the release has router stage k.
func (rl *RouterLayout) Has(k RouterStage) bool { return k < numRouterStages && rl.table[k] >= 0 }

// Table returns the logical table number of stage k in the release, -1
// when it lacks it.
func (rl *RouterLayout) Table(k RouterStage) int {
	if k >= numRouterStages {
		return -1
	}
	return rl.table[k]
}

// StageAt returns the router stage at table in pipeline p.
func (rl *RouterLayout) StageAt(p Pipeline, table int) (RouterStage, bool) {
	if table < 0 || table >= len(rl.byTable[p]) {
		return 0, false
	}
	return rl.byTable[p][table], true
}

// Stages returns the release's router stages in pipeline order.
func (rl *RouterLayout) Stages() []RouterStage {
	return append(append([]RouterStage(nil), rl.byTable[Ingress]...), rl.byTable[Egress]...)
}

// String is the release's name.
func (rl *RouterLayout) String() string { return rl.Name }

// RouterFlow is one logical flow of a logical router datapath.
type RouterFlow struct {
	Stage    RouterStage
	Priority int
	Match    string
	Actions  string
	// Source is the UUID of the NB row behind the flow (router port,
	// static route, policy, switch port), "" for fixed flows.
	Source string
}

// RouterDatapath is one logical router with its flows.
type RouterDatapath struct {
	Name  string
	UUID  string // NB Logical_Router UUID
	Flows []RouterFlow
	// Layout numbers the flows' stages (the release's router tables).
	Layout *RouterLayout
}

// Sort puts the flows in lflow-list order and removes exact duplicates,
// as northd does.
func (d *RouterDatapath) Sort() {
	slices.SortStableFunc(d.Flows, func(a, b RouterFlow) int {
		if c := cmp.Compare(a.Stage.Pipeline(), b.Stage.Pipeline()); c != 0 {
			return c
		}
		if c := cmp.Compare(d.Layout.Table(a.Stage), d.Layout.Table(b.Stage)); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
			return c
		}
		if c := strings.Compare(a.Match, b.Match); c != 0 {
			return c
		}
		return strings.Compare(a.Actions, b.Actions)
	})
	d.Flows = slices.CompactFunc(d.Flows, func(a, b RouterFlow) bool {
		return a.Stage == b.Stage && a.Priority == b.Priority && a.Match == b.Match && a.Actions == b.Actions
	})
}

// Text returns the datapath's flows (sorted) as `ovn-sbctl lflow-list`
// prints them, headers included.
func (d *RouterDatapath) Text() string {
	var b []byte
	prev := Pipeline(255)
	for _, f := range d.Flows {
		if p := f.Stage.Pipeline(); p != prev {
			b = appendHeader(b, &Datapath{Name: d.Name, UUID: d.UUID}, p)
			prev = p
		}
		b = appendFlowLine(b, d.Layout.Table(f.Stage), f.Stage.Name(), f.Priority, f.Match, f.Actions)
	}
	return string(b)
}
