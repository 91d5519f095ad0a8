package reach

// ACLRef describes a deciding ACL for a report: its NB UUID and what
// identifies it to the operator who wrote it.
type ACLRef struct {
	UUID      string `json:"uuid"`
	Owner     string `json:"owner,omitempty"` // "Logical_Switch sw0", "Port_Group pg1"
	Direction string `json:"direction,omitempty"`
	Priority  int    `json:"priority"`
	Tier      int    `json:"tier"`
	Action    string `json:"action,omitempty"`
	Name      string `json:"name,omitempty"`
}

// ACL describes the ACL uuid of the engine's NB (Default and unknown
// UUIDs: only the UUID).
func (e *Engine) ACL(uuid string) ACLRef {
	a, ok := e.view.ACL(uuid)
	if !ok {
		return ACLRef{UUID: uuid}
	}
	r := ACLRef{UUID: uuid, Owner: a.Owner.String(), Direction: string(a.Row.Direction), Priority: a.Row.Priority,
		Tier: a.Row.Tier, Action: string(a.Row.Action)}
	if a.Row.Name != nil {
		r.Name = *a.Row.Name
	}
	return r
}

// ACLs describes the deciding ACLs of p (ingress, then egress).
func (e *Engine) ACLs(p *Part) []ACLRef {
	var out []ACLRef
	for _, id := range p.ACLs() {
		out = append(out, e.ACL(id))
	}
	return out
}
