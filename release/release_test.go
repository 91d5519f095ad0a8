package release

import (
	"errors"
	"strings"
	"testing"
)

func mustLookup(t *testing.T, name string) *Release {
	t.Helper()
	r, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestLookup(t *testing.T) {
	for name, want := range map[string]string{
		"23.03": "23.03.1", "23.03.1": "23.03.1", "v23.03.1": "23.03.1",
		"24.03": "24.03.9", "24.03.6": "24.03.6",
		"25.03": "25.03.3", "25.03.0": "25.03.0",
		"25.09": "25.09.4",
		"26.03": "26.03.2", "26.03.1": "26.03.1", " 26.03.1 ": "26.03.1",
		"26.09": "26.09.0",
	} {
		got, err := Lookup(name)
		if err != nil || got.Name() != want || !got.Verified() {
			t.Errorf("Lookup(%q) = %v, %v; want verified %v", name, got, err, want)
		}
	}
	for name, want := range map[string]string{
		"26.03.3": "newer than 26.03.2", "25.09.5": "newer than 25.09.4",
		"24.09": "no version of series 24.09", "24.09.1": "no version of series 24.09",
		"23.03.0": "older than 23.03.1", "27.03.0": "no version of series 27.03",
		"": "not a version", "26": "not a version", "x.y": "not a version", "26.03.1.1": "not a version", "26.-3": "not a version",
	} {
		_, err := Lookup(name)
		var ue *UnknownReleaseError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--ovn-version") {
			t.Errorf("Lookup(%q) = %v; want an UnknownReleaseError saying %q", name, err, want)
		}
	}
	_, err := Lookup("24.09.1")
	if !strings.Contains(err.Error(), "nearest supported: 24.03.9, 25.03.0") {
		t.Errorf("Lookup(24.09.1) names the wrong neighbours: %v", err)
	}
}

// A version between two verified ones of its branch is computed from the
// facts; the same value every time.
func TestLookupComputed(t *testing.T) {
	saved := verified
	defer func() { verified = saved; computed = map[Version]*Release{} }()
	var gap []*Release
	for _, r := range saved {
		if r.Name() != "25.03.1" && r.Name() != "25.03.2" {
			gap = append(gap, r)
		}
	}
	verified = gap
	a, err := Lookup("25.03.2")
	if err != nil {
		t.Fatal(err)
	}
	if a.Verified() || a.Base() != nil || a.NBSchema != "7.11.0" || a.Name() != "25.03.2" {
		t.Errorf("computed 25.03.2 = %+v", a)
	}
	if b := mustLookup(t, "25.03.2"); b != a {
		t.Error("two lookups of a computed version give two values")
	}
}

func TestSince(t *testing.T) {
	s := At("25.09.0", "24.03.6", "25.03.1")
	for v, want := range map[string]bool{
		"23.03.1": false, "24.03.5": false, "24.03.6": true, "24.03.9": true,
		"24.09.3": false, "25.03.0": false, "25.03.1": true, "25.09.0": true,
		"26.03.0": true, "26.09.0": true,
	} {
		if got := s.Holds(MustVersion(v)); got != want {
			t.Errorf("Since(%s).Holds(%s) = %v", s, v, got)
		}
	}
	if s.String() != "24.03.6, 25.03.1, 25.09.0" || s.describe() != "OVN 25.09 (backported to 24.03.6, 25.03.1)" {
		t.Errorf("Since prints %q / %q", s.String(), s.describe())
	}
	if At("26.03.1").Holds(MustVersion("26.03.0")) || !At("26.03.1").Holds(MustVersion("26.09.0")) {
		t.Error("a patch since-point on the newest branch")
	}
	// backported in 24.03.2, reverted in 24.03.3; on main from 25.09.0
	iv := At("24.03.2..24.03.3", "25.09.0")
	for v, want := range map[string]bool{"24.03.1": false, "24.03.2": true, "24.03.3": false, "24.03.9": false, "25.03.3": false, "25.09.0": true} {
		if got := iv.Holds(MustVersion(v)); got != want {
			t.Errorf("Since(%s).Holds(%s) = %v", iv, v, got)
		}
	}
	if iv.String() != "24.03.2..24.03.3, 25.09.0" {
		t.Errorf("interval prints %q", iv)
	}
}

// Every fact's since-points are versions of known branches, and a patch
// since-point (x.y.N, N > 0) lies on a branch aclc verifies both sides of.
func TestFactsWellFormed(t *testing.T) {
	names := map[string]bool{}
	for _, f := range Facts() {
		if names[f.Name()] {
			t.Errorf("two facts named %s", f.Name())
		}
		names[f.Name()] = true
		for _, p := range f.Since().Points() {
			if branchOf(p) == nil {
				continue // a series aclc does not verify (23.06, 24.09): a date only
			}
			if p.Patch > 0 {
				prev := Version{p.Major, p.Minor, p.Patch - 1}
				if _, err := lookup(prev); err != nil {
					t.Errorf("%s: since-point %s, but %s is not supported (a since-point needs both sides verified)", f, p, prev)
				}
			}
			if end, ok := f.Since().Until(p); ok {
				// the end is verified, or newer than every verified
				// version of its branch (which aclc refuses anyway)
				on := OnBranch(end)
				if _, err := lookup(end); err != nil && len(on) > 0 && end.Compare(on[len(on)-1].Version) <= 0 {
					t.Errorf("%s: interval %s..%s, but %s is not supported", f, p, end, end)
				}
			}
		}
	}
}

func TestByNBSchema(t *testing.T) {
	for v, want := range map[string]string{"7.0.0": "23.03.1", "7.3.0": "24.03.9", "7.11.0": "25.03.3", "7.12.0": "25.09.4", "7.18.0": "26.03.2", "7.19.0": "26.09.0"} {
		if got, err := ByNBSchema(v); err != nil || got.Name() != want {
			t.Errorf("ByNBSchema(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	_, err := ByNBSchema("7.6.0")
	var se *UnknownSchemaError
	if !errors.As(err, &se) || se.Version != "7.6.0" {
		t.Fatalf("ByNBSchema(7.6.0) = %v", err)
	}
	for _, s := range []string{"7.6.0", "23.03", "26.09 (NB schema 7.19.0)", "--ovn-version"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}

func TestBySBSchema(t *testing.T) {
	for v, want := range map[string]string{"20.27.0": "23.03.1", "20.41.0": "25.03.3", "21.8.0": "26.03.2"} {
		if got, err := BySBSchema(v); err != nil || got.Name() != want {
			t.Errorf("BySBSchema(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	_, err := BySBSchema("7.18.0")
	var se *UnknownSBSchemaError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "7.18.0") || !strings.Contains(err.Error(), "26.03 (SB schema 21.8.0)") {
		t.Fatalf("BySBSchema(7.18.0) = %v", err)
	}
}

func TestDefaultIsNewestLTS(t *testing.T) {
	if d := Default(); d.Name() != "26.03.2" || !d.LTS || !d.Verified() {
		t.Fatalf("Default() = %v, want 26.03.2", d)
	}
}

// Detection from NB_Global options:northd_internal_version in every form,
// and from the schema alone.
func TestDetect(t *testing.T) {
	for _, c := range []struct {
		schema, northd, override string
		want, how, note, err     string
	}{
		{schema: "7.11.0", northd: "25.03.3-20.41.0-78.9", want: "25.03.3", how: "northd_internal_version 25.03.3-20.41.0-78.9"},
		{schema: "7.11.0", northd: "25.03.0-20.41.0-77.6", want: "25.03.0"},
		{schema: "7.3.0", northd: "24.03.9-20.33.0-73.5", want: "24.03.9"},
		{schema: "7.19.0", northd: "26.09.0-21.13.0-81.1", want: "26.09.0"},
		// newer patch than verified, other series, a development build
		{schema: "7.18.0", northd: "26.03.3-21.8.0-80.1", err: "newer than 26.03.2"},
		{schema: "7.6.0", northd: "24.09.3-20.37.0-75.1", err: "no version of series 24.09"},
		{schema: "7.19.0", northd: "26.09.90-21.13.0-81.1", err: "newer than 26.09.0"},
		// unknown suffix: only the version and SB schema are read
		{schema: "7.11.0", northd: "25.03.2-20.41.0-78.9-fdp.el9", want: "25.03.2"},
		{schema: "7.11.0", northd: "25.03.2-20.41.1-78.9", want: "25.03.2", note: "reports SB schema 20.41.1"},
		{schema: "7.11.0", northd: "25.03.2", want: "25.03.2"},
		{schema: "7.11.0", northd: "garbage", err: "want VERSION-SBSCHEMA"},
		{schema: "7.11.0", northd: "v25.03.2-20.41.0", err: "want VERSION-SBSCHEMA"},
		{schema: "7.11.0", northd: "25.03-20.41.0", err: "want VERSION-SBSCHEMA"},
		// schema and northd disagree
		{schema: "7.18.0", northd: "25.09.4-21.5.0-79.1", want: "25.09.4", note: "the NB's schema is 7.18.0"},
		// absent: the series of the schema, with a note
		{schema: "7.12.0", want: "25.09.4", how: "NB schema 7.12.0", note: "no ovn-northd has run on this NB"},
		{schema: "7.6.0", err: "NB schema version 7.6.0"},
		// --ovn-version
		{schema: "7.11.0", northd: "25.03.3-20.41.0-78.9", override: "25.03.3", want: "25.03.3"},
		{schema: "7.11.0", northd: "25.03.3-20.41.0-78.9", override: "25.03.0", want: "25.03.0", note: "overrides the NB's 25.03.3"},
		{schema: "7.18.0", northd: "26.03.3-21.8.0-80.1", override: "26.03.2", want: "26.03.2", note: "which aclc cannot use"},
		// no northd has run: an override of the schema's series is no disagreement, another series is
		{schema: "7.18.0", override: "26.03.1", want: "26.03.1"},
		{schema: "7.18.0", override: "25.09.4", want: "25.09.4", note: "overrides the NB's 26.03"},
	} {
		var o *Release
		if c.override != "" {
			o = mustLookup(t, c.override)
		}
		d, err := Detect(c.schema, c.northd, o)
		name := c.schema + "/" + c.northd + "/" + c.override
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", name, err, c.err)
			}
			continue
		}
		if err != nil || d.Release.Name() != c.want {
			t.Errorf("%s: %v, %v; want %s", name, d.Release, err, c.want)
			continue
		}
		if c.how != "" && !strings.Contains(d.How, c.how) {
			t.Errorf("%s: how %q, want %q", name, d.How, c.how)
		}
		notes := strings.Join(d.Notes, "\n")
		if c.note == "" && notes != "" || !strings.Contains(notes, c.note) {
			t.Errorf("%s: notes %q, want %q", name, notes, c.note)
		}
	}
}

func TestVersionOrder(t *testing.T) {
	order := []string{"23.03.1", "23.06", "23.06.0", "24.03.0", "25.03.0", "26.03", "26.03.1"}
	for i := 1; i < len(order); i++ {
		a, b := MustVersion(order[i-1]), MustVersion(order[i])
		if a.Compare(b) > 0 || b.Compare(a) < 0 {
			t.Errorf("%v should not sort after %v", a, b)
		}
	}
	if got := MustVersion("26.03.1").String(); got != "26.03.1" {
		t.Errorf("String = %q", got)
	}
	if got := MustVersion("v25.03").String(); got != "25.03" {
		t.Errorf("String = %q", got)
	}
}

func TestWith(t *testing.T) {
	r := mustLookup(t, "25.03.0")
	if r.Has(CommitInHint) {
		t.Fatal("25.03.0 has commit-in-hint")
	}
	w := r.With(CommitInHint, true)
	if !w.Has(CommitInHint) || r.Has(CommitInHint) || w.Base() != r || w.Verified() != r.Verified() {
		t.Error("With changes the original or loses the version")
	}
}
