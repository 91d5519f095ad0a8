package trace

import "testing"

// 26.09's network function actions: nf_learn_orig_inport(ipv6 = B) is
// printed and has no effect (its "=" is an argument, not a load);
// "R = nf_lookup_orig_inport()" is a miss, as in ovn-trace.
func TestParseNFOrigInportActions(t *testing.T) {
	as, err := parseActions("nf_learn_orig_inport(ipv6 = false); outport = \"nf-in\"; reg8[24] = nf_lookup_orig_inport(); next;")
	if err != nil {
		t.Fatal(err)
	}
	want := []actKind{aNoop, aLoad, aNFLookupOrigInport, aNext}
	if len(as) != len(want) {
		t.Fatalf("%d actions, want %d", len(as), len(want))
	}
	for i, a := range as {
		if a.kind != want[i] {
			t.Errorf("%q: kind %d, want %d", a.text, a.kind, want[i])
		}
	}
	if as[2].lhs != "reg8[24]" {
		t.Errorf("lookup loads %q, want reg8[24]", as[2].lhs)
	}
}
