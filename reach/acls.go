package reach

import (
	"strconv"
	"strings"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// ACL is a deciding ACL of a part as an operator reads it: the NB row's
// facts and the row that lists it, or, for UUID Default, the stage whose
// default flow decided (no ACL's flow did).
type ACL struct {
	UUID string `json:"uuid"`
	// Owner is the Logical_Switch or Port_Group that lists the ACL, and
	// OwnerType which ("Logical_Switch", "Port_Group"); empty for
	// Default (or an ACL no row lists).
	Owner     string `json:"owner,omitempty"`
	OwnerType string `json:"owner_type,omitempty"`
	Direction string `json:"direction,omitempty"`
	Priority  int    `json:"priority"`
	Tier      int    `json:"tier"`
	Action    string `json:"action,omitempty"`
	Name      string `json:"name,omitempty"`
	// ExternalIDs are the CMS's (ovn-kubernetes' policy name and
	// namespace, Neutron's security group rule).
	ExternalIDs map[string]string `json:"external_ids,omitempty"`
	// Pipeline is the pipeline it decided in: "ingress" or "egress".
	Pipeline string `json:"pipeline"`
	// Stage is, for Default, the stage that decided without an ACL: the
	// one that ended the part in this pipeline, else the pipeline's ACL
	// stage.
	Stage string `json:"stage,omitempty"`
}

// String names the ACL for text output: owner/name/direction/priority
// ("pg_web/allow-http/to-lport/1001"), the name left out when empty;
// "default(ingress)" for Default.
func (a ACL) String() string {
	if a.UUID == Default {
		return Default + "(" + a.Pipeline + ")"
	}
	owner := a.Owner
	if owner == "" {
		owner = a.UUID
	}
	parts := []string{owner}
	if a.Name != "" {
		parts = append(parts, a.Name)
	}
	parts = append(parts, a.Direction, strconv.Itoa(a.Priority))
	return strings.Join(parts, "/")
}

// DecidingACLs returns the deciding ACLs of part p (of a Result of e),
// ingress first, as ACL objects; nil for a NotExact part.
func (e *Engine) DecidingACLs(p *Part) []ACL {
	if p.Verdict == NotExact {
		return nil
	}
	out := []ACL{e.aclObject(p, p.Ingress, lflow.Ingress)}
	if p.Egress != "" {
		out = append(out, e.aclObject(p, p.Egress, lflow.Egress))
	}
	return out
}

// aclObject is the object of ACL id deciding part p in pipeline pl.
func (e *Engine) aclObject(p *Part, id string, pl lflow.Pipeline) ACL {
	a := ACL{UUID: id, Pipeline: pl.String()}
	if id == Default {
		st, ok := e.layout.StageByName(p.Stage)
		switch {
		case ok && st.Pipeline() == pl && p.Verdict != Allow:
			a.Stage = p.Stage
		case pl == lflow.Ingress:
			a.Stage = e.layout.Stage(lflow.InACL).Name()
		default:
			a.Stage = e.layout.Stage(lflow.OutACL).Name()
		}
		return a
	}
	v, ok := e.view.ACL(id)
	if !ok {
		return a
	}
	row := v.Row
	a.Direction, a.Priority, a.Tier, a.Action = row.Direction, row.Priority, row.Tier, row.Action
	if row.Name != nil {
		a.Name = *row.Name
	}
	if len(row.ExternalIDs) > 0 {
		a.ExternalIDs = row.ExternalIDs
	}
	a.Owner = v.Owner.Name
	switch v.Owner.Table {
	case nbdb.LogicalSwitchTable, nbdb.PortGroupTable:
		a.OwnerType = v.Owner.Table
	}
	return a
}
