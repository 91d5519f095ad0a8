package nbview

import (
	"strconv"

	"github.com/aclc/aclc/nbschema/nbdb"
)

// Owner is the row that lists an ACL: a Logical_Switch or a Port_Group.
type Owner struct {
	Table string // nbdb.LogicalSwitchTable or nbdb.PortGroupTable; "" when no row lists the ACL
	Name  string
}

// String is the one format of an owner: "Logical_Switch sw0",
// "Port_Group pg1"; "" for no owner.
func (o Owner) String() string {
	if o.Table == "" {
		return ""
	}
	return o.Table + " " + o.Name
}

// Phrase names the owner in a sentence: `switch "sw0"`, `port group
// "pg1"` (trace's wording); "" for no owner.
func (o Owner) Phrase() string {
	switch o.Table {
	case nbdb.LogicalSwitchTable:
		return "switch " + strconv.Quote(o.Name)
	case nbdb.PortGroupTable:
		return "port group " + strconv.Quote(o.Name)
	}
	return ""
}

// Stage is the ACL stage northd puts an ACL's flows in.
type Stage int

// The ACL stages.
const (
	StageIngress Stage = iota // ls_in_acl: from-lport
	StageAfterLB              // ls_in_acl_after_lb: from-lport with options:apply-after-lb=true
	StageEgress               // ls_out_acl: to-lport
	NumStages
)

var stageNames = [...]string{"ls_in_acl", "ls_in_acl_after_lb", "ls_out_acl"}

// String names the stage's logical flow table.
func (s Stage) String() string { return stageNames[s] }

// StageOf returns the stage of acl's flows.
func StageOf(acl *nbdb.ACL) Stage {
	switch {
	case acl.Direction == "from-lport" && acl.Options["apply-after-lb"] == "true":
		return StageAfterLB
	case acl.Direction == "from-lport":
		return StageIngress
	}
	return StageEgress
}

// Verdict classes an ACL action.
type Verdict int

// The verdicts.
const (
	VerdictAllow     Verdict = iota // allow, allow-related
	VerdictStateless                // allow-stateless
	VerdictDrop                     // drop
	VerdictReject                   // reject
	VerdictOther                    // pass, or an action this release does not know
)

// VerdictOf classes an ACL action.
func VerdictOf(action string) Verdict {
	switch action {
	case "allow", "allow-related":
		return VerdictAllow
	case "allow-stateless":
		return VerdictStateless
	case "drop":
		return VerdictDrop
	case "reject":
		return VerdictReject
	}
	return VerdictOther
}

// Allows reports whether the verdict lets traffic through.
func (v Verdict) Allows() bool { return v == VerdictAllow || v == VerdictStateless }

// IsStateful reports whether acl makes its switch stateful
// (ls_get_acl_flags: an allow-related ACL).
func IsStateful(acl *nbdb.ACL) bool { return acl.Action == "allow-related" }

// ACL is what the view knows of one ACL independently of the switch.
type ACL struct {
	Row     *nbdb.ACL
	Owner   Owner
	Stage   Stage
	Verdict Verdict
}

// ACL returns the facts of ACL id, and false when there is no such row.
func (v *View) ACL(id string) (ACL, bool) {
	acl, ok := v.s.ACLs[id]
	if !ok {
		return ACL{}, false
	}
	return ACL{Row: acl, Owner: v.owners()[id], Stage: StageOf(acl), Verdict: VerdictOf(acl.Action)}, true
}

// Owner returns the row that lists ACL id.
func (v *View) Owner(id string) Owner { return v.owners()[id] }
