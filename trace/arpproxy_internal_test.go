package trace

import (
	"slices"
	"testing"
)

// TestParseARPProxy: an arp_proxy option is read as northd's
// parse_and_store_addresses reads it — from 23.06 a leading MAC then
// addresses and networks (printed ADDR/PLEN), or addresses alone; before
// it addresses alone, so a leading MAC gives no proxy — and what the
// scanf-based parser may read differently (leading zeros, a dotted
// netmask, text glued to an address) is reported inexact, for the model
// to leave not traced.
func TestParseARPProxy(t *testing.T) {
	cases := []struct {
		opt               string
		responder         bool
		mac               string
		ip4               []string
		ip6, valid, exact bool
	}{
		{"0a:58:a9:fe:01:01 169.254.1.1 fe80::1 10.244.0.0/16", true, "0a:58:a9:fe:01:01", []string{"169.254.1.1/32", "10.244.0.0/16"}, true, true, true},
		{"0A:58:A9:FE:1:1", true, "0a:58:a9:fe:01:01", nil, false, true, true},
		{"169.254.1.1 10.0.0.0/8", true, "", []string{"169.254.1.1/32", "10.0.0.0/8"}, false, true, true},
		{"169.254.1.1 0a:58:a9:fe:01:01 10.0.0.1", true, "", []string{"169.254.1.1/32"}, false, true, true},
		{"0a:58:a9:fe:01:01 169.254.1.1", false, "", nil, false, false, true},
		{"169.254.1.1 10.0.0.0/8", false, "", []string{"169.254.1.1", "10.0.0.0"}, false, true, true},
		{"fe80::1", false, "", nil, true, true, true},
		{"010.0.0.1", true, "", nil, false, false, false},
		{"10.0.0.0/255.0.0.0", true, "", nil, false, false, false},
		{"10.0.0.1,10.0.0.2", true, "", nil, false, false, false},
		{"0a:58:a9:fe:01:01x 10.0.0.1", true, "0a:58:a9:fe:01:01", nil, false, true, false},
	}
	for _, c := range cases {
		px, valid, exact := parseARPProxy(c.opt, c.responder)
		if valid != c.valid || exact != c.exact || (exact && (px.mac != c.mac || !slices.Equal(px.ip4, c.ip4) || px.ip6 != c.ip6)) {
			t.Errorf("parseARPProxy(%q, %v) = %+v valid %v exact %v, want mac %q ip4 %v ip6 %v valid %v exact %v",
				c.opt, c.responder, px, valid, exact, c.mac, c.ip4, c.ip6, c.valid, c.exact)
		}
	}
}
