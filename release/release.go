// Package release describes the OVN releases aclc compiles for: each one a
// value (its version, NB schema version, the Debian package its goldens
// were made with) that the sources, the compiler and lflow consult, plus
// the registry that finds a release by name or by NB schema version.
//
// Adding a release is one entry in the registry below, its features'
// versions (features.go) and its stage data (stages.go), then goldens from
// its northd (testdata/regen.sh RELEASE); docs/releases.md says how.
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

// Series is the version without its patch level ("26.03").
func (v Version) Series() Version { return Version{v.Major, v.Minor, -1} }

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

// Release is one OVN release aclc compiles for.
type Release struct {
	// Version is the exact upstream release ("26.03.1").
	Version Version
	// NBSchema is the version of its ovn-nb.ovsschema ("7.18.0"), which a
	// live NB reports and detection goes by.
	NBSchema string
	// SBSchema is the version of its ovn-sb.ovsschema ("21.8.0"), which
	// aclc checks a live SB against (compile --sb, verify).
	SBSchema string
	// Suite is the Debian suite whose ovn packages are this release
	// ("bookworm" for the host, "trixie", "sid" for the release roots).
	Suite string
	// Package is the exact Debian version of ovn-central (and ovn-common,
	// ovn-host) whose northd made the goldens ("26.03.1-1"). The test
	// command refuses a root with another one installed.
	Package string
	// LTS marks a long-term-support release.
	LTS bool
	// Host says this release's OVN is the host's own packages (no chroot).
	Host bool
}

// The supported releases.
var (
	OVN2303 = &Release{Version: MustVersion("23.03.1"), NBSchema: "7.0.0", SBSchema: "20.27.0", Suite: "bookworm", Package: "23.03.1-1~deb12u2", Host: true}
	OVN2503 = &Release{Version: MustVersion("25.03.0"), NBSchema: "7.11.0", SBSchema: "20.41.0", Suite: "trixie", Package: "25.03.0-1"}
	OVN2603 = &Release{Version: MustVersion("26.03.1"), NBSchema: "7.18.0", SBSchema: "21.8.0", Suite: "sid", Package: "26.03.1-1", LTS: true}
)

// all lists the supported releases, oldest first.
var all = []*Release{OVN2303, OVN2503, OVN2603}

// All returns the supported releases, oldest first.
func All() []*Release { return append([]*Release(nil), all...) }

// Default is the release a fixture is compiled for when neither
// --ovn-version nor its `ovn:` key says: the newest LTS.
func Default() *Release {
	var d *Release
	for _, r := range all {
		if r.LTS && (d == nil || d.Version.Compare(r.Version) < 0) {
			d = r
		}
	}
	return d
}

// Name is the release's full version, "26.03.1".
func (r *Release) Name() string { return r.Version.String() }

// Series is "26.03".
func (r *Release) Series() string { return r.Version.Series().String() }

// String is Name.
func (r *Release) String() string { return r.Name() }

// Tag is the upstream git tag of the release ("v26.03.1").
func (r *Release) Tag() string { return "v" + r.Name() }

// Index is the release's position in All (0 = oldest), for tables indexed
// by release.
func (r *Release) Index() int {
	for i, x := range all {
		if x == r {
			return i
		}
	}
	return -1
}

// Supported lists the releases as "23.03.1 (NB schema 7.0.0), ...", for
// error messages.
func Supported() string {
	var b strings.Builder
	for i, r := range all {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (NB schema %s)", r.Name(), r.NBSchema)
	}
	return b.String()
}

// UnknownReleaseError is a release name aclc does not support.
type UnknownReleaseError struct{ Name string }

func (e *UnknownReleaseError) Error() string {
	return fmt.Sprintf("OVN release %q is not supported; supported releases: %s", e.Name, Supported())
}

// UnknownSchemaError is an NB schema version that no supported release has.
type UnknownSchemaError struct{ Version string }

func (e *UnknownSchemaError) Error() string {
	return fmt.Sprintf("NB schema version %s belongs to no OVN release aclc supports (supported: %s); "+
		"use --ovn-version to compile for one of them anyway", e.Version, Supported())
}

// Lookup finds a release by its version ("26.03.1") or its series
// ("26.03"), with or without a leading "v".
func Lookup(name string) (*Release, error) {
	v, err := ParseVersion(strings.TrimSpace(name))
	if err != nil {
		return nil, &UnknownReleaseError{Name: name}
	}
	for _, r := range all {
		if v.Patch < 0 && r.Version.Series() == v || r.Version == v {
			return r, nil
		}
	}
	return nil, &UnknownReleaseError{Name: name}
}

// ByNBSchema finds the release whose NB schema has version v ("7.18.0").
func ByNBSchema(v string) (*Release, error) {
	for _, r := range all {
		if r.NBSchema == v {
			return r, nil
		}
	}
	return nil, &UnknownSchemaError{Version: v}
}

// UnknownSBSchemaError is an SB schema version that no supported release
// has.
type UnknownSBSchemaError struct{ Version string }

func (e *UnknownSBSchemaError) Error() string {
	var known []string
	for _, r := range all {
		known = append(known, fmt.Sprintf("%s (SB schema %s)", r.Name(), r.SBSchema))
	}
	return fmt.Sprintf("SB schema version %s belongs to no OVN release aclc supports (supported: %s)", e.Version, strings.Join(known, ", "))
}

// BySBSchema finds the release whose SB schema has version v ("21.8.0").
func BySBSchema(v string) (*Release, error) {
	for _, r := range all {
		if r.SBSchema == v {
			return r, nil
		}
	}
	return nil, &UnknownSBSchemaError{Version: v}
}
