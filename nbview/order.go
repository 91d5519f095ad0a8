package nbview

import (
	"maps"
	"slices"
	"strconv"
)

// Which switch owns a port that two switches list. ovn-northd 23.03's
// join_logical_ports walks its datapaths (switches and routers, one OVS
// hmap keyed by uuid_hash of the NB UUID: the UUID's first 32 bits) bucket
// by bucket, gives the port to the first switch it meets and ignores the
// other listings ("duplicate logical port"). Bucket order is the hash
// masked by the table's size, which follows from the number of datapaths
// (hmap grows to calc_mask(n) when n/2 exceeds its mask); within one bucket
// the order depends on the order northd inserted the rows (its SB and IDL
// state), which the NB does not say. Checked against the real northd by
// TestDuplicatePortNorthd.

// hmapMask is the mask of an OVS hmap after n insertions.
func hmapMask(n int) uint32 {
	mask := 0
	for i := 1; i <= n; i++ {
		if i/2 > mask {
			mask = calcMask(i)
		}
	}
	return uint32(mask)
}

// calcMask is OVS lib/hmap.c's calc_mask.
func calcMask(capacity int) int {
	mask := capacity / 2
	for _, s := range []int{1, 2, 4, 8, 16, 32} {
		mask |= mask >> s
	}
	return mask | (mask&1)<<1
}

// uuidHash is OVS's uuid_hash: the UUID's first 32 bits.
func uuidHash(uuid string) uint32 {
	if len(uuid) < 8 {
		return 0
	}
	h, err := strconv.ParseUint(uuid[:8], 16, 32)
	if err != nil {
		return 0
	}
	return uint32(h)
}

// datapathMask is the mask of northd's datapath table for the snapshot.
func (v *View) datapathMask() uint32 { return hmapMask(len(v.s.Switches) + len(v.s.Routers)) }

// firstSwitch returns which of the switches sws (UUIDs of existing
// switches, at least one) northd meets first, and whether another one
// shares its hash bucket, so that northd's choice is not decided by the
// NB (then the lowest UUID of the bucket is returned).
func firstSwitch(sws []string, mask uint32) (string, bool) {
	best, tie := "", false
	for _, sw := range sws {
		switch {
		case best == "":
			best = sw
		case uuidHash(sw)&mask < uuidHash(best)&mask:
			best, tie = sw, false
		case uuidHash(sw)&mask == uuidHash(best)&mask:
			tie = true
			if sw < best {
				best = sw
			}
		}
	}
	return best, tie
}

// Duplicate is a port that more than one switch lists.
type Duplicate struct {
	Port     string   // Logical_Switch_Port UUID
	Switches []string // the switches listing it, UUIDs ascending
	Owner    string   // the switch northd gives it to
	// Ambiguous: the owner shares its hash bucket with another of the
	// switches, so northd's choice depends on its state; Owner is aclc's
	// guess.
	Ambiguous bool
}

// Duplicates returns the ports that more than one existing switch lists,
// by port UUID.
func (v *View) Duplicates() []Duplicate {
	var out []Duplicate
	mask := v.datapathMask()
	for _, p := range slices.Sorted(maps.Keys(v.multi)) {
		sws := slices.Sorted(slices.Values(v.multi[p]))
		owner, tie := firstSwitch(sws, mask)
		out = append(out, Duplicate{Port: p, Switches: sws, Owner: owner, Ambiguous: tie})
	}
	return out
}

// DatapathMask is the mask of northd's datapath hash table for the
// snapshot: when it changes, so may the owner of every port two switches
// list.
func (v *View) DatapathMask() uint32 { return v.datapathMask() }

// DatapathMaskOf is the mask of northd's datapath hash table holding n
// switches and routers.
func DatapathMaskOf(n int) uint32 { return hmapMask(n) }

// HasDuplicates reports whether a port is listed by more than one switch.
func (v *View) HasDuplicates() bool { return len(v.multi) > 0 }

// owner returns the owner of a port listed by the existing switches sws,
// recording it as a duplicate when there are several.
func (v *View) owner(p string, sws []string) string {
	switch len(sws) {
	case 0:
		delete(v.multi, p)
		return ""
	case 1:
		delete(v.multi, p)
		return sws[0]
	}
	v.multi[p] = sws
	o, _ := firstSwitch(sws, v.datapathMask())
	return o
}
