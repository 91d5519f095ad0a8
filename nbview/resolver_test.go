package nbview_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbview"
)

func TestSnapshotResolver(t *testing.T) {
	snap, err := nbschema.ParseFixture("t.yaml", []byte(`
address_sets:
  - {name: as1, addresses: ["10.0.0.1"]}
switches:
  - name: sw0
    ports:
      - {name: p1, addresses: ["00:00:00:00:00:01 10.0.0.1 fe80::1"]}
  - name: sw1
    ports:
      - {name: p2, addresses: ["00:00:00:00:00:02 10.0.0.2"]}
port_groups:
  - {name: pg, ports: [p1]}
  - {name: pg_empty}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dp   string
		want expr.MapResolver
	}{
		{"sw0", expr.MapResolver{
			AddressSets: map[string][]string{"as1": {"10.0.0.1"}, "pg_ip4": {"10.0.0.1"}, "pg_ip6": {"fe80::1"}, "pg_empty_ip4": nil, "pg_empty_ip6": nil, "svc_monitor_mac": nil},
			PortGroups:  map[string][]string{"pg": {"p1"}},
			Ports:       map[string]bool{"p1": true},
		}},
		{"sw1", expr.MapResolver{
			AddressSets: map[string][]string{"as1": {"10.0.0.1"}, "pg_ip4": {"10.0.0.1"}, "pg_ip6": {"fe80::1"}, "pg_empty_ip4": nil, "pg_empty_ip6": nil, "svc_monitor_mac": nil},
			PortGroups:  map[string][]string{},
			Ports:       map[string]bool{"p2": true},
		}},
	} {
		got, err := nbview.New(snap).Resolver(tc.dp)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("resolver for %s (-want +got):\n%s", tc.dp, d)
		}
	}
	r, _ := nbview.New(snap).Resolver("sw1")
	if _, err := expr.Parse("outport == @pg", r); err == nil {
		t.Errorf("@pg resolved on sw1, where it has no ports")
	}
	if _, err := expr.Parse("ip4.src == $pg_empty_ip4", r); err != nil {
		t.Errorf("$pg_empty_ip4: %v", err)
	}
	if _, err := nbview.New(snap).Resolver("nosuch"); err == nil {
		t.Errorf("unknown datapath accepted")
	}
}
