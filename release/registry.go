// Package release is what aclc knows of OVN's versions: each dated fact
// about northd, the match language and the NB inputs, stated once with the
// first version of each upstream branch that has it (facts.go); the
// versions aclc has verified against their own real northd, with how
// (registry.go); and which version an NB belongs to (detect.go).
//
// A Release is one exact OVN version. Every verified version has an
// oracle — a Debian package, or a build from its upstream tag — whose
// northd wrote the goldens under testdata/golden/VERSION; a version
// between the oldest and the newest verified of its branch is computed
// from the facts alone. Lookup and Detect resolve a version when a source
// is loaded, so that no package sees a nil release. docs/releases.md says
// how to add a version.
package release

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Branch is one upstream release series (branch-25.03): what all its
// versions share.
type Branch struct {
	Series Version
	// NBSchema and SBSchema are the versions of its ovn-nb.ovsschema and
	// ovn-sb.ovsschema ("7.11.0", "20.41.0"); OVN keeps them within a
	// series.
	NBSchema, SBSchema string
	// LTS marks a long-term-support series (24.03, 26.03).
	LTS bool
}

// Oracle is where the real northd of a verified version comes from: the
// Debian package whose northd wrote its goldens, or a build from its
// upstream tag.
type Oracle struct {
	// Suite and Package: a Debian suite and the exact ovn-central
	// version ("trixie", "25.03.0-1"); Host: this machine's own packages
	// (Debian 12, no chroot).
	Suite, Package string
	Host           bool
	// Tag, Commit and OVSCommit: a source build — the ovn-org/ovn tag,
	// its commit, and the openvswitch/ovs commit its ovs submodule
	// records.
	Tag, Commit, OVSCommit string
}

// Debian reports whether the oracle is a Debian package.
func (o *Oracle) Debian() bool { return o.Package != "" }

// String says where the oracle comes from: "Debian trixie ovn-central
// 25.03.0-1", "source v25.03.3 (f6031b7e0319)".
func (o *Oracle) String() string {
	if o.Debian() {
		where := "Debian " + o.Suite
		if o.Host {
			where += " (host)"
		}
		return where + " ovn-central " + o.Package
	}
	return fmt.Sprintf("source %s (ovn %.12s, ovs %.12s)", o.Tag, o.Commit, o.OVSCommit)
}

// Release is one exact OVN version.
type Release struct {
	// Version is the exact upstream version ("26.03.1").
	Version Version
	// NBSchema and SBSchema are its branch's schema versions.
	NBSchema, SBSchema string
	// LTS marks a version of a long-term-support series.
	LTS bool
	// Oracle says where the version's real northd comes from; nil for a
	// version aclc computes from the facts (between verified versions of
	// its branch).
	Oracle *Oracle
	// Carriers are distributions known to ship the version.
	Carriers []string

	branch    *Branch
	overrides map[*Fact]bool
}

var branches = []*Branch{
	{Series: MustVersion("23.03"), NBSchema: "7.0.0", SBSchema: "20.27.0"},
	{Series: MustVersion("24.03"), NBSchema: "7.3.0", SBSchema: "20.33.0", LTS: true},
	{Series: MustVersion("25.03"), NBSchema: "7.11.0", SBSchema: "20.41.0"},
	{Series: MustVersion("25.09"), NBSchema: "7.12.0", SBSchema: "21.5.0"},
	{Series: MustVersion("26.03"), NBSchema: "7.18.0", SBSchema: "21.8.0", LTS: true},
	{Series: MustVersion("26.09"), NBSchema: "7.19.0", SBSchema: "21.13.0"},
}

func debian(suite, pkg string) *Oracle { return &Oracle{Suite: suite, Package: pkg} }

func source(tag, commit, ovs string) *Oracle {
	return &Oracle{Tag: tag, Commit: commit, OVSCommit: ovs}
}

// verified are the versions whose goldens their own northd wrote, oldest
// first.
var verified = []*Release{
	{Version: MustVersion("23.03.1"), Oracle: &Oracle{Suite: "bookworm", Package: "23.03.1-1~deb12u2", Host: true}, Carriers: []string{"Debian 12 (bookworm)"}},
	{Version: MustVersion("24.03.0"), Oracle: source("v24.03.0", "669adeb17979cd4a8ccc481a4df1ca57b48d1f0b", "fe55ce37a7b090d09dee5c01ae0797320ad678f6")},
	{Version: MustVersion("24.03.1"), Oracle: source("v24.03.1", "19de791062fbdb38741c65c476343cb53c88542e", "fe55ce37a7b090d09dee5c01ae0797320ad678f6")},
	{Version: MustVersion("24.03.2"), Oracle: source("v24.03.2", "41836afafd99d579bb277f638a31bffd5cf3efa3", "f19448b8618967a108ec6f34713dd811ce1d1334")},
	{Version: MustVersion("24.03.3"), Oracle: source("v24.03.3", "459a3bab4c4a11b904aa3c37015372d34e1e1209", "f19448b8618967a108ec6f34713dd811ce1d1334")},
	{Version: MustVersion("24.03.4"), Oracle: source("v24.03.4", "af5e1ee49c6f7179c2bedd8a5fc49048b7041f33", "dfe601bbc154c836e6ec3526a1eb331c1c09a06e")},
	{Version: MustVersion("24.03.5"), Oracle: source("v24.03.5", "f5a4704f9be07f7c29e45bb15e7e71126c6fea4a", "dfe601bbc154c836e6ec3526a1eb331c1c09a06e")},
	{Version: MustVersion("24.03.6"), Oracle: source("v24.03.6", "95950716caf3cbba69ca2b8cbc79dd9ce5b086b6", "d8b97029e90562eacd38a87a74825b5c8e83fea1"), Carriers: []string{"Ubuntu 24.04 (noble-updates)"}},
	{Version: MustVersion("24.03.7"), Oracle: source("v24.03.7", "15839d7cb85c2dbdfe6e36ed9cf8efdc27ed82ca", "f1bc9af9627e97b8361dd32834068a8b7f2e0d17"), Carriers: []string{"RHEL Fast Datapath"}},
	{Version: MustVersion("24.03.8"), Oracle: source("v24.03.8", "697058648fdecfb67d7f3a11513e27af9c5d49a6", "bc99439446a1c0b94498ad7ea44f3d1d933ead90")},
	{Version: MustVersion("24.03.9"), Oracle: source("v24.03.9", "bd3baf441086577057e31b19dd616f878a478702", "bc99439446a1c0b94498ad7ea44f3d1d933ead90")},
	{Version: MustVersion("25.03.0"), Oracle: debian("trixie", "25.03.0-1"), Carriers: []string{"Debian 13 (trixie)"}},
	{Version: MustVersion("25.03.1"), Oracle: source("v25.03.1", "4b8dac64fd3fbbfb39a7105365d5143c7ffa5a35", "a0f636163b60a6afe5e20da221b7e7a47a8a3753")},
	{Version: MustVersion("25.03.2"), Oracle: source("v25.03.2", "1480c4f176f229dc3c5cd1a0fdc7a24a438b4928", "d512fda2bffad6df5a13c1b5f4809f6a9dd7b70d"), Carriers: []string{"RHEL Fast Datapath"}},
	{Version: MustVersion("25.03.3"), Oracle: source("v25.03.3", "f6031b7e0319e2747d35bc70be3be9b7c7354cbb", "f65acb885a699d5c528cf79773c46bc00e30f97d"), Carriers: []string{"RHEL Fast Datapath"}},
	{Version: MustVersion("25.09.0"), Oracle: source("v25.09.0", "8890abf5a25b7b67f08aca8917c1d00cf2296a56", "852f07e5251c6a0c0d5c43dc980d12a4f1bcd370")},
	{Version: MustVersion("25.09.1"), Oracle: source("v25.09.1", "e20dcfd6052ccef9692ca28edfd6ca8a09c5774f", "2e7d3ea0d0cade43da9156646cf8260f454431e8")},
	{Version: MustVersion("25.09.2"), Oracle: source("v25.09.2", "e3e0587865d8f02d0a8f72de53b82e464c5029d8", "296465ccd16e431dce703c9e7537d04ff0992b08"), Carriers: []string{"Fedora 43/44", "RHEL Fast Datapath", "ovn-kubernetes image"}},
	{Version: MustVersion("25.09.3"), Oracle: source("v25.09.3", "a9714cd706f22bd6aca29795af70d22b745ceb39", "da6b84d691593e57951bcc5f2f916336c6e0d5cc")},
	{Version: MustVersion("25.09.4"), Oracle: source("v25.09.4", "91047c65bc3743a365f186529edffa24f2cd3b9a", "da6b84d691593e57951bcc5f2f916336c6e0d5cc")},
	{Version: MustVersion("26.03.0"), Oracle: source("v26.03.0", "0117988c0a9ebafd3b81befcf8ec8cc170276858", "bdb95cc1920d4ab66fe062a9470eeb33a51d33e2"), Carriers: []string{"Ubuntu 26.04"}},
	{Version: MustVersion("26.03.1"), Oracle: debian("sid", "26.03.1-1"), Carriers: []string{"Debian sid (late 2026)"}},
	{Version: MustVersion("26.03.2"), Oracle: source("v26.03.2", "3facc3b5e99ba2c863ec5f47f37466397f735802", "bdb95cc1920d4ab66fe062a9470eeb33a51d33e2")},
	{Version: MustVersion("26.09.0"), Oracle: debian("experimental", "26.09.0-1"), Carriers: []string{"Debian experimental (late 2026)"}},
}

func init() {
	for i, r := range verified {
		b := branchOf(r.Version)
		if b == nil {
			panic("release: " + r.Version.String() + " is on no known branch")
		}
		r.attach(b)
		if i > 0 && verified[i-1].Version.Compare(r.Version) >= 0 {
			panic("release: verified versions out of order at " + r.Version.String())
		}
	}
}

func (r *Release) attach(b *Branch) {
	r.branch, r.NBSchema, r.SBSchema, r.LTS = b, b.NBSchema, b.SBSchema, b.LTS
}

func branchOf(v Version) *Branch {
	for _, b := range branches {
		if b.Series == v.Series() {
			return b
		}
	}
	return nil
}

// All returns the verified versions, oldest first.
func All() []*Release { return append([]*Release(nil), verified...) }

// Branches returns the series aclc knows, oldest first.
func Branches() []*Branch { return append([]*Branch(nil), branches...) }

// OnBranch returns the verified versions of series s, oldest first.
func OnBranch(s Version) []*Release {
	var out []*Release
	for _, r := range verified {
		if r.Version.Series() == s.Series() {
			out = append(out, r)
		}
	}
	return out
}

// Default is the version a fixture is compiled for when neither
// --ovn-version nor its `ovn:` key says: the newest verified version of the
// newest LTS series.
func Default() *Release {
	var d *Release
	for _, r := range verified {
		if r.LTS {
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

// Verified reports whether the version's own northd made goldens (else it
// is computed from the facts).
func (r *Release) Verified() bool { return r.Oracle != nil }

// Base is the verified release r is (r itself), or for a computed
// version, or one with facts overridden, the verified version it stands
// for — nil when there is none.
func (r *Release) Base() *Release {
	for _, v := range verified {
		if v.Version == r.Version {
			return v
		}
	}
	return nil
}

// With returns a copy of r that has fact f (on) or lacks it, whatever its
// version says: for tests that pin a since-point from both sides.
func (r *Release) With(f *Fact, on bool) *Release {
	c := *r
	c.overrides = map[*Fact]bool{}
	for k, v := range r.overrides {
		c.overrides[k] = v
	}
	c.overrides[f] = on
	return &c
}

// Supported lists the versions aclc vouches for, by series: "23.03.1,
// 24.03.0–24.03.9, ...", for error messages.
func Supported() string {
	var parts []string
	for _, b := range branches {
		on := OnBranch(b.Series)
		switch len(on) {
		case 0:
		case 1:
			parts = append(parts, on[0].Name())
		default:
			parts = append(parts, on[0].Name()+"–"+on[len(on)-1].Name())
		}
	}
	return strings.Join(parts, ", ")
}

// UnknownReleaseError is a version or series aclc cannot vouch for: an
// unknown series, a patch newer than the newest verified of its branch,
// or one older than the oldest.
type UnknownReleaseError struct {
	Name string
	// Nearest are the nearest versions aclc supports.
	Nearest []*Release
	why     string
}

func (e *UnknownReleaseError) Error() string {
	var near []string
	for _, r := range e.Nearest {
		near = append(near, r.Name())
	}
	msg := fmt.Sprintf("OVN %s: %s", e.Name, e.why)
	if len(near) > 0 {
		msg += "; nearest supported: " + strings.Join(near, ", ")
	}
	return msg + " (supported: " + Supported() + "; pin one with --ovn-version)"
}

// nearest returns the verified versions just below and above v.
func nearest(v Version) []*Release {
	var lo, hi *Release
	for _, r := range verified {
		if r.Version.Compare(v) < 0 {
			lo = r
		} else if hi == nil && r.Version.Compare(v) > 0 {
			hi = r
		}
	}
	var out []*Release
	for _, r := range []*Release{lo, hi} {
		if r != nil {
			out = append(out, r)
		}
	}
	return out
}

var (
	computedMu sync.Mutex
	computed   = map[Version]*Release{}
)

// Lookup finds a release by its exact version ("25.03.3") or its series
// ("25.03": the newest verified version of that branch), with or without a
// leading "v". A version between the oldest and the newest verified of its
// branch that is not verified itself is computed from the facts (its
// Oracle is nil). Anything else is an *UnknownReleaseError naming the
// nearest supported versions.
func Lookup(name string) (*Release, error) {
	v, err := ParseVersion(strings.TrimSpace(name))
	if err != nil {
		return nil, &UnknownReleaseError{Name: strings.TrimSpace(name), why: "not a version (want MAJOR.MINOR or MAJOR.MINOR.PATCH, e.g. 26.03 or 26.03.1)"}
	}
	return lookup(v)
}

func lookup(v Version) (*Release, error) {
	on := OnBranch(v.Series())
	if len(on) == 0 {
		return nil, &UnknownReleaseError{Name: v.String(), Nearest: nearest(v), why: "aclc knows no version of series " + v.Series().String()}
	}
	if v.IsSeries() {
		return on[len(on)-1], nil
	}
	if i := slices.IndexFunc(on, func(r *Release) bool { return r.Version == v }); i >= 0 {
		return on[i], nil
	}
	oldest, newest := on[0], on[len(on)-1]
	switch {
	case v.Compare(newest.Version) > 0:
		return nil, &UnknownReleaseError{Name: v.String(), Nearest: nearest(v),
			why: fmt.Sprintf("newer than %s, the newest %s aclc has verified against its northd (patch releases change the ACL flows)", newest.Name(), v.Series())}
	case v.Compare(oldest.Version) < 0:
		return nil, &UnknownReleaseError{Name: v.String(), Nearest: nearest(v),
			why: fmt.Sprintf("older than %s, the oldest %s aclc has verified against its northd", oldest.Name(), v.Series())}
	}
	computedMu.Lock()
	defer computedMu.Unlock()
	if r := computed[v]; r != nil {
		return r, nil
	}
	r := &Release{Version: v}
	r.attach(branchOf(v))
	computed[v] = r
	return r, nil
}

// UnknownSchemaError is an NB schema version that no known series has.
type UnknownSchemaError struct{ Version string }

func (e *UnknownSchemaError) Error() string {
	var known []string
	for _, b := range branches {
		known = append(known, fmt.Sprintf("%s (NB schema %s)", b.Series, b.NBSchema))
	}
	return fmt.Sprintf("NB schema version %s belongs to no OVN series aclc supports (%s); "+
		"use --ovn-version to compile for one of them anyway", e.Version, strings.Join(known, ", "))
}

// ByNBSchema finds the newest verified version of the series whose NB
// schema has version v ("7.18.0").
func ByNBSchema(v string) (*Release, error) {
	for _, b := range branches {
		if b.NBSchema == v {
			return lookup(b.Series)
		}
	}
	return nil, &UnknownSchemaError{Version: v}
}

// UnknownSBSchemaError is an SB schema version that no known series has.
type UnknownSBSchemaError struct{ Version string }

func (e *UnknownSBSchemaError) Error() string {
	var known []string
	for _, b := range branches {
		known = append(known, fmt.Sprintf("%s (SB schema %s)", b.Series, b.SBSchema))
	}
	return fmt.Sprintf("SB schema version %s belongs to no OVN series aclc supports (%s)", e.Version, strings.Join(known, ", "))
}

// BySBSchema finds the newest verified version of the series whose SB
// schema has version v ("21.8.0").
func BySBSchema(v string) (*Release, error) {
	for _, b := range branches {
		if b.SBSchema == v {
			return lookup(b.Series)
		}
	}
	return nil, &UnknownSBSchemaError{Version: v}
}

// MustLookup is Lookup for names known to be supported (tests, tools).
func MustLookup(name string) *Release {
	r, err := Lookup(name)
	if err != nil {
		panic(err)
	}
	return r
}

// Distinct returns one verified version — the newest — for each behaviour
// aclc distinguishes: each series (its stage layout and schemas) times
// each set of facts. Tests of aclc's own logic (the incremental engine,
// the shared compile, the fuzzers) run once per entry; tests against an
// oracle run every version.
func Distinct() []*Release {
	type key struct {
		series Version
		facts  string
	}
	idx := map[key]int{}
	var out []*Release
	for _, r := range verified {
		b := make([]byte, len(facts))
		for i, f := range facts {
			if r.Has(f) {
				b[i] = 1
			}
		}
		k := key{r.Version.Series(), string(b)}
		if i, ok := idx[k]; ok {
			out[i] = r // newest of its kind
			continue
		}
		idx[k] = len(out)
		out = append(out, r)
	}
	return out
}

// Equal reports whether r and o are the same version with the same facts
// (go-cmp uses it to compare values that hold releases).
func (r *Release) Equal(o *Release) bool {
	if r == nil || o == nil {
		return r == o
	}
	if r.Version != o.Version || len(r.overrides) != len(o.overrides) {
		return false
	}
	for f, on := range r.overrides {
		if v, ok := o.overrides[f]; !ok || v != on {
			return false
		}
	}
	return true
}
