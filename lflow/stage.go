// Package lflow is the logical-flow side of aclc: the logical switch
// pipeline stages and table numbers of each supported OVN release (layouts),
// the flow and listing types, the `ovn-sbctl lflow-list` text format
// (written and parsed), a JSON form, and a semantic diff between two
// listings.
package lflow

import "fmt"

// Pipeline is a logical pipeline direction.
type Pipeline uint8

// The two logical switch pipelines, in lflow-list order.
const (
	Ingress Pipeline = iota
	Egress
)

// String returns "ingress" or "egress", as lflow-list prints it.
func (p Pipeline) String() string {
	if p == Egress {
		return "egress"
	}
	return "ingress"
}

// Stage is one logical switch pipeline stage of one OVN release: a stage
// kind (the constants below) placed in a release's Layout, which gives it
// its name and table number. The constants themselves are the stages of
// the 23.03 layout (Layout2303); a kind that 23.03 lacks (InACLSample, ...)
// exists only through the layout of a release that has it
// (Layout2603.Stage(InACLSample)).
type Stage uint16

// The logical switch stage kinds of every supported release, in pipeline
// order (each release's stages are a subsequence, numbered by its layout).
// A kind names the same stage across releases even where northd renamed
// it: InACL is ls_in_acl in 23.03 and ls_in_acl_eval from 23.06 on.
const (
	InCheckPortSec Stage = iota
	InApplyPortSec
	InMirror
	InLookupFDB
	InPutFDB
	InPreACL
	InPreLB
	InPreStateful
	InACLHint
	InACL
	InACLSample
	InACLAction
	InQoSMark
	InQoSMeter
	InQoS
	InCtExtract
	InLBAffCheck
	InLB
	InLBAffLearn
	InPreHairpin
	InNATHairpin
	InHairpin
	InACLAfterLB
	InACLAfterLBSample
	InACLAfterLBAction
	InPreNF
	InStateful
	InNF
	InARPNDPreLookup
	InARPRsp
	InDHCPOptions
	InDHCPResponse
	InDNSLookup
	InDNSResponse
	InExternalPort
	InL2Lkup
	InL2Unknown
	OutLookupFDB
	OutPutFDB
	OutPreACL
	OutPreLB
	OutPreStateful
	OutACLHint
	OutACL
	OutACLSample
	OutACLAction
	OutMirror
	OutQoSMark
	OutQoSMeter
	OutQoS
	OutPreNF
	OutStateful
	OutNF
	OutCheckPortSec
	OutApplyPortSec
	numKinds
)

// kindPipeline is the pipeline of each kind.
func kindPipeline(k Stage) Pipeline {
	if k >= OutLookupFDB {
		return Egress
	}
	return Ingress
}

// aclKinds are the kinds aclc compiles (those a release has): every flow
// northd writes into them is reproduced exactly.
var aclKinds = []Stage{
	InPreACL, InPreLB, InPreStateful, InACLHint, InACL, InACLSample, InACLAction,
	InACLAfterLB, InACLAfterLBSample, InACLAfterLBAction, InPreNF, InStateful, InNF,
	OutPreACL, OutPreLB, OutPreStateful, OutACLHint, OutACL, OutACLSample, OutACLAction,
	OutPreNF, OutStateful, OutNF,
}

// Kind returns the release-independent kind of s (a constant above).
func (s Stage) Kind() Stage { return s & 0xff }

// Layout returns the layout (release) the stage belongs to.
func (s Stage) Layout() *Layout {
	if i := int(s >> 8); i < len(layouts) {
		return layouts[i]
	}
	return nil
}

func (s Stage) info() *stageInfo {
	l := s.Layout()
	if l == nil || s.Kind() >= numKinds {
		return &noStage
	}
	return &l.info[s.Kind()]
}

var noStage = stageInfo{table: -1}

// IsACLStage reports whether s is one of its release's ACL stages.
func (s Stage) IsACLStage() bool { return s.info().acl }

// Name returns the stage name northd records in external_ids:stage-name,
// e.g. "ls_in_acl" (23.03) or "ls_in_acl_eval" (25.03).
func (s Stage) Name() string {
	if in := s.info(); in.table >= 0 {
		return in.name
	}
	return fmt.Sprintf("stage(%d)", s)
}

// String is Name.
func (s Stage) String() string { return s.Name() }

// Pipeline returns the pipeline the stage belongs to.
func (s Stage) Pipeline() Pipeline { return kindPipeline(s.Kind()) }

// Table returns the logical table number of the stage in its release
// (ls_in_acl is 8 in 23.03; ls_in_acl_eval is 9 in 26.03), or -1 for a
// kind its release lacks.
func (s Stage) Table() int { return s.info().table }

// StageByName returns the 23.03 stage with the given name ("ls_in_acl").
func StageByName(name string) (Stage, bool) { return Layout2303.StageByName(name) }

// StageAt returns the 23.03 stage at table in pipeline p.
func StageAt(p Pipeline, table int) (Stage, bool) { return Layout2303.StageAt(p, table) }

// Stages returns every 23.03 logical switch stage in pipeline order.
func Stages() []Stage { return Layout2303.Stages() }

// ACLStages are the 23.03 stages aclc compiles.
var ACLStages = Layout2303.ACLStages()
