package nbschema

import (
	"errors"
	"github.com/aclc/aclc/release"
	"strings"
	"testing"
)

// TestFixtureErrors checks that every kind of bad fixture is rejected with
// file:line:column, the field path and what is wrong.
func TestFixtureErrors(t *testing.T) {
	const sw = "switches:\n  - name: sw0\n    ports: [{name: p1}, {name: p2}]\n"
	tests := []struct {
		name string
		yaml string
		want string // one line of the error, exactly
	}{
		{"malformed yaml", "switches:\n  - name: [sw0\n", "x.yaml:1: invalid YAML: did not find expected ',' or ']'"},
		{"tab indentation", "switches:\n\t- name: sw0\n", "x.yaml:2: invalid YAML: found character that cannot start any token"},
		{"two documents", "switches: []\n---\nswitches: []\n", "x.yaml:2:1: a fixture is one YAML document; this is a second one"},
		{"top level not a mapping", "- a\n- b\n", "x.yaml:1:1: want a mapping, got a list"},
		{"unknown top-level key", "swiches: []\n", `x.yaml:1:1: swiches: unknown key "swiches" (want one of ovn, nb_global, switches, port_groups, address_sets, load_balancers, load_balancer_groups, meters, copps, dhcp_options, dns, routers, static_mac_bindings, mirrors, sample_collectors, sampling_apps, samples, network_function_health_checks, network_functions, network_function_groups, acls)`},
		{"unknown switch key", "switches:\n  - name: sw0\n    port: []\n", `x.yaml:3:5: switches[0].port: unknown key "port" (want one of uuid, name, other_config, external_ids, ports, acls, load_balancers, load_balancer_groups, dns_records, copp)`},
		{"unknown acl key", sw + "    acls:\n      - {direction: to-lport, priority: 1, match: ip4, action: drop, prio: 3}\n",
			`x.yaml:5:70: switches[0].acls[0].prio: unknown key "prio"`},
		{"duplicate key", "switches:\n  - name: sw0\n    name: sw1\n", "x.yaml:3:5: switches[0].name: duplicate key (first given at line 2)"},
		{"switches not a list", "switches: {name: sw0}\n", "x.yaml:1:11: switches: want a list, got a mapping"},
		{"switch without name", "switches:\n  - ports: []\n", "x.yaml:2:5: switches[0].name: missing (required)"},
		{"bad direction", sw + "    acls:\n      - {direction: ingress, priority: 1, match: ip4, action: drop}\n",
			`x.yaml:5:21: switches[0].acls[0].direction: "ingress" is not one of from-lport, to-lport`},
		{"bad action", sw + "    acls:\n      - {direction: to-lport, priority: 1, match: ip4, action: accept}\n",
			`x.yaml:5:64: switches[0].acls[0].action: "accept" is not one of allow, allow-related, allow-stateless, drop, reject, pass`},
		{"pass is 23.06", "ovn: \"23.03\"\n" + sw + "    acls:\n      - {direction: to-lport, priority: 1, match: ip4, action: pass}\n",
			`x.yaml:6:64: switches[0].acls[0].action: ACL action "pass" came in OVN 23.06; OVN 23.03.1 does not have it (the fixture is for OVN 23.03.1: its ovn: key)`},
		{"tier is 23.06", "ovn: 23.03.1\n" + sw + "    acls:\n      - {direction: to-lport, priority: 1, match: ip4, action: drop, tier: 1}\n",
			`x.yaml:6:76: switches[0].acls[0].tier: ACL column tier came in OVN 23.06; OVN 23.03.1 does not have it`},
		{"lport mirror is 25.09", "ovn: 25.03.3\nmirrors:\n  - {name: m1, type: lport, sink: p2, filter: both}\n",
			`x.yaml:3:22: mirrors[0].type: Mirror type "lport" (a switch port's mirror_rules mirroring to another port) came in OVN 25.09; OVN 25.03.3 does not have it (the fixture is for OVN 25.03.3: its ovn: key)`},
		{"mirror filter", "mirrors:\n  - {name: m1, type: lport, sink: p2, filter: in}\n",
			`x.yaml:2:47: mirrors[0].filter: "in" is not one of from-lport, to-lport, both`},
		{"dangling mirror", "switches:\n  - name: sw0\n    ports: [{name: p1, mirror_rules: [m9]}]\n",
			`x.yaml:3:39: switches[0].ports[0].mirror_rules[0]: no mirror named "m9"`},
		{"tier range", sw + "    acls:\n      - {direction: to-lport, priority: 1, match: ip4, action: drop, tier: 4}\n",
			`x.yaml:5:76: switches[0].acls[0].tier: 4 out of range 0..3`},
		{"unknown release", "ovn: \"24.09\"\n", `x.yaml:1:6: ovn: OVN 24.09: aclc knows no version of series 24.09; nearest supported: 24.03.9, 25.03.0`},
		{"bad severity", sw + "    acls:\n      - {direction: to-lport, priority: 1, match: ip4, action: drop, log: true, severity: error}\n",
			`x.yaml:5:91: switches[0].acls[0].severity: "error" is not one of alert, warning, notice, info, debug`},
		{"priority too high", sw + "    acls:\n      - {direction: to-lport, priority: 40000, match: ip4, action: drop}\n",
			"x.yaml:5:41: switches[0].acls[0].priority: 40000 out of range 0..32767"},
		{"priority negative", sw + "    acls:\n      - {direction: to-lport, priority: -1, match: ip4, action: drop}\n",
			"x.yaml:5:41: switches[0].acls[0].priority: -1 out of range 0..32767"},
		{"priority not a number", sw + "    acls:\n      - {direction: to-lport, priority: high, match: ip4, action: drop}\n",
			`x.yaml:5:41: switches[0].acls[0].priority: want an integer, got string "high"`},
		{"priority missing", sw + "    acls:\n      - {direction: to-lport, match: ip4, action: drop}\n",
			"x.yaml:5:9: switches[0].acls[0].priority: missing (required; 0..32767)"},
		{"match missing", sw + "    acls:\n      - {direction: to-lport, priority: 1, action: drop}\n",
			"x.yaml:5:9: switches[0].acls[0].match: missing (required)"},
		{"priority float", sw + "    acls:\n      - {direction: to-lport, priority: 1.5, match: ip4, action: drop}\n",
			"x.yaml:5:41: switches[0].acls[0].priority: want an integer, got float 1.5"},
		{"label not int", sw + "    acls:\n      - {direction: to-lport, priority: 1, match: ip4, action: drop, label: x}\n",
			`x.yaml:5:77: switches[0].acls[0].label: want an integer, got string "x"`},
		{"label too large", sw + "    acls:\n      - {direction: to-lport, priority: 1, match: ip4, action: drop, label: 4294967296}\n",
			"x.yaml:5:77: switches[0].acls[0].label: 4294967296 out of range 0..4294967295"},
		{"log not bool", sw + "    acls:\n      - {direction: to-lport, priority: 1, match: ip4, action: drop, log: yes}\n",
			`x.yaml:5:75: switches[0].acls[0].log: want true or false, got string "yes"`},
		{"acl name too long", sw + "    acls:\n      - {direction: to-lport, priority: 1, match: ip4, action: drop, name: " + strings.Repeat("n", 64) + "}\n",
			"x.yaml:5:76: switches[0].acls[0].name: 64 characters, at most 63 allowed"},
		{"acl meter missing", sw + "    acls:\n      - {direction: to-lport, priority: 1, match: ip4, action: drop, log: true, meter: m9}\n",
			`x.yaml:5:88: switches[0].acls[0].meter: no meter named "m9" (none defined)`},
		{"options not a map", sw + "    acls:\n      - {direction: to-lport, priority: 1, match: ip4, action: drop, options: [a]}\n",
			"x.yaml:5:79: switches[0].acls[0].options: want a mapping of strings, got a list"},
		{"top-level acl on missing port group", sw + "acls:\n  - {port_group: pg9, direction: to-lport, priority: 1, match: ip4, action: drop}\n",
			`x.yaml:5:18: acls[0].port_group: no port group named "pg9" (none defined)`},
		{"top-level acl on missing switch", sw + "acls:\n  - {switch: sw9, direction: to-lport, priority: 1, match: ip4, action: drop}\n",
			`x.yaml:5:14: acls[0].switch: no switch named "sw9" (defined: sw0)`},
		{"top-level acl without owner", "acls:\n  - {direction: to-lport, priority: 1, match: ip4, action: drop}\n",
			"x.yaml:2:5: acls[0]: a top-level ACL needs switch: or port_group: naming its owner"},
		{"port group with unknown port", sw + "port_groups:\n  - {name: pg1, ports: [p1, p9]}\n",
			`x.yaml:5:29: port_groups[0].ports[1]: no switch port named "p9" (defined: p1, p2)`},
		{"port group lists a port twice", sw + "port_groups:\n  - {name: pg1, ports: [p1, p1]}\n",
			`x.yaml:5:29: port_groups[0].ports[1]: "p1" already listed at port_groups[0].ports[0]`},
		{"duplicate port group", "port_groups:\n  - {name: pg1}\n  - {name: pg1}\n",
			`x.yaml:3:12: port_groups[1].name: duplicate port group name "pg1" (first defined at x.yaml:2:12)`},
		{"port in two switches", sw + "  - name: sw1\n    ports: [{name: p1}]\n",
			`x.yaml:5:20: switches[1].ports[0].name: duplicate switch port name "p1" (first defined at x.yaml:3:20)`},
		{"dangling load balancer", sw + "    load_balancers: [lb0]\n",
			`x.yaml:4:22: switches[0].load_balancers[0]: no load balancer named "lb0" (none defined)`},
		{"dangling lb group", sw + "    load_balancer_groups: [g0]\n",
			`x.yaml:4:28: switches[0].load_balancer_groups[0]: no load balancer group named "g0" (none defined)`},
		{"dangling lb in group", "load_balancer_groups: [{name: g0, load_balancers: [lb9]}]\n",
			`x.yaml:1:52: load_balancer_groups[0].load_balancers[0]: no load balancer named "lb9" (none defined)`},
		{"ambiguous lb name", "load_balancers: [{name: lb}, {name: lb, uuid: 00000000-0000-4000-8000-000000000001}]\n" + sw + "    load_balancers: [lb]\n",
			`x.yaml:5:22: switches[0].load_balancers[0]: load balancer name "lb" is ambiguous (2 rows): refer to it by uuid`},
		{"dangling copp", sw + "    copp: c9\n", `x.yaml:4:11: switches[0].copp: no copp named "c9" (none defined)`},
		{"copp with unknown meter", "copps: [{name: c0, meters: {reject: m9}}]\n", `x.yaml:1:37: copps[0].meters.reject: no meter named "m9" (none defined)`},
		{"dangling dns", sw + "    dns_records: [d0]\n", `x.yaml:4:19: switches[0].dns_records[0]: no dns entry named "d0" (none defined)`},
		{"dangling dhcp", "switches:\n  - name: sw0\n    ports: [{name: p1, dhcpv4_options: net9}]\n",
			`x.yaml:3:40: switches[0].ports[0].dhcpv4_options: no dhcp_options entry named "net9" (none defined)`},
		{"bad dhcp cidr", "dhcp_options: [{name: n, cidr: 10.0.0.0/33}]\n", `x.yaml:1:32: dhcp_options[0].cidr: "10.0.0.0/33" is not an IPv4 or IPv6 CIDR`},
		{"bad port type", "switches:\n  - name: sw0\n    ports: [{name: p1, type: patch}]\n",
			`x.yaml:3:30: switches[0].ports[0].type: "patch" is not one of , router, localnet, localport, l2gateway, vtep, external, virtual, remote, switch`},
		{"tag out of range", "switches:\n  - name: sw0\n    ports: [{name: p1, tag: 0}]\n",
			"x.yaml:3:29: switches[0].ports[0].tag: 0 out of range 1..4095"},
		{"meter without bands", "meters: [{name: m1, unit: pktps}]\n", "x.yaml:1:10: meters[0].bands: a meter needs at least one band"},
		{"meter bad unit", "meters: [{name: m1, unit: bps, bands: [{rate: 1}]}]\n", `x.yaml:1:27: meters[0].unit: "bps" is not one of kbps, pktps`},
		{"band rate zero", "meters: [{name: m1, unit: kbps, bands: [{rate: 0}]}]\n", "x.yaml:1:48: meters[0].bands[0].rate: 0 out of range 1..4294967295"},
		{"lb bad protocol", "load_balancers: [{name: lb0, protocol: icmp}]\n", `x.yaml:1:40: load_balancers[0].protocol: "icmp" is not one of tcp, udp, sctp`},
		{"bad uuid", "address_sets: [{name: a, uuid: 1234}]\n", `x.yaml:1:32: address_sets[0].uuid: "1234" is not a UUID in lower-case 8-4-4-4-12 form`},
		{"duplicate uuid", "address_sets:\n  - {name: a, uuid: 00000000-0000-4000-8000-000000000001}\n  - {name: b, uuid: 00000000-0000-4000-8000-000000000001}\n",
			"x.yaml:3:21: address_sets[1].uuid: uuid 00000000-0000-4000-8000-000000000001 already used by the Address_Set row at x.yaml:2:5"},
		{"router port without networks", "routers: [{name: lr0, ports: [{name: lrp0, mac: \"00:00:00:00:00:01\"}]}]\n",
			"x.yaml:1:31: routers[0].ports[0].networks: a router port needs at least one network (e.g. 10.0.0.1/24)"},
		{"string map value is a list", "nb_global: {options: {a: [1]}}\n", "x.yaml:1:26: nb_global.options.a: want a string value, got a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseFixture("x.yaml", []byte(tt.yaml))
			if err == nil {
				t.Fatalf("ParseFixture succeeded, want error %q", tt.want)
			}
			var fe FixtureErrors
			if !errors.As(err, &fe) {
				t.Fatalf("error is %T, want FixtureErrors: %v", err, err)
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				if strings.HasPrefix(line, tt.want) {
					return
				}
			}
			t.Errorf("error\n%v\nhas no line starting with\n%s", err, tt.want)
		})
	}
}

// TestFixtureRelease: the release is --ovn-version, else the ovn: key,
// else the newest LTS; a feature is checked against the one that wins.
func TestFixtureRelease(t *testing.T) {
	const tiered = "switches:\n  - name: sw0\n    acls:\n      - {direction: to-lport, priority: 1, match: ip4, action: pass, tier: 2}\n"
	for _, tt := range []struct {
		yaml     string
		override *release.Release
		want     *release.Release
		err      string
	}{
		{tiered, nil, release.Default(), ""},
		{"ovn: \"25.03\"\n" + tiered, nil, release.MustLookup("25.03.3"), ""},
		{"ovn: 25.03.0\n" + tiered, nil, release.MustLookup("25.03.0"), ""},
		{"ovn: \"23.03\"\n" + tiered, release.MustLookup("26.03.1"), release.MustLookup("26.03.1"), ""},
		{tiered, release.MustLookup("23.03.1"), nil, "x.yaml:4:64: switches[0].acls[0].action: ACL action \"pass\" came in OVN 23.06; OVN 23.03.1 does not have it (the fixture is for OVN 23.03.1: --ovn-version)\n" +
			"x.yaml:4:76: switches[0].acls[0].tier: ACL column tier came in OVN 23.06; OVN 23.03.1 does not have it (the fixture is for OVN 23.03.1: --ovn-version)"},
	} {
		s, err := ParseFixtureWith("x.yaml", []byte(tt.yaml), FixtureOptions{Release: tt.override})
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%q for %v: got %v, want\n%s", tt.yaml, tt.override, err, tt.err)
			}
			continue
		}
		if err != nil || s.Release != tt.want {
			t.Errorf("%q for %v: %v, %v; want release %v", tt.yaml, tt.override, s, err, tt.want)
			continue
		}
		for _, a := range s.ACLs {
			if a.Tier != 2 || a.Action != "pass" {
				t.Errorf("ACL %+v", a)
			}
		}
	}
}

// TestFixtureErrorsAll checks that one pass reports every problem, in
// file order, not just the first.
func TestFixtureErrorsAll(t *testing.T) {
	_, err := ParseFixture("x.yaml", []byte("switches:\n  - name: sw0\n    acls:\n"+
		"      - {direction: up, priority: 1, match: ip4, action: drop}\n"+
		"      - {direction: to-lport, priority: 99999, match: ip4, action: drop}\n"))
	want := `x.yaml:4:21: switches[0].acls[0].direction: "up" is not one of from-lport, to-lport` + "\n" +
		"x.yaml:5:41: switches[0].acls[1].priority: 99999 out of range 0..32767"
	if err == nil || err.Error() != want {
		t.Errorf("got\n%v\nwant\n%s", err, want)
	}
}
