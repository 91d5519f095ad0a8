package nbschema

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gopkg.in/yaml.v3"

	"github.com/aclc/aclc/nbschema/nbdb"
)

const fullFixture = "testdata/full.yaml"

// snapshotCmp compares Snapshots by content: Origin is where a row came
// from, not what it is, and OVSDB does not tell an empty map from none.
var snapshotCmp = []cmp.Option{
	cmpopts.IgnoreFields(Snapshot{}, "Origin", "Positions", "Release", "ReleaseFrom"),
	cmpopts.EquateEmpty(),
}

// uuidOf returns the UUID of the only row of rows whose name is name.
func uuidOf[T any](t *testing.T, rows map[string]T, name func(T) string, want string) string {
	t.Helper()
	var found []string
	for u, r := range rows {
		if name(r) == want {
			found = append(found, u)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d rows named %q, want 1", len(found), want)
	}
	return found[0]
}

func TestParseFullFixture(t *testing.T) {
	s, err := LoadFixture(fullFixture)
	if err != nil {
		t.Fatal(err)
	}
	sw := func(r *nbdb.LogicalSwitch) string { return r.Name }
	port := func(r *nbdb.LogicalSwitchPort) string { return r.Name }
	sw0 := s.Switches[uuidOf(t, s.Switches, sw, "sw0")]
	sw1 := s.Switches[uuidOf(t, s.Switches, sw, "sw1")]
	if sw0.UUID != "6f0c6a4e-1d0b-4c55-9a52-0d3c1b7e0001" {
		t.Errorf("sw0 uuid %s, want the fixture's", sw0.UUID)
	}
	if sw1.UUID != DerivedUUID(nbdb.LogicalSwitchTable, "sw1") {
		t.Errorf("sw1 uuid %s, want the derived %s", sw1.UUID, DerivedUUID(nbdb.LogicalSwitchTable, "sw1"))
	}
	lb0 := uuidOf(t, s.LoadBalancers, func(r *nbdb.LoadBalancer) string { return r.Name }, "lb0")
	lb1 := uuidOf(t, s.LoadBalancers, func(r *nbdb.LoadBalancer) string { return r.Name }, "lb1")
	g0 := uuidOf(t, s.LBGroups, func(r *nbdb.LoadBalancerGroup) string { return r.Name }, "g0")
	copp0 := uuidOf(t, s.Copps, func(r *nbdb.Copp) string { return r.Name }, "copp0")
	p1 := s.Ports[uuidOf(t, s.Ports, port, "p1")]
	p2 := uuidOf(t, s.Ports, port, "p2")
	q1 := uuidOf(t, s.Ports, port, "q1")
	pg1 := s.PortGroups[uuidOf(t, s.PortGroups, func(r *nbdb.PortGroup) string { return r.Name }, "pg1")]
	net1 := DerivedUUID(nbdb.DHCPOptionsTable, "net1")
	dns0 := DerivedUUID(nbdb.DNSTable, "dns0")

	checks := []struct {
		what      string
		got, want any
	}{
		{"sw0 load_balancer", sw0.LoadBalancer, []string{lb0}},
		{"sw0 load_balancer_group", sw0.LoadBalancerGroup, []string{g0}},
		{"sw0 copp", *sw0.Copp, copp0},
		{"sw0 dns_records", sw0.DNSRecords, []string{dns0}},
		{"sw0 ports", len(sw0.Ports), 4},
		{"sw0 acls", len(sw0.ACLs), 3},
		{"sw1 acls (top-level list)", len(sw1.ACLs), 1},
		{"pg1 ports", pg1.Ports, slices.Sorted(slices.Values([]string{p1.UUID, p2, q1}))},
		{"pg1 acls (inline and top-level)", len(pg1.ACLs), 3},
		{"p1 dhcpv4", *p1.Dhcpv4Options, net1},
		{"p1 enabled", *p1.Enabled, true},
		{"g0 lbs", s.LBGroups[g0].LoadBalancer, slices.Sorted(slices.Values([]string{lb0, lb1}))},
		{"global option", s.GlobalOption("use_ct_inv_match"), "false"},
		{"meter bands", len(s.MeterBands), 3},
		{"routers", len(s.Routers), 2},
		{"router ports", len(s.RouterPorts), 3},
		{"static routes", len(s.StaticRoutes), 2},
		{"policies", len(s.Policies), 3},
		{"NAT rules", len(s.NATs), 2},
		{"gateway chassis", len(s.GatewayChassis), 1},
		{"static MAC bindings", len(s.StaticMACBindings), 1},
		{"acls", len(s.ACLs), 7},
	}
	for _, c := range checks {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.what, diff)
		}
	}
	var acl *nbdb.ACL
	for _, a := range s.ACLs {
		if a.Name != nil && *a.Name == "n1" {
			acl = a
		}
	}
	wantACL := &nbdb.ACL{UUID: acl.UUID, Direction: "from-lport", Priority: 1002, Match: "ip4 && tcp",
		Action: "allow-related", Log: true, Name: ptr("n1"), Severity: ptr("info"), Meter: ptr("m1"), Label: 5,
		Options:     map[string]string{"apply-after-lb": "true", "log-related": "true"},
		ExternalIDs: map[string]string{"owner": "test"}}
	if diff := cmp.Diff(wantACL, acl); diff != "" {
		t.Errorf("ACL n1 (-want +got):\n%s", diff)
	}

	// Every row has an Origin naming its place in the file.
	origin := regexp.MustCompile(`^testdata/full\.yaml:\d+:\d+$`)
	all := map[string]bool{s.Global.UUID: true}
	for _, keys := range [][]string{SortedKeys(s.Switches), SortedKeys(s.Ports), SortedKeys(s.PortGroups),
		SortedKeys(s.AddressSets), SortedKeys(s.ACLs), SortedKeys(s.LoadBalancers), SortedKeys(s.LBGroups),
		SortedKeys(s.Meters), SortedKeys(s.MeterBands), SortedKeys(s.Copps), SortedKeys(s.DHCPOptions),
		SortedKeys(s.DNS), SortedKeys(s.Routers), SortedKeys(s.RouterPorts), SortedKeys(s.StaticRoutes),
		SortedKeys(s.Policies), SortedKeys(s.NATs), SortedKeys(s.GatewayChassis), SortedKeys(s.StaticMACBindings)} {
		for _, k := range keys {
			all[k] = true
		}
	}
	for u := range all {
		if !origin.MatchString(s.Origin[u]) {
			t.Errorf("row %s: Origin %q", u, s.Origin[u])
		}
	}
	if len(s.Origin) != len(all) {
		t.Errorf("%d Origin entries for %d rows", len(s.Origin), len(all))
	}

	// The same fixture always yields the same UUIDs.
	again, err := LoadFixture(fullFixture)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s, again); diff != "" {
		t.Errorf("second parse differs (-first +second):\n%s", diff)
	}
}

func ptr[T any](v T) *T { return &v }

func TestParseScalarsAsStrings(t *testing.T) {
	s, err := ParseFixture("x.yaml", []byte("nb_global:\n  options: {use_ct_inv_match: false, n: 3}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"use_ct_inv_match": "false", "n": "3"}
	if diff := cmp.Diff(want, s.Global.Options); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
}

func TestParseIntegers(t *testing.T) {
	for in, want := range map[string]int{"010": 10, "0x10": 16, "0o10": 8, "+7": 7, `"12"`: 12} {
		s, err := ParseFixture("x.yaml", []byte("switches: [{name: s, acls: [{direction: to-lport, priority: "+in+", match: m, action: drop}]}]\n"))
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		for _, a := range s.ACLs {
			if a.Priority != want {
				t.Errorf("priority %s read as %d, want %d", in, a.Priority, want)
			}
		}
	}
}

func TestParseEmpty(t *testing.T) {
	for _, in := range []string{"", "# nothing\n", "{}\n", "switches: []\n"} {
		s, err := ParseFixture("x.yaml", []byte(in))
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if diff := cmp.Diff(NewSnapshot(), s, snapshotCmp...); diff != "" {
			t.Errorf("%q (-want +got):\n%s", in, diff)
		}
	}
}

// TestWriteFixtureRoundTrip writes every fixture in testdata (and the
// router fixtures) back out and parses it again: the snapshots must be
// equal.
func TestWriteFixtureRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../testdata/fixtures/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	mine, err := filepath.Glob("testdata/*.yaml")
	if err != nil || len(mine) == 0 {
		t.Fatalf("no fixtures in testdata: %v", err)
	}
	files = append(files, mine...)
	// the router fixtures: gateway chassis, HA chassis groups, routes
	routers, _ := filepath.Glob("../testdata/routers/*.yaml")
	files = append(files, routers...)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			s, err := LoadFixture(f)
			if err != nil {
				t.Fatalf("a bundled fixture does not load: %v", err)
			}
			var buf bytes.Buffer
			if err := WriteFixture(&buf, s); err != nil {
				t.Fatal(err)
			}
			back, err := ParseFixture("written.yaml", buf.Bytes())
			if err != nil {
				t.Fatalf("%v\n%s", err, buf.String())
			}
			if diff := cmp.Diff(s, back, snapshotCmp...); diff != "" {
				t.Errorf("round trip (-fixture +written):\n%s\n%s", diff, buf.String())
			}
			var again bytes.Buffer
			if err := WriteFixture(&again, back); err != nil {
				t.Fatal(err)
			}
			if buf.String() != again.String() {
				t.Errorf("writing is not stable:\n%s\n---\n%s", buf.String(), again.String())
			}
		})
	}
}

func TestWriteFixtureInexpressible(t *testing.T) {
	s, err := LoadFixture(fullFixture)
	if err != nil {
		t.Fatal(err)
	}
	sw0 := s.Switches["6f0c6a4e-1d0b-4c55-9a52-0d3c1b7e0001"]
	for _, sw := range s.Switches {
		if sw.Name == "sw1" {
			sw.Ports = append(sw.Ports, sw0.Ports[0])
		}
	}
	var buf bytes.Buffer
	err = WriteFixture(&buf, s)
	if err == nil || !regexp.MustCompile(`belongs to both switch sw0 and switch sw1`).MatchString(err.Error()) {
		t.Errorf("got %v, want a port-in-two-switches error", err)
	}
}

// TestDocExample keeps the example in docs/fixture-format.md valid.
func TestDocExample(t *testing.T) {
	doc, err := os.ReadFile("../docs/fixture-format.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## Example\n\n```yaml\n(.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("no example in docs/fixture-format.md")
	}
	if _, err := ParseFixture("fixture-format.md example", m[1]); err != nil {
		t.Error(err)
	}
}

// TestWriteFixtureChunks checks that writing a large fixture a chunk at a
// time gives exactly the text of one yaml.v3 document.
func TestWriteFixtureChunks(t *testing.T) {
	var in strings.Builder
	in.WriteString("switches:\n")
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&in, "  - name: sw%d\n    ports: [{name: p%d, addresses: [\"00:00:00:00:00:01 10.0.0.1\"]}]\n", i, i)
		fmt.Fprintf(&in, "    acls: [{direction: to-lport, priority: %d, match: \"ip4 && tcp.dst == %d\", action: drop}]\n", i, i)
	}
	in.WriteString("port_groups:\n  - name: big\n    acls:\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&in, "      - {direction: from-lport, priority: %d, match: \"inport == @big && ip4.src == 10.0.%d.%d\", action: allow-related}\n", i%32768, i/256, i%256)
	}
	s, err := ParseFixture("big.yaml", []byte(in.String()))
	if err != nil {
		t.Fatal(err)
	}
	var chunked bytes.Buffer
	if err := WriteFixture(&chunked, s); err != nil {
		t.Fatal(err)
	}
	var whole bytes.Buffer
	enc := yaml.NewEncoder(&whole)
	enc.SetIndent(2)
	if err := enc.Encode((&encoder{snap: s}).root()); err != nil {
		t.Fatal(err)
	}
	enc.Close()
	if chunked.String() != whole.String() {
		t.Errorf("chunked output differs from one document:\n%s", cmp.Diff(whole.String(), chunked.String()))
	}
}
