package trace

import "testing"

// TestFormatDHCPValue: a DHCP option's value prints as ovn-trace prints
// what OVN's lexer read (a set in braces, its members ", "-separated), and
// what the model cannot be sure OVN reads the same — an unknown option, a
// value of the wrong kind, a non-canonical number, unmasked 1-bits, a
// string with escapes — is refused, for the model to leave not traced.
func TestFormatDHCPValue(t *testing.T) {
	ok := []struct{ name, v, want string }{
		{"classless_static_route", "{169.254.169.254/32,192.0.2.2, 0.0.0.0/0,192.0.2.1}", "{169.254.169.254/32, 192.0.2.2, 0.0.0.0/0, 192.0.2.1}"},
		{"dns_server", "{10.0.0.2}", "{10.0.0.2}"},
		{"dns_server", "8.8.8.8", "8.8.8.8"},
		{"lease_time", "43200", "43200"},
		{"domain_name", `"openstacklocal"`, `"openstacklocal"`},
		{"tftp_server", `"boot.example"`, `"boot.example"`},
	}
	for _, c := range ok {
		if got, why := formatDHCPValue(dhcpv4OptionTypes, c.name, c.v); why != "" || got != c.want {
			t.Errorf("formatDHCPValue(%s, %q) = %q (%s), want %q", c.name, c.v, got, why, c.want)
		}
	}
	for _, c := range []struct{ name, v string }{
		{"no_such_option", "1"},
		{"domain_name", "openstacklocal"},
		{"domain_name", "1"},
		{"router", `"10.0.0.1"`},
		{"mtu", "01442"},
		{"mtu", "0x5a2"},
		{"router", "010.0.0.1"},
		{"classless_static_route", "{10.0.0.1/24, 10.0.0.254}"},
		{"domain_name", `"a\"b"`},
		{"dns_server", "{10.0.0.2"},
	} {
		if got, why := formatDHCPValue(dhcpv4OptionTypes, c.name, c.v); why == "" {
			t.Errorf("formatDHCPValue(%s, %q) = %q, want it refused", c.name, c.v, got)
		}
	}
	// put_nd_ra_opts(): IPv6 prefixes and addresses
	for _, c := range []struct{ name, v, want string }{
		{"prefix", "2001:db8:61::/64", "2001:db8:61::/64"},
		{"rdnss", "2001:db8::53", "2001:db8::53"},
		{"slla", "00:00:00:00:61:ff", "00:00:00:00:61:ff"},
		{"mtu", "1500", "1500"},
		{"addr_mode", `"slaac"`, `"slaac"`},
	} {
		if got, why := formatDHCPValue(ndRAOptionTypes, c.name, c.v); why != "" || got != c.want {
			t.Errorf("formatDHCPValue(%s, %q) = %q (%s), want %q", c.name, c.v, got, why, c.want)
		}
	}
	for _, c := range []struct{ name, v string }{
		{"prefix", "2001:db8:61::1/64"},
		{"prefix", "2001:DB8:61::/64"},
		{"prefix", "2001:db8:61::/129"},
		{"addr_mode", "slaac"},
	} {
		if got, why := formatDHCPValue(ndRAOptionTypes, c.name, c.v); why == "" {
			t.Errorf("formatDHCPValue(%s, %q) = %q, want it refused", c.name, c.v, got)
		}
	}
}
