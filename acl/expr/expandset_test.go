package expr

import (
	"strings"
	"testing"
)

// TestExpandSet checks the exported expansion: references replaced by
// their members as OVN reads them (an address set entry's first token,
// non-integers skipped; port group ports as strings), constants kept in
// order, and the errors of a missing reference or resolver.
func TestExpandSet(t *testing.T) {
	r := MapResolver{
		AddressSets: map[string][]string{"as": {"10.0.0.2", "10.0.0.0/8 extra", "not-an-address"}},
		PortGroups:  map[string][]string{"pg": {"lsp1", "lsp2"}},
	}
	for _, tc := range []struct{ match, want string }{
		{`ip4.src == {1.2.3.4, $as}`, `1.2.3.4 10.0.0.0/8 10.0.0.2`},
		{`ip4.src == $as`, `10.0.0.0/8 10.0.0.2`},
		{`inport == {@pg, "lsp3"}`, `"lsp1" "lsp2" "lsp3"`},
		{`tcp.dst == {80, 443}`, `80 443`},
	} {
		e, err := Parse(tc.match, r)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := ExpandSet(r, e.Root.(*Cmp).Values)
		if err != nil {
			t.Fatalf("%s: %v", tc.match, err)
		}
		var got []string
		for _, c := range cs {
			got = append(got, c.Text)
		}
		if g := strings.Join(got, " "); g != tc.want {
			t.Errorf("%s: got %s, want %s", tc.match, g, tc.want)
		}
	}
	e, err := Parse(`ip4.src == $as`, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ExpandSet(nil, e.Root.(*Cmp).Values); err == nil {
		t.Error("no resolver: no error")
	}
	if _, err := ExpandSet(MapResolver{}, e.Root.(*Cmp).Values); err == nil {
		t.Error("missing address set: no error")
	}
}
