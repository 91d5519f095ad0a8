package release

import (
	"errors"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	for name, want := range map[string]*Release{
		"23.03": OVN2303, "23.03.1": OVN2303, "v23.03.1": OVN2303,
		"25.03": OVN2503, "25.03.0": OVN2503,
		"26.03": OVN2603, "26.03.1": OVN2603, " 26.03.1 ": OVN2603,
	} {
		got, err := Lookup(name)
		if err != nil || got != want {
			t.Errorf("Lookup(%q) = %v, %v; want %v", name, got, err, want)
		}
	}
	for _, name := range []string{"", "26", "26.03.2", "24.03", "23.03.0", "x.y", "26.03.1.1", "26.-3", "26.+3"} {
		_, err := Lookup(name)
		var ue *UnknownReleaseError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "26.03.1 (NB schema 7.18.0)") {
			t.Errorf("Lookup(%q) = %v; want an UnknownReleaseError naming the supported releases", name, err)
		}
	}
}

func TestByNBSchema(t *testing.T) {
	for v, want := range map[string]*Release{"7.0.0": OVN2303, "7.11.0": OVN2503, "7.18.0": OVN2603} {
		if got, err := ByNBSchema(v); err != nil || got != want {
			t.Errorf("ByNBSchema(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	_, err := ByNBSchema("7.3.0")
	var se *UnknownSchemaError
	if !errors.As(err, &se) || se.Version != "7.3.0" {
		t.Fatalf("ByNBSchema(7.3.0) = %v", err)
	}
	for _, s := range []string{"7.3.0", "23.03.1", "25.03.0", "26.03.1", "--ovn-version"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not mention %q", err, s)
		}
	}
}

func TestBySBSchema(t *testing.T) {
	for v, want := range map[string]*Release{"20.27.0": OVN2303, "20.41.0": OVN2503, "21.8.0": OVN2603} {
		if got, err := BySBSchema(v); err != nil || got != want {
			t.Errorf("BySBSchema(%q) = %v, %v; want %v", v, got, err, want)
		}
	}
	_, err := BySBSchema("7.18.0")
	var se *UnknownSBSchemaError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "7.18.0") || !strings.Contains(err.Error(), "26.03.1 (SB schema 21.8.0)") {
		t.Fatalf("BySBSchema(7.18.0) = %v", err)
	}
}

func TestDefaultIsNewestLTS(t *testing.T) {
	if Default() != OVN2603 {
		t.Fatalf("Default() = %v, want 26.03.1", Default())
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

func TestFeatures(t *testing.T) {
	type row struct {
		f    Feature
		has  [3]bool // 23.03, 25.03, 26.03
		name string
	}
	for _, c := range []row{
		{ACLTier, [3]bool{false, true, true}, "tier"},
		{ACLPass, [3]bool{false, true, true}, "pass"},
		{RouterPortACL, [3]bool{false, true, true}, "enable_router_port_acl"},
		{ACLSample, [3]bool{false, true, true}, "sample_new"},
		{PersistEstablished, [3]bool{false, true, true}, "persist-established"},
		{StatelessACLWithLB, [3]bool{false, false, true}, "enable-stateless-acl-with-lb"},
		{NetworkFunction, [3]bool{false, false, true}, "network_function_group"},
		{ACLCtTranslation, [3]bool{false, false, true}, "acl_ct_translation"},
	} {
		for i, r := range All() {
			if r.Has(c.f) != c.has[i] {
				t.Errorf("%v.Has(%v) = %v", r, c.f, !c.has[i])
			}
			err := r.Check(c.f)
			if (err == nil) != c.has[i] {
				t.Errorf("%v.Check(%v) = %v", r, c.f, err)
			}
			if err != nil && !strings.Contains(err.Error(), c.f.Since().Series().String()) {
				t.Errorf("%v: %q does not name the release that introduced it", c.f, err)
			}
		}
		if !strings.Contains(c.f.Name(), c.name) {
			t.Errorf("%v: name %q lacks %q", c.f, c.f.Name(), c.name)
		}
	}
	if len(Features()) != int(numFeatures) {
		t.Fatal("Features() misses some")
	}
}
