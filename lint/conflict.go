package lint

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// This file holds the rules about ACLs of one stage of one switch against
// each other: same-priority overlaps with different verdicts, and ACLs
// shadowed by higher-priority ones. Both read the stage's ACLs as layers
// (scope.go): those shared by a class of switches and the switch's own.

// samePriority reports, for each ACL of own, the ACLs of the layers at its
// priority whose matches can overlap with it and whose verdicts differ
// (each pair once, the ACL that sorts first first).
func (l *linter) samePriority(v *swView, st stage, own *layer, layers []*layer) []Finding {
	var out []Finding
	var buf qbuf
	for ai, a := range own.list {
		q := l.queryOf(&buf, v, a)
		p := a.a.acl.Priority
		for _, ly := range layers {
			lo, hi := ly.idx.span(p)
			if ly == own {
				lo = max(lo, ai+1) // a itself and the pairs before it are done
			}
			ly.idx.candidates(q, lo, hi, func(i int, b *inst) bool {
				if b == a || b.a.verdict == a.a.verdict {
					return true
				}
				x, y := a, b
				if instCmp(y, x) < 0 {
					x, y = y, x
				}
				if f, ok := l.overlapFinding(v, st, x, y); ok {
					out = append(out, f)
				}
				return true
			})
		}
	}
	return out
}

func (l *linter) overlapFinding(v *swView, st stage, a, b *inst) (Finding, bool) {
	ov := intersects(l.setOf(v, a), l.setOf(v, b))
	var why string
	if ov == maybe { // the cube bounds cannot tell: the exact sets can
		meet, in, err := l.exactOf(v).overlap(a, b)
		switch {
		case err != nil:
			why = notExactText(err, in)
		case meet:
			ov = yes
		default:
			ov = no
		}
	}
	if ov == no {
		return Finding{}, false
	}
	sev := Info
	if a.a.verdict.Allows() != b.a.verdict.Allows() || a.a.verdict == vOther || b.a.verdict == vOther { // vOther: pass
		sev = Warning
	}
	msg := fmt.Sprintf("same priority %d and stage %s as %s, their matches overlap and the verdicts differ (%s vs %s): OVN installs both flows at one priority, so which one decides is undefined",
		a.a.acl.Priority, st, b.a.ref.describeShort(), a.a.acl.Action, b.a.acl.Action)
	if ov == maybe {
		sev = Info
		msg = fmt.Sprintf("not exact: same priority %d and stage %s as %s with a different verdict (%s vs %s), and whether the matches overlap cannot be decided: %s (if they do, which one decides is undefined)",
			a.a.acl.Priority, st, b.a.ref.describeShort(), a.a.acl.Action, b.a.acl.Action, why)
	}
	return Finding{Rule: RuleSamePriority, Severity: sev, ACLs: []ACLRef{a.a.ref, b.a.ref}, Message: msg,
		Fix: "give the ACL that must win a higher priority (or make the matches disjoint)"}, true
}

// instCmp orders ACLs as a stage lists them: priority (highest first),
// origin, UUID.
func instCmp(x, y *inst) int {
	if c := y.prio - x.prio; c != 0 {
		return c
	}
	if c := strings.Compare(x.a.ref.Origin, y.a.ref.Origin); c != 0 {
		return c
	}
	return strings.Compare(x.a.acl.UUID, y.a.acl.UUID)
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
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

// cubeRef is a cube of an ACL that may contain or meet a queried cube.
type cubeRef struct {
	c  cube
	in *inst
}

// refsMeeting returns the cubes of the ACLs of the layers with a priority
// above p (all of them when p is math.MinInt) that meet c: their cubes
// from below, and with extra also the cubes from above of inexact ACLs.
func (l *linter) refsMeeting(v *swView, c cube, p int, layers []*layer, extra bool) []cubeRef {
	var out []cubeRef
	for _, ly := range layers {
		ly.reps.candidates(c, 0, ly.reps.above(p), func(_ int, in *inst) bool {
			s := l.setOf(v, in)
			for _, d := range s.under {
				if c.meets(d) {
					out = append(out, cubeRef{d, in})
				}
			}
			if extra && !s.exact {
				for _, d := range s.over {
					if c.meets(d) {
						out = append(out, cubeRef{d, in})
					}
				}
			}
			return true
		})
	}
	return out
}

// meetsAbove reports whether a cube refsMeeting would return for c from
// the layer exists.
func (l *linter) meetsAbove(v *swView, c cube, p int, ly *layer, extra bool) bool {
	found := false
	ly.reps.candidates(c, 0, ly.reps.above(p), func(_ int, in *inst) bool {
		s := l.setOf(v, in)
		found = anyIntersect([]cube{c}, s.under) || extra && !s.exact && anyIntersect([]cube{c}, s.over)
		return !found
	})
	return found
}

// covered reports whether every cube of cs lies in the union of the cubes
// of the layers' ACLs above priority p, and which ACLs' cubes cover them.
// A cube inside a single cube is the fast path; otherwise the cubes that
// meet it are subtracted from it one by one (sharp), and it is covered
// when nothing remains.
func (l *linter) covered(v *swView, cs []cube, p int, layers []*layer, extra bool) ([]*inst, bool) {
	by, fail, _ := l.coveredAt(v, cs, p, layers, extra)
	return by, fail < 0
}

// coveredAt is covered, and says which cube is not covered (-1: all are)
// and whether the subtraction gave up there (then the cube may be
// covered all the same).
func (l *linter) coveredAt(v *swView, cs []cube, p int, layers []*layer, extra bool) ([]*inst, int, bool) {
	w := getWitness()
	defer witnesses.Put(w)
	return coveredBy(cs, func(c cube) []cubeRef {
		// coveredBy fails at c when a packet uncovered tries is in none of
		// the cubes that meet c; asking the indexes for the cubes that hold
		// the packet is narrower than collecting those (for a broad ACL
		// such as `ip4', every ACL above it), so try that first.
		if w.uncoveredBy(c, func(pt []pointField) bool { return l.heldAbove(v, pt, p, layers, extra) }) {
			return nil
		}
		return l.refsMeeting(v, c, p, layers, extra)
	})
}

// heldAbove reports whether a cube refsMeeting would return holds the
// packet pt.
func (l *linter) heldAbove(v *swView, pt []pointField, p int, layers []*layer, extra bool) bool {
	found := false
	for _, ly := range layers {
		ly.reps.holding(pt, 0, ly.reps.above(p), func(_ int, in *inst) bool {
			s := l.setOf(v, in)
			found = slices.ContainsFunc(s.under, func(d cube) bool { return pointIn(pt, d) }) ||
				extra && !s.exact && slices.ContainsFunc(s.over, func(d cube) bool { return pointIn(pt, d) })
			return !found
		})
		if found {
			return true
		}
	}
	return false
}

// coveredBy is coveredAt with the cubes that meet c, in layer order, from
// refs.
func coveredBy(cs []cube, refsOf func(c cube) []cubeRef) ([]*inst, int, bool) {
	var by []*inst
	w := getWitness()
	defer witnesses.Put(w)
	use := func(in *inst) {
		if !slices.Contains(by, in) {
			by = append(by, in)
		}
	}
	for ci, c := range cs {
		refs := refsOf(c)
		// The highest-priority ACLs first: a cube inside one of them is
		// decided by it (or higher ones), whichever layer it comes from.
		slices.SortStableFunc(refs, func(x, y cubeRef) int { return instCmp(x.in, y.in) })
		if c.hasSet() {
			if w.uncovered(c, refs) {
				return nil, ci, false
			}
			users, ok, gaveUp := coverValues(c, refs)
			if !ok {
				return nil, ci, gaveUp
			}
			for _, in := range users {
				use(in)
			}
			continue
		}
		var r *cubeRef
		for i := range refs {
			if c.within(refs[i].c) {
				r = &refs[i]
				break
			}
		}
		if r != nil {
			use(r.in)
			continue
		}
		if w.uncovered(c, refs) {
			return nil, ci, false
		}
		users, ok, gaveUp := coverByUnion(c, refs)
		if !ok {
			return nil, ci, gaveUp
		}
		for _, in := range users {
			use(in)
		}
	}
	return by, -1, false
}

// uncovered reports whether a packet of c found without subtracting lies
// in none of the cubes that meet it: then no proof can cover c, and the
// subtraction, which on a set-valued field of thousands of values costs
// as many cubes, need not run. The packets tried have c's bits, each of
// its first witnessTries values of its first set-valued field (the first
// value of the others), every other bit 0, and a name c admits.
func (w *witness) uncovered(c cube, refs []cubeRef) bool {
	return w.uncoveredBy(c, func(p []pointField) bool {
		return slices.ContainsFunc(refs, func(r cubeRef) bool { return pointIn(p, r.c) })
	})
}

// witness builds the packets uncovered tries, in a buffer reused from
// cube to cube; the cubes of a product share their port constraint, whose
// smallest admitted name it remembers.
type witness struct {
	p    []pointField
	str  *strc // the last constraint admittedName answered for
	name string
	ok   bool
}

var witnesses = sync.Pool{New: func() any { return new(witness) }}

// getWitness returns a witness from the pool, with no memory of a
// constraint: a pooled one's may have been garbage collected and its
// address reused.
func getWitness() *witness {
	w := witnesses.Get().(*witness)
	w.str = nil
	return w
}

// uncoveredBy is uncovered with held telling whether a cube that meets c
// holds the packet.
func (w *witness) uncoveredBy(c cube, held func(p []pointField) bool) bool {
	si := slices.IndexFunc(c, func(f fc) bool { return f.set != nil })
	tries := 1
	if si >= 0 {
		tries = min(witnessTries, len(c[si].set.vals))
	}
	if cap(w.p) < len(c) {
		w.p = make([]pointField, len(c), max(len(c), 16))
	}
	p := w.p[:len(c)]
	for i, f := range c {
		p[i] = pointField{id: f.id}
		switch {
		case f.str != nil:
			if f.str != w.str {
				w.str = f.str
				w.name, w.ok = admittedName(*f.str)
			}
			if !w.ok {
				return false
			}
			p[i].name = w.name
		case f.set != nil:
			p[i].bits = f.val.and(f.mask).or(f.set.vals[0])
		default:
			p[i].bits = f.val.and(f.mask)
		}
	}
	for t := 0; t < tries; t++ {
		if si >= 0 {
			f := c[si]
			p[si].bits = f.val.and(f.mask).or(f.set.vals[t])
		}
		if !held(p) {
			return true
		}
	}
	return false
}

// witnessTries bounds the packets uncovered tries.
const witnessTries = 4

// pointField is one field of a packet: its bits, or its name for a
// string field.
type pointField struct {
	id   fieldID
	bits u128
	name string
}

// noName is a name no constraint lists (names are never empty).
const noName = ""

// admittedName returns a name s admits.
func admittedName(s strc) (string, bool) {
	if s.in == nil {
		if s.out[noName] {
			return "", false
		}
		return noName, true
	}
	best, ok := "", false
	for n := range s.in {
		if !s.out[n] && (!ok || n < best) {
			best, ok = n, true
		}
	}
	return best, ok
}

// pointIn reports whether the packet p (its fields sorted; 0 bits and no
// name on the others) is in cube d.
func pointIn(p []pointField, d cube) bool {
	i := 0
	for _, dv := range d {
		for i < len(p) && p[i].id < dv.id {
			i++
		}
		var bits u128
		name := noName
		if i < len(p) && p[i].id == dv.id {
			bits, name = p[i].bits, p[i].name
		}
		if dv.str != nil {
			if dv.str.in != nil && !dv.str.in[name] || dv.str.out[name] {
				return false
			}
			continue
		}
		if bits.and(dv.mask) != dv.val.and(dv.mask) {
			return false
		}
		if dv.set != nil && !dv.set.has(bits.and(dv.set.mask)) {
			return false
		}
	}
	return true
}

// maxPieces bounds the pieces a cube is cut into while subtracting.
const maxPieces = 256

// coverByUnion subtracts the cubes meeting c from it; gaveUp says that it
// stopped at maxPieces.
func coverByUnion(c cube, meeting []cubeRef) (users []*inst, ok, gaveUp bool) {
	// With fewer than two cubes the single-cube test has already decided
	// (a cube with a set-valued field is several).
	if len(meeting) == 0 || len(meeting) == 1 && !meeting[0].c.hasSet() {
		return nil, false, false
	}
	rest := []cube{c}
	for _, r := range meeting {
		if len(rest) == 0 {
			return users, true, false
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
				return nil, false, true
			}
			next = append(next, pieces...)
			if len(next) > maxPieces {
				return nil, false, true
			}
		}
		if used && !slices.Contains(users, r.in) {
			users = append(users, r.in)
		}
		rest = next
	}
	return users, len(rest) == 0, false
}

// coverValues is the proof for a cube c with a set-valued field: the same
// answer, and the same covering ACLs, as for the cubes it stands for (one
// per value) one by one, without trying each. A value is decided by the
// first ACL (refs are in priority order) that contains its cube whole;
// the values left are covered by subtracting the cubes that meet them, all
// at once, and — only if that stops at maxPieces — one value at a time.
// gaveUp says that a subtraction stopped at maxPieces.
func coverValues(c cube, refs []cubeRef) (users []*inst, ok, gaveUp bool) {
	si := slices.IndexFunc(c, func(f fc) bool { return f.set != nil })
	f := c[si]
	if slices.ContainsFunc(c[si+1:], func(f fc) bool { return f.set != nil }) {
		// Several set-valued fields: one cube per value of the first.
		for _, v := range f.set.vals {
			e := c.replace(f.elem(v))
			u, ok, gaveUp := coverValues(e, meetingRefs(e, refs))
			if !ok {
				return nil, false, gaveUp
			}
			users = addUsers(users, u)
		}
		return users, true, false
	}
	rest := slices.Clone(f.set.vals)
	for _, r := range refs {
		if len(rest) == 0 {
			return users, true, false
		}
		rf, constrained := r.c.field(f.id)
		if !c.withinExcept(r.c, f.id) || constrained && rf.str != nil {
			continue
		}
		keep := rest[:0]
		hit := false
		for _, v := range rest {
			if !constrained || bitWithin(f.elem(v), *rf) {
				hit = true
			} else {
				keep = append(keep, v)
			}
		}
		if hit {
			users = addUsers(users, []*inst{r.in})
		}
		rest = keep
	}
	if len(rest) == 0 {
		return users, true, false
	}
	rf, _ := f.withSet(rest)
	left := c.replace(rf)
	refs = meetingRefs(left, refs)
	u, ok, gaveUp := coverByUnion(left, refs)
	if gaveUp && rf.set != nil {
		for _, v := range rf.set.vals {
			e := left.replace(rf.elem(v))
			if u, ok, gaveUp = coverByUnion(e, meetingRefs(e, refs)); !ok {
				return nil, false, gaveUp
			}
			users = addUsers(users, u)
		}
		return users, true, false
	}
	if !ok {
		return nil, false, gaveUp
	}
	return addUsers(users, u), true, false
}

func meetingRefs(c cube, refs []cubeRef) []cubeRef {
	var out []cubeRef
	for _, r := range refs {
		if c.meets(r.c) {
			out = append(out, r)
		}
	}
	return out
}

func addUsers(users, more []*inst) []*inst {
	for _, in := range more {
		if !slices.Contains(users, in) {
			users = append(users, in)
		}
	}
	return users
}

// sharp returns c minus d as disjoint cubes; ok is false when there would
// be too many. A set-valued field of d whose values c does not fix is d's
// cubes one per value, subtracted one after the other; where c's field is
// set-valued, the values d does not meet are one piece.
func sharp(c, d cube) ([]cube, bool) {
	for i, dv := range d {
		if dv.set == nil {
			continue
		}
		cf, ok := c.field(dv.id)
		if !ok || cf.str != nil {
			return sharpEach(c, d, i)
		}
		fixed := cf.mask
		if cf.set != nil {
			fixed = fixed.or(cf.set.mask)
		}
		if fixed.and(dv.set.mask) != dv.set.mask {
			return sharpEach(c, d, i)
		}
	}
	var out []cube
	cur := c
	for _, dv := range d {
		cf, ok := cur.field(dv.id)
		if dv.str != nil || !ok || cf.set == nil {
			continue
		}
		var in, rest []u128
		for _, v := range cf.set.vals {
			if bitMeets(cf.elem(v), dv) {
				in = append(in, v)
			} else {
				rest = append(rest, v)
			}
		}
		if len(in) == 0 {
			return append(out, cur), true
		}
		if len(rest) > 0 {
			o, _ := cf.withSet(rest)
			out = append(out, cur.replace(o))
			n, _ := cf.withSet(in)
			cur = cur.replace(n)
		}
	}
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
		// d's set (if any) is met by every value left: only its plain bits
		// cut.
		cf, _ := cur.field(dv.id)
		for i := 0; i < 128; i++ {
			if !dv.mask.bit(i) || cf != nil && cf.str == nil && cf.fixes(i) {
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

// sharpEach subtracts from c, one after the other, the cubes d stands for
// with its set-valued field i replaced by each of its values.
func sharpEach(c, d cube, i int) ([]cube, bool) {
	rest := []cube{c}
	for _, v := range d[i].set.vals {
		di := d.replace(d[i].elem(v))
		var next []cube
		for _, p := range rest {
			if !p.meets(di) {
				next = append(next, p)
				continue
			}
			pieces, ok := sharp(p, di)
			if !ok {
				return nil, false
			}
			next = append(next, pieces...)
			if len(next) > maxPieces {
				return nil, false
			}
		}
		rest = next
	}
	return rest, true
}

// shadowCheck decides whether every packet b matches is decided first by
// ACLs of the layers (the stage's ACLs evaluated before b).
func (l *linter) shadowCheck(v *swView, st stage, b *inst, layers []*layer) (Finding, bool) {
	f, ok, _ := l.shadowEval(v, st, b, layers)
	return f, ok
}

// shadowState is what a switch needs to know of a class's shadowing
// verdict on a shared ACL to tell whether its own ACLs can change it, or
// add to the ACLs that decide its packets first.
type shadowState struct {
	fail1 int  // the cube the cube proof did not cover; -1: none
	exact bool // the exact sets decided (the cube proof was not conclusive)
	found bool // the class proved it shadowed, or could not decide
}

// shadowEval decides whether b is shadowed: every packet of b's set is in
// the set of an ACL of the layers evaluated before it. The cubes decide
// first — b's cubes from above inside the union of the higher ACLs'
// cubes from below is a proof; a cube with a packet no higher ACL holds,
// when every set involved is exact, is a disproof — and the exact sets
// (exact.go) decide the rest. Either way the finding lists every ACL that
// decides some of b's packets first, from the exact sets.
func (l *linter) shadowEval(v *swView, st stage, b *inst, layers []*layer) (Finding, bool, shadowState) {
	ss := shadowState{fail1: -1}
	sb := l.setOf(v, b)
	p := b.a.acl.Priority
	if len(sb.over) == 0 {
		return Finding{}, false, ss
	}
	higher, inexact := false, false
	for _, ly := range layers {
		higher = higher || ly.idx.above(p) > 0
		inexact = inexact || ly.maxInexact > p
	}
	if !higher {
		ss.fail1 = 0
		return Finding{}, false, ss
	}
	by, fail, gaveUp := l.coveredAt(v, sb.over, p, layers, false)
	if fail >= 0 {
		ss.fail1 = fail
		if sb.exact && !inexact && !gaveUp {
			return Finding{}, false, ss // a packet of b no ACL before it matches
		}
		ss.exact = true
	} else if by, ok := l.blockersByCubes(v, b, layers); ok {
		ss.found = true
		return shadowFinding(v, st, b, by, true, nil, nil), true, ss
	}
	r := l.exactOf(v).shadow(b, l.evalBefore(v, b, layers))
	switch {
	case fail < 0 && r.err != nil && !r.shadowed:
		// Proven by the cubes; which ACLs decide its packets first is
		// what the exact sets cannot say: the proof's.
		ss.found = true
		return shadowFinding(v, st, b, by, true, r.err, r.errIn), true, ss
	case r.shadowed || r.err != nil:
		ss.found = true
		return shadowFinding(v, st, b, r.by, r.shadowed, r.err, r.errIn), true, ss
	}
	return Finding{}, false, ss
}

// blockersByCubes returns, for an ACL b proven shadowed, the ACLs that
// decide some of its packets first when the cubes can tell exactly (ok):
// each ACL a above b whose cubes meet b's such that the part of b they
// share is not covered by the ACLs above a (those at a's priority are not
// before a: which of them decides is undefined). Every set involved must
// be exact, no earlier tier involved and no subtraction given up;
// otherwise the exact sets answer (exactSets.shadow).
func (l *linter) blockersByCubes(v *swView, b *inst, layers []*layer) ([]*inst, bool) {
	sb := l.setOf(v, b)
	p := b.a.acl.Priority
	if !sb.exact {
		return nil, false
	}
	var cands []*inst
	meets := map[*inst][]cube{}
	ok := true
	var buf qbuf
	q := l.queryOf(&buf, v, b)
	for _, ly := range layers {
		if ly.maxInexact > p {
			return nil, false
		}
		ly.reps.candidates(q, 0, ly.reps.above(p), func(_ int, a *inst) bool {
			if a.dec != nil {
				ok = false
				return false
			}
			var meet []cube // a's cubes that meet b's
			for _, d := range l.setOf(v, a).over {
				if slices.ContainsFunc(sb.over, d.meets) {
					meet = append(meet, d)
				}
			}
			if meet != nil {
				cands = append(cands, a)
				meets[a] = meet
			}
			return true
		})
		if !ok {
			return nil, false
		}
	}
	slices.SortStableFunc(cands, instCmp)
	// The common case: each cube of b lies within a cube of the first
	// step's candidates, which then decide all of b first.
	first := 0
	for first < len(cands) && cands[first].a.acl.Priority == cands[0].a.acl.Priority {
		first++
	}
	if !slices.ContainsFunc(sb.over, func(c cube) bool {
		return !slices.ContainsFunc(cands[:first], func(a *inst) bool {
			return slices.ContainsFunc(meets[a], c.within)
		})
	}) {
		return cands[:first], true
	}
	// Only candidates can hold a packet of b: the part of b an ACL a
	// shares is covered, if at all, by the candidates above a.
	var by []*inst
	for i, a := range cands {
		above := cands[:i]
		for len(above) > 0 && above[len(above)-1].a.acl.Priority == a.a.acl.Priority {
			above = above[:len(above)-1] // one step: not before a
		}
		if len(above) == 0 {
			by = append(by, a)
			continue
		}
		both, ok := andSets(sb.over, meets[a])
		if !ok {
			return nil, false
		}
		_, fail, gaveUp := coveredBy(both, func(c cube) []cubeRef {
			var refs []cubeRef
			for _, x := range above {
				for _, d := range meets[x] {
					if c.meets(d) {
						refs = append(refs, cubeRef{d, x})
					}
				}
			}
			return refs
		})
		if gaveUp {
			return nil, false
		}
		if fail >= 0 {
			by = append(by, a)
		}
	}
	return by, true
}

// shadowChanges reports whether the switch's own ACLs (own, one of
// layers) above b can change the class's shadowing verdict ss on b, or
// add to the ACLs that decide its packets first: one of them may meet b
// where the class proved it shadowed or needed the exact sets, or meets
// the cube the class's proof did not cover (then the switch's proof may
// cover it). Where none can, the class's verdict holds on the switch.
func (l *linter) shadowChanges(v *swView, b *inst, ss shadowState, layers []*layer, own *layer) bool {
	sb := l.setOf(v, b)
	p := b.a.acl.Priority
	if ss.exact {
		return slices.ContainsFunc(sb.over, func(c cube) bool { return l.meetsAbove(v, c, p, own, true) })
	}
	if ss.fail1 >= 0 && l.meetsAbove(v, sb.over[ss.fail1], p, own, false) {
		if _, fail, gaveUp := l.coveredAt(v, sb.over[ss.fail1:ss.fail1+1], p, layers, false); fail < 0 || gaveUp {
			return true
		}
	}
	for _, ly := range layers {
		if ly == own && ly.maxInexact > p {
			return true
		}
	}
	return false
}

// mayChange reports whether shadowChanges can be true for an ACL with
// the class's verdict ss, whatever the switch's own ACLs.
func mayChange(ss shadowState) bool {
	return ss.fail1 >= 0 || ss.exact
}

// shadowFinding words the finding that b is shadowed, or that whether it
// is cannot be decided (not shadowed, err: errIn's match is not exact),
// listing by: the ACLs that decide some of its packets first, each with
// how it keeps b from deciding. A shadowed ACL with err is shadowed
// whatever errIn matches, but by may miss ACLs (errIn among them).
func shadowFinding(v *swView, st stage, b *inst, by []*inst, shadowed bool, err error, errIn *inst) Finding {
	tiered := v.tierLy[b.a.stage] != nil
	same := true
	refs := []ACLRef{b.a.ref}
	for _, a := range by {
		o := a
		if a.dec != nil {
			o = a.dec.orig
		}
		if a.a.verdict != b.a.verdict {
			same = false
		}
		ref := o.a.ref
		ref.How = blockHow(v, a, b, tiered)
		refs = append(refs, ref)
	}
	f := Finding{Rule: RuleShadowed, ACLs: refs}
	if !shadowed {
		if errIn != b && !slices.Contains(by, errIn) {
			o := errIn
			if o.dec != nil {
				o = o.dec.orig
			}
			ref := o.a.ref
			ref.How = blockHow(v, errIn, b, tiered) + "; not exact: may decide some of its packets first"
			f.ACLs = append(f.ACLs, ref)
		}
		f.Severity = Info
		f.Message = fmt.Sprintf("not exact: whether every packet this ACL matches is decided first in %s cannot be decided: %s", st, notExactText(err, errIn))
		if len(by) > 0 {
			f.Message = fmt.Sprintf("not exact: the ACL(s) listed with it decide some of this ACL's packets first in %s, but whether they decide all of them cannot be decided: %s", st, notExactText(err, errIn))
		}
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
	if err != nil {
		f.Message += fmt.Sprintf(" (which ACLs decide its packets first is not exact: %s)", notExactText(err, errIn))
	}
	return f
}

// blockHow says how ACL a, evaluated before b, keeps b from deciding the
// packets it takes: a higher priority (in b's tier), an earlier tier, or
// a pass of b's tier that hands them on to the next tier.
func blockHow(v *swView, a, b *inst, tiered bool) string {
	if a.dec != nil {
		o := a.dec.orig
		return fmt.Sprintf("decides first at tier %d, before tier %d (%s)", a.dec.tier, tierOn(v, b), o.a.acl.Action)
	}
	switch {
	case !tiered:
		return fmt.Sprintf("higher priority %d (%s)", a.a.acl.Priority, a.a.acl.Action)
	case a.a.acl.Action == "pass":
		return fmt.Sprintf("pass at higher priority %d in tier %d: hands the packets to the next tier", a.a.acl.Priority, tierOn(v, a))
	}
	return fmt.Sprintf("higher priority %d in tier %d (%s)", a.a.acl.Priority, tierOn(v, a), a.a.acl.Action)
}
