package nbview

import (
	"slices"
	"strings"

	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// A switch's highest ACL tier, as northd's ls_stateful_record_set_acl_flags
// computes it.
//
// Before release.ACLTiersPerStage northd kept one max_acl_tier per switch,
// which every eval/action stage pair uses: MaxTier holds it in all three
// stages.
//
// Before release.ACLFlagsFullScan (FDP-1154) the scan stops at the first
// allow-related ACL it meets while every ACL it has read so far, that one
// included, is at tier 0 (it compares the running maximum with
// nbrec_acl_col_tier.type.value.integer.max, which is 0 for a column
// without a value type): MaxTier is then 0 whatever the later ACLs' tiers.
// The scan reads the switch's own ACLs in column (UUID) order, then the
// port groups present on the switch in the order of the OVS hmap
// ls_pg->nb_pgs, each one's ACLs in column order. That hmap is keyed by
// uuid_hash of the port group (the UUID's first 32 bits) and is built
// afresh, holding exactly the switch's port groups, whenever that set
// changes (port_group_nb_port_group_handler falls back to
// en_port_group_run, which clears and rebuilds every ls_port_group), so
// its buckets — hash & hmapMask(n) — follow from the NB; but the order of
// two port groups in one bucket follows from the order northd inserted
// them, which is its IDL's iteration order (its history), not the NB.
// When such port groups could each decide the outcome differently, the NB
// does not say what northd writes: Flags.TierContest names them.

// aclScan is what one ACL list does to northd's scan: nothing, stop it
// (an allow-related ACL at tier 0 comes before any ACL with a tier), or
// make it read every later ACL (an ACL with a tier comes first).
type aclScan uint8

const (
	scanNeutral aclScan = iota // no ACL with a tier, no allow-related ACL
	scanStops                  // an allow-related tier-0 ACL comes first: the scan stops, MaxTier 0
	scanTiered                 // an ACL with a tier comes first: every tier counts
)

// scanACLs is ls_stateful_record_set_acl_flags_'s loop over acls on a
// release with FDP-1154, when nothing before them stopped it or raised the
// tier. northd reads a set column in OVSDB's order, by UUID: acls are
// taken in that order whatever their order in the row.
func scanACLs(acls []*nbdb.ACL) aclScan {
	switch acl, stops := TierScanFirst(acls); {
	case acl == nil:
		return scanNeutral
	case stops:
		return scanStops
	}
	return scanTiered
}

// sortedByUUID returns acls in UUID order (acls itself when it is).
func sortedByUUID(acls []*nbdb.ACL) []*nbdb.ACL {
	byUUID := func(a, b *nbdb.ACL) int { return strings.Compare(a.UUID, b.UUID) }
	if slices.IsSortedFunc(acls, byUUID) {
		return acls
	}
	return slices.SortedFunc(slices.Values(acls), byUUID)
}

// fixTiers applies the release's max_acl_tier rules to sw.MaxTier, which
// holds the highest tier of the switch's ACLs per stage.
func (v *View) fixTiers(sw *Switch) {
	if sw.MaxTier == (Tiers{}) {
		return
	}
	if !v.rel.Has(release.ACLFlagsFullScan) && sw.HasStatefulACL {
		stop, contest := v.tierScan(sw)
		sw.TierContest = contest
		if stop != nil {
			sw.TierStop = stop
			sw.MaxTier = Tiers{}
			return
		}
	}
	if !v.rel.Has(release.ACLTiersPerStage) {
		m := slices.Max(sw.MaxTier[:])
		for i := range sw.MaxTier {
			sw.MaxTier[i] = m
		}
	}
}

// tierScan returns the allow-related ACL at which northd's FDP-1154 scan
// stops before it reads a tier above 0 on switch sw (one of whose ACLs is
// allow-related and one has a tier), nil when it reads a tier first, and,
// when that depends on the order of port groups in one bucket of
// ls_pg->nb_pgs, those port groups (UUIDs, ascending); the ACL is then
// aclc's guess: what the lowest UUID among them does.
func (v *View) tierScan(sw *Switch) (stop *nbdb.ACL, contest []string) {
	var own []*nbdb.ACL
	for _, a := range sw.LS.ACLs {
		if acl, ok := v.s.ACLs[a]; ok {
			own = append(own, acl)
		}
	}
	if acl, stops := TierScanFirst(own); acl != nil {
		if stops {
			return acl, nil
		}
		return nil, nil
	}
	// The first bucket holding a port group that decides.
	mask := hmapMask(len(sw.PortGroups))
	first, found := uint32(0), false
	var deciders []string
	for _, pg := range sw.PortGroups { // by UUID
		if v.pgFacts[pg.UUID].scan == scanNeutral {
			continue
		}
		b := uuidHash(pg.UUID) & mask
		switch {
		case !found || b < first:
			first, found, deciders = b, true, []string{pg.UUID}
		case b == first:
			deciders = append(deciders, pg.UUID)
		}
	}
	if !found {
		return nil, nil // not reached: some ACL has a tier
	}
	lead := v.pgFacts[deciders[0]]
	if lead.scan == scanStops {
		stop, _ = TierScanFirst(lead.acls)
	}
	for _, id := range deciders[1:] {
		if v.pgFacts[id].scan != lead.scan {
			return stop, deciders
		}
	}
	return stop, nil
}

// TierScanFirst returns the ACL of acls (a port group's) that decides
// northd's FDP-1154 scan when it reads them first — the first, in UUID
// order, that has a tier or is allow-related — and whether it stops the
// scan (allow-related at tier 0); nil when none does.
func TierScanFirst(acls []*nbdb.ACL) (acl *nbdb.ACL, stops bool) {
	for _, a := range sortedByUUID(acls) {
		switch {
		case a.Tier > 0:
			return a, false
		case IsStateful(a):
			return a, true
		}
	}
	return nil, false
}
