package lint

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// This file holds the rules about ACLs of one stage of one switch against
// each other: same-priority overlaps with different verdicts, and ACLs
// shadowed by higher-priority ones.

func (l *linter) conflictFindings(v *swView) []Finding {
	var out []Finding
	for st := range v.byStage {
		list := v.byStage[st]
		out = append(out, l.samePriority(v, stage(st), list)...)
		out = append(out, l.shadowing(v, stage(st), list)...)
	}
	return out
}

// samePriority reports pairs of ACLs at one priority whose matches can
// overlap and whose verdicts differ.
func (l *linter) samePriority(v *swView, st stage, list []*inst) []Finding {
	var out []Finding
	for i := 0; i < len(list); {
		j := i
		for j < len(list) && list[j].a.acl.Priority == list[i].a.acl.Priority {
			j++
		}
		pairs := l.bucketPairs(v, list[i:j])
		for _, pr := range pairs {
			{
				a, b := list[i+pr[0]], list[i+pr[1]]
				ov := intersects(l.setOf(v, a), l.setOf(v, b))
				if ov == no {
					continue
				}
				sev := Info
				if a.a.verdict.Allows() != b.a.verdict.Allows() {
					sev = Warning
				}
				msg := fmt.Sprintf("same priority %d and stage %s as %s, their matches overlap and the verdicts differ (%s vs %s): OVN installs both flows at one priority, so which one decides is undefined",
					a.a.acl.Priority, st, b.a.ref.describeShort(), a.a.acl.Action, b.a.acl.Action)
				if ov == maybe {
					sev = Info
					msg = fmt.Sprintf("same priority %d and stage %s as %s with a different verdict (%s vs %s); aclc cannot decide whether the matches overlap (if they do, which one decides is undefined)",
						a.a.acl.Priority, st, b.a.ref.describeShort(), a.a.acl.Action, b.a.acl.Action)
				}
				out = append(out, Finding{Rule: RuleSamePriority, Severity: sev, ACLs: []ACLRef{a.a.ref, b.a.ref}, Message: msg,
					Fix: "give the ACL that must win a higher priority (or make the matches disjoint)"})
			}
		}
		i = j
	}
	return out
}

// bucketIndexMin is the bucket size from which same-priority pairs are
// found through a cube index instead of by trying every pair.
const bucketIndexMin = 32

// bucketPairs returns the index pairs (x < y) of ACLs of one priority
// bucket whose verdicts differ and whose matches may meet.
func (l *linter) bucketPairs(v *swView, b []*inst) [][2]int {
	var out [][2]int
	if len(b) < bucketIndexMin {
		for x := range b {
			for y := x + 1; y < len(b); y++ {
				if b[x].a.verdict != b[y].a.verdict {
					out = append(out, [2]int{x, y})
				}
			}
		}
		return out
	}
	pos := make(map[*inst]int, len(b))
	idx := newCubeIndex("inport")
	if b[0].a.stage == outACL {
		idx = newCubeIndex("outport")
	}
	for i, in := range b {
		pos[in] = i
		over := l.setOf(v, in).over
		h := hull(over)
		if h == nil {
			h = cube{}
		}
		for _, c := range over {
			idx.addRef(cubeRef{c: c, in: in, hull: h})
		}
	}
	for x, in := range b {
		var ys []int
		idx.meeting(l.setOf(v, in).over, func(o *inst) bool {
			if y := pos[o]; y > x && o.a.verdict != in.a.verdict {
				ys = append(ys, y)
			}
			return true
		})
		slices.Sort(ys)
		for _, y := range ys {
			out = append(out, [2]int{x, y})
		}
	}
	return out
}

// describeShort names an ACL briefly: its name or UUID and fixture
// position.
func (r ACLRef) describeShort() string {
	id := "ACL " + r.UUID
	if r.Name != "" {
		id = fmt.Sprintf("ACL %q", r.Name)
	}
	if r.Origin != "" && !strings.HasPrefix(r.Origin, "ACL ") && !strings.HasPrefix(r.Origin, "NB ACL") {
		id += " (" + r.Origin + ")"
	}
	return id
}

// cubeRef is an indexed cube of a higher-priority ACL.
type cubeRef struct {
	c  cube
	in *inst
	// hull, when not nil, is the hull of all of in's indexed cubes: a
	// query that does not meet it meets none of them.
	hull cube
}

// cubeIndex finds the cubes that may contain a cube: those constraining the
// port field to a set holding the cube's port, and those not constraining
// the port at all.
type cubeIndex struct {
	field  fieldID
	byPort map[string][]cubeRef
	free   []cubeRef
}

func newCubeIndex(field string) *cubeIndex {
	return &cubeIndex{field: idOf(field), byPort: map[string][]cubeRef{}}
}

func (x *cubeIndex) add(c cube, in *inst) { x.addRef(cubeRef{c: c, in: in}) }

func (x *cubeIndex) addRef(r cubeRef) {
	f, ok := r.c.field(x.field)
	if !ok || f.str == nil || f.str.in == nil {
		x.free = append(x.free, r)
		return
	}
	sc := f.str
	for p := range sc.in {
		if !sc.out[p] {
			x.byPort[p] = append(x.byPort[p], r)
		}
	}
}

// container returns an indexed cube that contains c, or nil.
func (x *cubeIndex) container(c cube) *cubeRef {
	for i := range x.free {
		if c.within(x.free[i].c) {
			return &x.free[i]
		}
	}
	f, ok := c.field(x.field)
	if !ok || f.str == nil || f.str.in == nil {
		return nil
	}
	sc := f.str
	var best []cubeRef
	found := false
	for p := range sc.in {
		if sc.out[p] {
			continue
		}
		cand := x.byPort[p]
		if !found || len(cand) < len(best) {
			best, found = cand, true
		}
	}
	for i := range best {
		if c.within(best[i].c) {
			return &best[i]
		}
	}
	return nil
}

// covered reports whether every cube of cs lies in the union of the
// indexed cubes, and which ACLs' cubes cover them. A cube inside a single
// indexed cube is the fast path; otherwise the indexed cubes that meet it
// are subtracted from it one by one (sharp), and it is covered when
// nothing remains.
func covered(cs []cube, idx ...*cubeIndex) ([]*inst, bool) {
	var by []*inst
	use := func(in *inst) {
		if !slices.Contains(by, in) {
			by = append(by, in)
		}
	}
	for _, c := range cs {
		var r *cubeRef
		for _, x := range idx {
			if r = x.container(c); r != nil {
				break
			}
		}
		if r != nil {
			use(r.in)
			continue
		}
		users, ok := coverByUnion(c, idx)
		if !ok {
			return nil, false
		}
		for _, in := range users {
			use(in)
		}
	}
	return by, true
}

// maxPieces bounds the pieces a cube is cut into while subtracting.
const maxPieces = 256

// coverByUnion subtracts the indexed cubes meeting c from it.
func coverByUnion(c cube, idx []*cubeIndex) ([]*inst, bool) {
	// Only the cubes meeting c matter, and with fewer than two of them
	// the single-cube test has already decided.
	var meeting []cubeRef
	for _, x := range idx {
		x.eachCandidate(c, func(r cubeRef) {
			if c.meets(r.c) {
				meeting = append(meeting, r)
			}
		})
	}
	if len(meeting) < 2 {
		return nil, false
	}
	rest := []cube{c}
	var users []*inst
	{
		for _, r := range meeting {
			if len(rest) == 0 {
				return users, true
			}
			var next []cube
			used := false
			for _, p := range rest {
				if !p.meets(r.c) {
					next = append(next, p)
					continue
				}
				used = true
				pieces, ok := sharp(p, r.c)
				if !ok {
					return nil, false
				}
				next = append(next, pieces...)
				if len(next) > maxPieces {
					return nil, false
				}
			}
			if used && !slices.Contains(users, r.in) {
				users = append(users, r.in)
			}
			rest = next
		}
	}
	return users, len(rest) == 0
}

// eachCandidate calls fn for each indexed cube that may meet c.
func (x *cubeIndex) eachCandidate(c cube, fn func(cubeRef)) {
	for _, r := range x.free {
		fn(r)
	}
	f, ok := c.field(x.field)
	if !ok || f.str == nil || f.str.in == nil {
		for _, p := range slices.Sorted(maps.Keys(x.byPort)) {
			for _, r := range x.byPort[p] {
				fn(r)
			}
		}
		return
	}
	for _, p := range slices.Sorted(maps.Keys(f.str.in)) {
		if !f.str.out[p] {
			for _, r := range x.byPort[p] {
				fn(r)
			}
		}
	}
}

// sharp returns c minus d as disjoint cubes; ok is false when there would
// be too many.
func sharp(c, d cube) ([]cube, bool) {
	var out []cube
	cur := c
	for _, dv := range d {
		if dv.str != nil {
			var comp strc
			if dv.str.in != nil {
				keep := map[string]bool{}
				for v := range dv.str.in {
					if !dv.str.out[v] {
						keep[v] = true
					}
				}
				comp = strc{out: keep}
			} else {
				comp = strc{in: maps.Clone(dv.str.out)}
			}
			if dv.str.in != nil || len(dv.str.out) > 0 { // else d admits every string
				if piece, ok := cur.and(cube{{id: dv.id, str: &comp}}); ok {
					out = append(out, piece)
				}
			}
			var ok bool
			if cur, ok = cur.and(cube{dv}); !ok {
				return out, true
			}
			continue
		}
		cf, _ := cur.field(dv.id)
		for i := 0; i < 128; i++ {
			if !dv.mask.bit(i) || cf != nil && cf.str == nil && cf.mask.bit(i) {
				continue
			}
			bit := u128{1, 0}.shl(i)
			want := dv.val.and(bit)
			flipped := u128{want[0] ^ bit[0], want[1] ^ bit[1]}
			if piece, ok := cur.and(cube{{id: dv.id, val: flipped, mask: bit}}); ok {
				out = append(out, piece)
				if len(out) > maxPieces {
					return nil, false
				}
			}
			var ok bool
			if cur, ok = cur.and(cube{{id: dv.id, val: want, mask: bit}}); !ok {
				return out, true
			}
			cf, _ = cur.field(dv.id)
		}
	}
	return out, true
}

// shadowing reports ACLs whose every packet a higher-priority ACL of the
// stage matches first. It is a proof: the ACL's cubes (from above) must
// each lie in one cube (from below) of a higher-priority ACL. When only
// the approximations stand in the way it says so at info level.
func (l *linter) shadowing(v *swView, st stage, list []*inst) []Finding {
	field := "inport"
	if st == outACL {
		field = "outport"
	}
	under := newCubeIndex(field)
	extra := newCubeIndex(field) // from-above cubes of inexact ACLs
	anyInexact := false
	var out []Finding
	for i := 0; i < len(list); {
		j := i
		for j < len(list) && list[j].a.acl.Priority == list[i].a.acl.Priority {
			j++
		}
		for _, b := range list[i:j] {
			sb := l.setOf(v, b)
			if len(sb.over) == 0 || i == 0 {
				continue
			}
			if by, ok := covered(sb.over, under); ok {
				out = append(out, shadowFinding(b, by, st, true))
				continue
			}
			if (anyInexact || !sb.exact) && len(sb.under) > 0 {
				if by, ok := covered(sb.under, under, extra); ok {
					out = append(out, shadowFinding(b, by, st, false))
				}
			}
		}
		for _, a := range list[i:j] {
			sa := l.setOf(v, a)
			for _, c := range sa.under {
				under.add(c, a)
			}
			if !sa.exact {
				anyInexact = true
				for _, c := range sa.over {
					extra.add(c, a)
				}
			}
		}
		i = j
	}
	return out
}

func shadowFinding(b *inst, by []*inst, st stage, proven bool) Finding {
	slices.SortStableFunc(by, func(x, y *inst) int { return y.a.acl.Priority - x.a.acl.Priority })
	same := true
	refs := []ACLRef{b.a.ref}
	for _, a := range by {
		if a.a.verdict != b.a.verdict {
			same = false
		}
		refs = append(refs, a.a.ref)
	}
	f := Finding{Rule: RuleShadowed, ACLs: refs}
	if !proven {
		f.Severity = Info
		f.Message = fmt.Sprintf("undecidable: this ACL may be shadowed in %s by the higher-priority ACL(s) listed with it, but its match uses constructs aclc cannot reason about exactly", st)
		f.Fix = "check by hand whether the ACL can ever decide; simplify the match if it cannot"
		return f
	}
	f.Message = fmt.Sprintf("every packet this ACL matches is matched first in %s by the higher-priority ACL(s) listed with it, so its verdict never applies", st)
	if same {
		f.Severity = Info
		f.Message += " (same verdict: the ACL is redundant)"
		f.Fix = "delete the redundant ACL"
	} else {
		f.Severity = Warning
		f.Fix = "raise this ACL's priority above the shadowing ACL(s) if its verdict should win, or delete it"
	}
	if b.a.verdict == vStateless {
		f.Message += "; its pre-ACL flow still takes the matching traffic out of conntrack"
	}
	return f
}

// meetIndex returns the index of the from-above cubes of a stage's ACLs,
// built once per switch.
func (l *linter) meetIndex(v *swView, st stage) *cubeIndex {
	if v.meet[st] != nil {
		return v.meet[st]
	}
	field := "inport"
	if st == outACL {
		field = "outport"
	}
	idx := newCubeIndex(field)
	for _, in := range v.byStage[st] {
		over := l.setOf(v, in).over
		h := hull(over)
		if h == nil {
			h = cube{} // no constraint in common: never rejects
		}
		for _, c := range over {
			idx.addRef(cubeRef{c: c, in: in, hull: h})
		}
	}
	v.meet[st] = idx
	return idx
}

// meeting calls fn, once per ACL, for each ACL with an indexed cube that
// meets one of cs, until fn returns false.
func (x *cubeIndex) meeting(cs []cube, fn func(*inst) bool) {
	seen := map[*inst]bool{}
	qh := hull(cs)
	try := func(refs []cubeRef, c cube) bool {
		for i := range refs {
			r := &refs[i]
			if seen[r.in] {
				continue
			}
			if r.hull != nil && !qh.meets(r.hull) {
				seen[r.in] = true // meets none of cs
				continue
			}
			if !c.meets(r.c) {
				continue
			}
			seen[r.in] = true
			if !fn(r.in) {
				return false
			}
		}
		return true
	}
	for _, c := range cs {
		if !try(x.free, c) {
			return
		}
		f, ok := c.field(x.field)
		if !ok || f.str == nil || f.str.in == nil {
			for _, refs := range x.byPort {
				if !try(refs, c) {
					return
				}
			}
			continue
		}
		for p := range f.str.in {
			if f.str.out[p] {
				continue
			}
			if !try(x.byPort[p], c) {
				return
			}
		}
	}
}
