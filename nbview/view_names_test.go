package nbview_test

import (
	"fmt"
	"testing"

	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
)

// TestCheckAddressSetMany checks the address-set name table on an NB with
// thousands of names of different lengths (the table's keys are packed
// into one string: a wrong cut would pass on a small fixture): every
// Address_Set name and every port group's _ip4/_ip6 resolves, and names
// that differ from one by a prefix, a suffix or one byte do not.
func TestCheckAddressSetMany(t *testing.T) {
	s := nbschema.NewSnapshot()
	var names []string
	for i := 0; i < 3000; i++ {
		name := fmt.Sprintf("as%0*d", 1+i%7, i)
		s.AddressSets[fmt.Sprintf("as-uuid-%d", i)] = &nbdb.AddressSet{UUID: fmt.Sprintf("as-uuid-%d", i), Name: name}
		names = append(names, name)
	}
	for i := 0; i < 700; i++ {
		name := fmt.Sprintf("pg_%d_ns%d", i, i*7)
		s.PortGroups[fmt.Sprintf("pg-uuid-%d", i)] = &nbdb.PortGroup{UUID: fmt.Sprintf("pg-uuid-%d", i), Name: name}
		names = append(names, name+"_ip4", name+"_ip6")
	}
	v := nbview.New(s)
	known := map[string]bool{}
	for _, n := range names {
		known[n] = true
	}
	for _, n := range names {
		if got := v.CheckAddressSet(n); got != nbview.RefOK {
			t.Fatalf("CheckAddressSet(%q) = %v, want RefOK", n, got)
		}
		for _, other := range []string{n[1:], n[:len(n)-1], n + "x", "x" + n, n[:len(n)-1] + "#"} {
			if known[other] {
				continue
			}
			if got := v.CheckAddressSet(other); got != nbview.NoSuchAddressSet {
				t.Fatalf("CheckAddressSet(%q) = %v, want NoSuchAddressSet", other, got)
			}
		}
	}
	// A port group's own name is not an address set.
	if got := v.CheckAddressSet("pg_1_ns7"); got != nbview.NoSuchAddressSet {
		t.Fatalf("CheckAddressSet(port group name) = %v, want NoSuchAddressSet", got)
	}
}
