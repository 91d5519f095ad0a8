package compile

import (
	"strconv"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// sampleStage is the sample stage after an ACL's eval stage.
func sampleStage(eval lflow.Stage) lflow.Stage { return aclPipes[aclPipe(eval)].sample }

// replyStage is the sample stage of the other pipeline, where reply
// traffic of a connection meets the sample flows.
func replyStage(st lflow.Stage) lflow.Stage {
	if st.Kind() == lflow.OutACLSample {
		return lflow.InACLSample
	}
	return lflow.OutACLSample
}

// aclSampleFlows is build_acl_sample_flows (24.09+): the sample-stage
// flows of an ACL with sample_new or, on a switch with stateful ACLs (not
// merely load balancer VIPs), an
// allow-related ACL with sample_est. Like northd with no chassis (or
// chassis that all support it), a sample with one collector uses the
// register-based generic flows (sample_with_reg).
func (g *global) aclSampleFlows(hasStatefulACL bool, acl *nbdb.ACL) []aclFlow {
	if !g.r.sampling || (acl.SampleNew == nil && acl.SampleEst == nil) {
		return nil
	}
	sNew, sEst := g.aclSample(acl, true), g.aclSample(acl, false)
	sampleEst := hasStatefulACL && sEst != nil && acl.Action == "allow-related"
	stateful := hasStatefulACL && acl.Action != "allow-stateless"
	if sNew == nil && !sampleEst {
		return nil
	}
	st := sampleStage(aclStage(acl))
	obs := aclObsStage(acl)
	newDom, estDom := g.samplingAppID("acl-new"), g.samplingAppID("acl-est")
	var out []aclFlow
	add := func(s lflow.Stage, p int, m, a string) { out = append(out, aclFlow{s, p, m, a}) }

	newConn := "ip"
	if stateful {
		newConn = "ip && ct.new"
		if st.Kind() == lflow.OutACLSample {
			newConn = "ip && (ct.new || !ct.trk)"
		}
	}
	sampled, notSampled := "", ""
	if g.r.pktSampled {
		sampled, notSampled = "flags.pkt_sampled = 1; ", "flags.pkt_sampled == 0 && "
	}
	if c, ok := g.generic(sNew); ok {
		// build_acl_sample_generic_new_flows
		prio := 900
		if stateful {
			prio = 1000
		}
		add(st, prio, newConn+" && "+regObsCollectorIDNew+" == "+strconv.Itoa(c.ID)+" && "+regbitACLObsStage+" == "+strconv.Itoa(obs),
			sampled+"sample(probability="+strconv.Itoa(c.Probability)+",collector_set="+g.setID(c)+
				",obs_domain="+strconv.Itoa(newDom)+",obs_point="+regObsPointIDNew+"); next;")
	} else if sNew != nil {
		// build_acl_sample_new_flows
		add(st, 1100, newConn+" && "+regObsPointIDNew+" == "+strconv.Itoa(pointID(acl, sNew)), g.sampleAction(acl, sNew, newDom))
	}
	if !stateful {
		return out
	}
	est := notSampled + "ip && ct.trk && (ct.est || ct.rel) && "
	if c, ok := g.generic(sEst); ok {
		// build_acl_sample_generic_est_flows
		a := sampled + "sample(probability=" + strconv.Itoa(c.Probability) + ",collector_set=" + g.setID(c) +
			",obs_domain=" + strconv.Itoa(estDom) + ",obs_point=ct_label.obs_point_id); next;"
		coll := "ct_mark.obs_collector_id == " + strconv.Itoa(c.ID)
		add(st, 1000, est+"ct_label.obs_unused == 0 && !ct.rpl && "+coll+" && ct_mark.obs_stage == "+strconv.Itoa(obs), a)
		add(replyStage(st), 1000, est+"ct_label.obs_unused == 0 && ct.rpl && "+coll, a)
	} else if sEst != nil {
		// build_acl_sample_est_stateful_flows
		label := "ct_label.obs_point_id == " + strconv.Itoa(pointID(acl, sEst)) + " && ct_label.obs_unused == 0"
		a := g.sampleAction(acl, sEst, estDom)
		add(st, 1200, est+"!ct.rpl && "+label, a)
		add(replyStage(st), 1200, est+"ct.rpl && "+label, a)
	}
	return out
}

// pointID is the observation point of an ACL's samples: its label, or the
// sample's metadata.
func pointID(acl *nbdb.ACL, s *sample) int {
	if acl.Label != 0 {
		return acl.Label
	}
	return s.Metadata
}

// sampleAction is build_acl_sample_action: one sample() per collector,
// with the ACL's label as observation point (domain 0) or the sample's
// metadata (the Sampling_App's domain); nothing without a domain.
func (g *global) sampleAction(acl *nbdb.ACL, s *sample, domain int) string {
	if s == nil || domain == 0 {
		return ""
	}
	dom, point := domain, s.Metadata
	if acl.Label != 0 {
		dom, point = 0, acl.Label
	}
	a := ""
	if len(s.Collectors) > 0 && g.r.pktSampled {
		a = "flags.pkt_sampled = 1; "
	}
	for _, c := range s.Collectors {
		a += "sample(probability=" + strconv.Itoa(c.Probability) + ",collector_set=" + g.setID(c) +
			",obs_domain=" + strconv.Itoa(dom) + ",obs_point=" + strconv.Itoa(point) + ");"
	}
	return a + " next;"
}

// setID is the collector's set_id as sample() prints it: before 25.09,
// northd truncated it to 8 bits.
func (g *global) setID(c sampleCollector) string {
	if !g.r.setID32 {
		return strconv.Itoa(int(uint8(c.SetID)))
	}
	return strconv.Itoa(c.SetID)
}

// generic is acl_use_generic_sample_flows: a sample with one collector,
// when the chassis support sample() with registers, uses the generic
// flows; it returns that collector.
func (g *global) generic(s *sample) (sampleCollector, bool) {
	if s == nil || len(s.Collectors) != 1 || g.lacking.SampleWithReg {
		return sampleCollector{}, false
	}
	return s.Collectors[0], true
}
