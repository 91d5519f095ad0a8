package nbschema

import (
	"strings"
	"testing"

	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// A vtap-mode group and a network function without outport (NB schema
// 7.19.0) are 26.09's: a fixture for 26.03 using them is an error at each
// use naming the release that introduced them; for 26.09 they load.
func TestFixtureNFVtap(t *testing.T) {
	const fx = `network_functions:
  - {name: nf-tap, id: 1, inport: tap}
network_function_groups:
  - {name: g, id: 1, mode: vtap, network_functions: [nf-tap]}
switches:
  - name: sw0
    ports:
      - {name: tap}
`
	_, err := ParseFixtureWith("x.yaml", []byte(fx), FixtureOptions{Release: mustRelease(t, "26.03.2")})
	for _, want := range []string{"x.yaml:2:5: network_functions[0].outport: ", "x.yaml:4:28: network_function_groups[0].mode: ", "came in OVN 26.09; OVN 26.03.2 does not have it"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("26.03.2: err = %v, want it to say %q", err, want)
		}
	}
	s, err := ParseFixtureWith("x.yaml", []byte(fx), FixtureOptions{Release: mustRelease(t, "26.09.0")})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range s.NetworkFunctionGroups {
		if g.Mode != nbdb.NetworkFunctionGroupModeVtap {
			t.Errorf("mode = %q, want vtap", g.Mode)
		}
	}
	for _, nf := range s.NetworkFunctions {
		if nf.Outport != nil {
			t.Errorf("outport = %v, want none", *nf.Outport)
		}
	}
}

func mustRelease(t *testing.T, name string) *release.Release {
	t.Helper()
	r, err := release.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
