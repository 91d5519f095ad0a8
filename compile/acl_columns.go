package compile

import (
	"github.com/aclc/aclc/nbschema"
	"slices"
	"strconv"
	"strings"

	"github.com/aclc/aclc/nbschema/nbdb"
)

// The ACL columns and options that releases after 23.03 read. The NB
// model in use decides which exist; a release without the feature never
// sees them set (fixtures and live NBs are checked against the release).

// nfGroup is what the ACL stages read of a Network_Function_Group: its id,
// whether it fails open, whether it is in vtap mode (26.09+) and its
// active network function (the one northd's
// network_function_update_active chose; nil: none).
type nfGroup struct {
	ID       int
	FailOpen bool
	Vtap     bool
	Active   *netFunction
}

// netFunction is a Network_Function: its id and its ports (names;
// OutPort "" for a vtap function, which has none).
type netFunction struct {
	ID              int
	InPort, OutPort string
}

// sample is what the ACL stages read of a Sample row and its collectors.
type sample struct {
	Metadata int
	// Collectors in UUID order: northd iterates the IDL's set, which is
	// sorted by UUID (checked against 25.03 and 26.03).
	Collectors []sampleCollector
}

type sampleCollector struct{ ID, SetID, Probability int }

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
	var persist []string
	eachACL(s.ACLs, func(id string, acl *nbdb.ACL) {
		if persistsEstablished(acl) {
			persist = append(persist, id)
		}
	})
	slices.Sort(persist)
	ids := make(map[string]int, len(persist))
	for i, id := range persist {
		ids[id] = i + 1
	}
	return ids
}

// persistsEstablished is en-acl-ids.c's should_sync_to_sb.
func persistsEstablished(acl *nbdb.ACL) bool {
	return acl.Action == "allow-related" && boolOption(acl.Options["persist-established"], false)
}

// aclTier is ACL column tier (23.06+).
func aclTier(acl *nbdb.ACL) int { return acl.Tier }

// row returns the row uuid of NB table name, nil when there is none.
func row[T any](s *nbschema.Snapshot, table string, uuid *string) *T {
	if uuid == nil {
		return nil
	}
	t := nbschema.TableByName(table)
	if t == nil {
		return nil
	}
	r, ok := t.Row(s, *uuid)
	if !ok {
		return nil
	}
	v, _ := any(r).(*T)
	return v
}

// aclNFGroup is ACL column network_function_group (26.03), resolved.
// network_function_group_get_fallback: a vtap group (26.09) always fails
// open, whatever its fallback says.
func (g *global) aclNFGroup(acl *nbdb.ACL) *nfGroup {
	if !g.r.nf {
		return nil
	}
	nfg := row[nbdb.NetworkFunctionGroup](g.s, nbdb.NetworkFunctionGroupTable, acl.NetworkFunctionGroup)
	if nfg == nil {
		return nil
	}
	out := &nfGroup{ID: nfg.ID, FailOpen: nfg.Fallback != nil && strings.EqualFold(*nfg.Fallback, "fail-open"),
		Vtap: g.r.nfVtap && nfg.Mode == nbdb.NetworkFunctionGroupModeVtap}
	if out.Vtap {
		out.FailOpen = true
	}
	if nf := g.activeNF(nfg, out.Vtap); nf != nil {
		in := row[nbdb.LogicalSwitchPort](g.s, nbdb.LogicalSwitchPortTable, &nf.Inport)
		outp := row[nbdb.LogicalSwitchPort](g.s, nbdb.LogicalSwitchPortTable, nf.Outport)
		switch {
		case in != nil && outp != nil:
			out.Active = &netFunction{ID: nf.ID, InPort: in.Name, OutPort: outp.Name}
		case in != nil && out.Vtap && nf.Outport == nil:
			out.Active = &netFunction{ID: nf.ID, InPort: in.Name}
		}
	}
	return out
}

// activeNF is network_function_update_active: of the group's healthy
// functions (by UUID, the IDL's set order), the group's current
// network_function_active if it is one, else the first.
//
// Healthy (26.03): no health check, or its Service_Monitor is online.
// From 26.09 (network_function_port_binding_state) a function's ports must
// also be bound to one chassis and up — an inline function's inport and
// outport (it must have one), a vtap function's inport (it must have no
// outport; its health check is not read). With no SB (Options.SB nil, as
// in the goldens) no port is bound and no monitor online: on 26.03 only a
// function without a health check is healthy, on 26.09 none is.
func (g *global) activeNF(nfg *nbdb.NetworkFunctionGroup, vtap bool) *nbdb.NetworkFunction {
	var healthy []*nbdb.NetworkFunction
	for _, id := range slices.Sorted(slices.Values(nfg.NetworkFunction)) {
		if nf := row[nbdb.NetworkFunction](g.s, nbdb.NetworkFunctionTable, &id); nf != nil && g.nfHealthy(nf, vtap) {
			healthy = append(healthy, nf)
		}
	}
	if len(healthy) == 0 {
		return nil
	}
	if nfg.NetworkFunctionActive != nil {
		for _, nf := range healthy {
			if nf.UUID == *nfg.NetworkFunctionActive {
				return nf
			}
		}
	}
	return healthy[0]
}

// nfHealthy is network_function_update_active's test of one function.
func (g *global) nfHealthy(nf *nbdb.NetworkFunction, vtap bool) bool {
	outport := row[nbdb.LogicalSwitchPort](g.s, nbdb.LogicalSwitchPortTable, nf.Outport)
	if g.r.nfPortBinding {
		if vtap != (nf.Outport == nil) {
			return false // "outport should not be set for vtap mode" / "must be set for inline mode"
		}
		ports := []*string{&nf.Inport}
		if !vtap {
			ports = append(ports, nf.Outport)
		}
		if !g.nfPortsUp(ports) {
			return false
		}
		if vtap {
			return true
		}
	}
	if nf.HealthCheck == nil {
		return true
	}
	return outport != nil && g.sb != nil && g.sb.NFMonitorOnline[outport.Name]
}

// nfPortsUp is network_function_port_binding_state == NF_PORT_STATE_UP:
// every port exists, is bound to a chassis, the same one, and is up.
func (g *global) nfPortsUp(ports []*string) bool {
	chassis := ""
	for _, ref := range ports {
		lsp := row[nbdb.LogicalSwitchPort](g.s, nbdb.LogicalSwitchPortTable, ref)
		if lsp == nil || g.sb == nil {
			return false
		}
		pb := g.sb.Ports[lsp.Name]
		if pb.Chassis == "" || (chassis != "" && pb.Chassis != chassis) || !pb.Up {
			return false
		}
		chassis = pb.Chassis
	}
	return true
}

// aclSample is ACL column sample_new (isNew) or sample_est (24.09+),
// resolved.
func (g *global) aclSample(acl *nbdb.ACL, isNew bool) *sample {
	if !g.r.sampling {
		return nil
	}
	ref := acl.SampleEst
	if isNew {
		ref = acl.SampleNew
	}
	s := row[nbdb.Sample](g.s, nbdb.SampleTable, ref)
	if s == nil {
		return nil
	}
	out := &sample{Metadata: s.Metadata}
	for _, id := range slices.Sorted(slices.Values(s.Collectors)) {
		if c := row[nbdb.SampleCollector](g.s, nbdb.SampleCollectorTable, &id); c != nil {
			out.Collectors = append(out.Collectors, sampleCollector{ID: c.ID, SetID: c.SetID, Probability: c.Probability})
		}
	}
	return out
}

// samplingAppID is sampling_app_get_id: the id of the Sampling_App of
// type typ ("acl-new", "acl-est", "drop"), 0 when there is none.
func (g *global) samplingAppID(typ string) int { return g.samplingApps[typ] }

// samplingApps is sampling_app_table_add over the Sampling_App rows: the
// id of each type (of two rows of one type, northd keeps the last it
// sees; here the last by UUID).
func samplingApps(s *nbschema.Snapshot) map[string]int {
	out := map[string]int{}
	t := nbschema.TableByName(nbdb.SamplingAppTable)
	if t == nil {
		return out
	}
	var ids []string
	for uuid := range t.Rows(s) {
		ids = append(ids, uuid)
	}
	slices.Sort(ids)
	for _, uuid := range ids {
		r, _ := t.Row(s, uuid)
		if a, ok := r.(*nbdb.SamplingApp); ok {
			out[a.Type] = a.ID
		}
	}
	return out
}
