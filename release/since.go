package release

import (
	"fmt"
	"slices"
	"strings"
)

// Since says which versions have a fact: the first version of each
// upstream branch that has it. A fix developed on main for 25.09.0 and
// backported to branch-25.03 for 25.03.1 and to branch-24.03 for 24.03.6
// is Since{24.03.6, 25.03.1, 25.09.0}: a version has the fact when its own
// branch lists a point it has reached, or when its branch is newer than
// every listed one (main had it since the newest point, and every later
// branch was cut from main). A branch older than the newest point and not
// listed (24.09 above) never got the fix. A point may end on its branch:
// "24.03.2..24.03.3" is a fact backported in 24.03.2 and reverted in
// 24.03.3 (the end is exclusive). When the newest point ends, later
// branches do not have the fact either (it was reverted on main too).
type Since struct {
	points []Version
	until  map[Version]Version // point -> first version of its branch without it again
}

// At is the Since of the given points ("24.03.6", "25.03.1", "25.09.0"),
// at most one per branch, each an exact version, optionally with the end
// of its interval ("24.03.2..24.03.3").
func At(points ...string) Since {
	s := Since{}
	for _, p := range points {
		from, to, ranged := strings.Cut(p, "..")
		v := MustVersion(from)
		if v.IsSeries() {
			panic("release: since-point " + p + " is a series, not a version")
		}
		for _, q := range s.points {
			if q.Series() == v.Series() {
				panic("release: two since-points on branch " + v.Series().String())
			}
		}
		s.points = append(s.points, v)
		if ranged {
			end := MustVersion(to)
			if end.Series() != v.Series() || end.Compare(v) <= 0 {
				panic("release: interval " + p + " does not end later on its branch")
			}
			if s.until == nil {
				s.until = map[Version]Version{}
			}
			s.until[v] = end
		}
	}
	slices.SortFunc(s.points, Version.Compare)
	return s
}

// Holds reports whether version v has the fact.
func (s Since) Holds(v Version) bool {
	if len(s.points) == 0 {
		return false
	}
	for _, p := range s.points {
		if p.Series() == v.Series() {
			end, ranged := s.until[p]
			return v.Compare(p) >= 0 && (!ranged || v.Compare(end) < 0)
		}
	}
	newest := s.points[len(s.points)-1]
	if _, ended := s.until[newest]; ended {
		return false
	}
	return v.Series().Compare(newest.Series()) > 0
}

// Until is the end of the interval that starts at since-point p (the
// first version of its branch without the fact again), if it ends.
func (s Since) Until(p Version) (Version, bool) {
	end, ok := s.until[p]
	return end, ok
}

// Points returns the since-points, oldest first.
func (s Since) Points() []Version { return slices.Clone(s.points) }

// First is the oldest version that has the fact.
func (s Since) First() Version { return s.points[0] }

// On returns the since-point on v's branch, if any.
func (s Since) On(series Version) (Version, bool) {
	for _, p := range s.points {
		if p.Series() == series.Series() {
			return p, true
		}
	}
	return Version{}, false
}

// String lists the points, "24.03.6, 25.03.1, 25.09.0".
func (s Since) String() string {
	var b strings.Builder
	for i, p := range s.points {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.String())
		if end, ok := s.until[p]; ok {
			b.WriteString(".." + end.String())
		}
	}
	return b.String()
}

// describe says when, for an error: "OVN 25.09.0 (and 24.03.6, 25.03.1 on
// older branches)".
func (s Since) describe() string {
	if len(s.points) == 0 {
		return "no OVN release"
	}
	name := func(p Version) string {
		if p.Patch == 0 {
			return p.Series().String()
		}
		return p.String()
	}
	last := s.points[len(s.points)-1]
	if len(s.points) == 1 {
		return "OVN " + name(last)
	}
	var older []string
	for _, p := range s.points[:len(s.points)-1] {
		older = append(older, name(p))
	}
	return fmt.Sprintf("OVN %s (backported to %s)", name(last), strings.Join(older, ", "))
}
