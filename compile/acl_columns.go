package compile

import (
	"github.com/aclc/aclc/nbschema"
	"strconv"

	"github.com/aclc/aclc/nbschema/nbdb"
)

// The ACL columns and options that releases after 23.03 read. The NB
// model in use decides which exist; a release without the feature never
// sees them set (fixtures and live NBs are checked against the release).

// aclTier is ACL column tier (23.06+).
func aclTier(acl *nbdb.ACL) int { return 0 }

// nfGroup is what the ACL stages read of a Network_Function_Group: its id,
// whether it fails open, and its active network function (the one
// northd's network_function_update_active chose; nil: none).
type nfGroup struct {
	ID       int
	FailOpen bool
	Active   *netFunction
}

// netFunction is a Network_Function: its id and its ports (names).
type netFunction struct {
	ID              int
	InPort, OutPort string
}

// aclNFGroup is ACL column network_function_group (26.03), resolved.
func (g *global) aclNFGroup(acl *nbdb.ACL) *nfGroup { return nil }

// sample is what the ACL stages read of a Sample row and its collectors.
type sample struct {
	Metadata int
	// Collectors in UUID order: northd iterates the IDL's set, which is
	// sorted by UUID (checked against 25.03 and 26.03).
	Collectors []sampleCollector
}

type sampleCollector struct{ ID, SetID, Probability int }

// aclSample is ACL column sample_new (isNew) or sample_est (24.09+),
// resolved.
func (g *global) aclSample(acl *nbdb.ACL, isNew bool) *sample { return nil }

// aclObsStage is enum acl_observation_stage of an ACL's eval stage.
func aclObsStage(acl *nbdb.ACL) int {
	// ACL_OBS_FROM_LPORT, ACL_OBS_FROM_LPORT_AFTER_LB, ACL_OBS_TO_LPORT:
	// the order of aclPipes.
	return aclPipe(aclStage(acl))
}

// aclSampleLabel is build_acl_sample_label_action (24.09+; before: the
// label registers of 23.03) with sample_new when withNew and sample_est
// when withEst.
func (g *global) aclSampleLabel(acl *nbdb.ACL, withNew, withEst bool) string {
	var sNew, sEst *sample
	if withNew {
		sNew = g.aclSample(acl, true)
	}
	if withEst {
		sEst = g.aclSample(acl, false)
	}
	if acl.Label == 0 && sNew == nil && sEst == nil {
		return ""
	}
	if !g.r.sampling {
		return regbitACLLabel + " = 1; " + regLabel + " = " + strconv.Itoa(acl.Label) + "; "
	}
	pNew, pEst, cNew, cEst := 0, 0, 0, 0
	if acl.Label != 0 {
		pNew, pEst = acl.Label, acl.Label
	} else {
		if sNew != nil {
			pNew = sNew.Metadata
			if len(sNew.Collectors) == 1 {
				cNew = sNew.Collectors[0].ID
			}
		}
		if sEst != nil {
			pEst = sEst.Metadata
			if len(sEst.Collectors) == 1 {
				cEst = sEst.Collectors[0].ID
			}
		}
	}
	return regbitACLLabel + " = 1; " + regObsPointIDNew + " = " + strconv.Itoa(pNew) + "; " +
		regObsPointIDEst + " = " + strconv.Itoa(pEst) + "; " +
		regObsCollectorIDNew + " = " + strconv.Itoa(cNew) + "; " +
		regObsCollectorIDEst + " = " + strconv.Itoa(cEst) + "; " +
		regbitACLObsStage + " = " + strconv.Itoa(aclObsStage(acl)) + "; "
}

// aclPersist is the persist-established part of an allow ACL's new
// connection actions (25.03+): the ACL's id in the SB ACL_ID table.
func (g *global) aclPersist(acl *nbdb.ACL) string {
	if !g.r.persist || !boolOption(acl.Options["persist-established"], false) || g.lacking.CTLabelFlush {
		return "" // without ct_label flush northd warns and ignores the option
	}
	id, ok := g.aclID(acl.UUID)
	if !ok {
		return "" // northd: "No ID found for ACL"
	}
	return regACLID + " = " + strconv.Itoa(id) + "; " + regbitACLPersistID + " = 1; "
}

// aclID is the ACL_ID northd allocated to the ACL.
func (g *global) aclID(uuid string) (int, bool) {
	id, ok := g.aclIDs[uuid]
	return id, ok
}

// AllocateACLIDs is en_acl_id_run on an empty SB ACL_ID table: ids from 1
// for every allow-related ACL with options:persist-established, here in
// UUID order.
func AllocateACLIDs(s *nbschema.Snapshot) map[string]int {
	ids := map[string]int{}
	for _, id := range nbschema.SortedKeys(s.ACLs) {
		if persistsEstablished(s.ACLs[id]) {
			ids[id] = len(ids) + 1
		}
	}
	return ids
}

// persistsEstablished is en-acl-ids.c's should_sync_to_sb.
func persistsEstablished(acl *nbdb.ACL) bool {
	return acl.Action == "allow-related" && boolOption(acl.Options["persist-established"], false)
}
