package release

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is an OVN version, e.g. 26.03.1. A series ("26.03") has Patch -1.
type Version struct{ Major, Minor, Patch int }

// ParseVersion parses "26.03.1", "26.03" or either with a leading "v".
func ParseVersion(s string) (Version, error) {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("OVN version %q: want MAJOR.MINOR or MAJOR.MINOR.PATCH, e.g. 26.03 or 26.03.1", s)
	}
	v := Version{Patch: -1}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || p == "" || (p[0] == '+' || p[0] == '-') {
			return Version{}, fmt.Errorf("OVN version %q: %q is not a number", s, p)
		}
		switch i {
		case 0:
			v.Major = n
		case 1:
			v.Minor = n
		case 2:
			v.Patch = n
		}
	}
	return v, nil
}

// MustVersion is ParseVersion for constants.
func MustVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// String is "26.03.1", or "26.03" for a series.
func (v Version) String() string {
	if v.Patch < 0 {
		return fmt.Sprintf("%d.%02d", v.Major, v.Minor)
	}
	return fmt.Sprintf("%d.%02d.%d", v.Major, v.Minor, v.Patch)
}

// Series is the version without its patch level ("26.03"): the upstream
// branch (branch-26.03) the version was released from.
func (v Version) Series() Version { return Version{v.Major, v.Minor, -1} }

// IsSeries reports whether v names a series, not one release.
func (v Version) IsSeries() bool { return v.Patch < 0 }

// Compare returns -1, 0 or +1. A series compares as its .0 release.
func (v Version) Compare(o Version) int {
	a, b := [3]int{v.Major, v.Minor, max(v.Patch, 0)}, [3]int{o.Major, o.Minor, max(o.Patch, 0)}
	for i := range a {
		switch {
		case a[i] < b[i]:
			return -1
		case a[i] > b[i]:
			return 1
		}
	}
	return 0
}
