package nbview_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

// TestSnapshotResolverOracle builds an NB with ovn-nbctl, lets the real
// ovn-northd 23.03 publish the Southbound, and checks that
// View.Resolver predicts exactly the SB Address_Set and per-datapath
// Port_Group rows that ovn-controller and ovn-trace resolve $ and @ names
// against. It also checks that an allow-stateless ACL's match reaches the
// SB verbatim, so the corpus oracle (raw Logical_Flow matches) is the ACL
// oracle too.
func TestSnapshotResolverOracle(t *testing.T) {
	for _, r := range testenv.LiveReleases(t) {
		t.Run(r.Name(), func(t *testing.T) { snapshotResolverOracle(t, r) })
	}
}

// snapshotResolverOracle is TestSnapshotResolverOracle with release rel's
// northd; from 23.06 the eval stage has a stateless ACL's match in
// parentheses (pre_acl's stateless filter still as written).
func snapshotResolverOracle(t *testing.T, rel *release.Release) {
	testenv.NeedRelease(t, rel)
	d := compile.Dialect(rel)
	parenthesized := rel.Version.Compare(release.MustVersion("23.06.0")) >= 0
	sb, err := ovnsandbox.Start(filepath.Join(t.TempDir(), "ovn"), ovnsandbox.Options{Release: rel})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	nbctl := func(args ...string) {
		t.Helper()
		if _, err := sb.NBCtl(ctx, args...); err != nil {
			t.Fatal(err)
		}
	}
	nbctl("ls-add", "sw0", "--", "ls-add", "sw1")
	nbctl("lsp-add", "sw0", "p1", "--", "lsp-set-addresses", "p1", "00:00:00:00:00:01 10.0.0.1 fe80::1", "unknown")
	nbctl("lsp-add", "sw0", "p2", "--", "lsp-set-addresses", "p2", "router")
	nbctl("lsp-add", "sw1", "p3", "--", "lsp-set-addresses", "p3", "00:00:00:00:00:03 10.0.1.3/24")
	nbctl("pg-add", "pg_both", "p1", "p3")
	nbctl("pg-add", "pg_sw1", "p3")
	nbctl("pg-add", "pg_none")
	nbctl("create", "Address_Set", "name=as1", `addresses=["10.0.0.1","10.2.0.0/16"]`)
	nbctl("create", "Address_Set", "name=as_empty")
	const match = `inport == @pg_both && ip4.src == $as1 && ip4.dst == $pg_sw1_ip4`
	nbctl("acl-add", "sw0", "from-lport", "1000", match, "allow-stateless")
	// A stateful ACL's match is wrapped as `... && (MATCH)', so unbalanced
	// parentheses that happen to pair up with the wrapper are accepted.
	nbctl("acl-add", "sw0", "to-lport", "1001", "ip4) && (tcp", "allow-related")
	if err := sb.Sync(ctx); err != nil {
		t.Fatal(err)
	}

	checkResolvers(t, ctx, sb, "sw0", "sw1")

	lflows, err := sb.SBCtl(ctx, "--bare", "--columns=match", "find", "Logical_Flow", "priority=2000")
	if err != nil {
		t.Fatal(err)
	}
	wrappedSeen := false
	for _, got := range nonEmptyLines(lflows) {
		switch {
		case got == match:
		case parenthesized && got == "("+match+")":
			wrappedSeen = true
		default:
			t.Errorf("allow-stateless ACL reached the SB as %q, want %q verbatim (or in parentheses from 23.06)", got, match)
		}
	}
	if parenthesized && !wrappedSeen {
		t.Errorf("OVN %s: no flow has the allow-stateless ACL's match in parentheses", rel)
	}
	wrapped, err := sb.SBCtl(ctx, "--bare", "--columns=match", "find", "Logical_Flow", "priority=2001")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range nonEmptyLines(wrapped) {
		if strings.HasSuffix(m, " && (ip4) && (tcp)") {
			found = true
			if _, err := d.Parse(m, nil); err != nil {
				t.Errorf("wrapped stateful ACL match %q: %v", m, err)
			}
		}
	}
	if !found {
		t.Errorf("no SB flow wraps the stateful ACL as `... && (ip4) && (tcp)'; got:\n%s", wrapped)
	}
	if _, err := d.Parse("ip4) && (tcp", nil); err == nil {
		t.Errorf("raw `ip4) && (tcp' parsed")
	}
}

// checkResolvers checks that View.Resolver on the live NB of sb predicts,
// on each of the switches dps, the SB Address_Set and per-datapath
// Port_Group rows and the Port_Binding rows of the datapath that northd
// wrote.
func checkResolvers(t *testing.T, ctx context.Context, sb *ovnsandbox.Sandbox, dps ...string) {
	t.Helper()
	type row struct {
		Name  string
		Items []string
	}
	list := func(table, col string) []row {
		t.Helper()
		out, err := sb.SBCtl(ctx, "--format=json", "--columns=name,"+col, "list", table)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct{ Data [][]any }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		var rows []row
		for _, d := range doc.Data {
			rows = append(rows, row{Name: d[0].(string), Items: ovsdbStrings(d[1])})
		}
		return rows
	}
	keyOf := map[string]string{}  // switch name → tunnel key
	uuidOf := map[string]string{} // switch name → Datapath_Binding UUID
	out, err := sb.SBCtl(ctx, "--bare", "--columns=tunnel_key,external_ids,_uuid", "list", "Datapath_Binding")
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range strings.Split(strings.TrimSpace(out), "\n\n") {
		lines := strings.Split(rec, "\n")
		for _, kv := range strings.Fields(lines[1]) {
			if name, ok := strings.CutPrefix(kv, "name="); ok {
				keyOf[name] = lines[0]
				uuidOf[name] = lines[2]
			}
		}
	}

	snap, err := nbschema.LoadLive(ctx, nbschema.Options{Remotes: sb.NB, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	view := nbview.New(snap)
	sbSets := map[string][]string{}
	for _, r := range list("Address_Set", "addresses") {
		sbSets[r.Name] = r.Items
	}
	sbGroups := list("Port_Group", "ports")
	for _, dp := range dps {
		r, err := view.Resolver(dp)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(sbSets, normalize(r.AddressSets)); d != "" {
			t.Errorf("%s: address sets, SB (-) vs predicted (+):\n%s", dp, d)
		}
		wantPG := map[string][]string{}
		for _, g := range sbGroups {
			if name, ok := strings.CutPrefix(g.Name, keyOf[dp]+"_"); ok {
				wantPG[name] = g.Items
			}
		}
		if d := cmp.Diff(wantPG, normalize(r.PortGroups)); d != "" {
			t.Errorf("%s: port groups, SB (-) vs predicted (+):\n%s", dp, d)
		}
		pbs, err := sb.SBCtl(ctx, "--bare", "--columns=logical_port", "find", "Port_Binding", "datapath="+uuidOf[dp])
		if err != nil {
			t.Fatal(err)
		}
		wantPorts := map[string]bool{}
		for _, p := range nonEmptyLines(pbs) {
			wantPorts[p] = true
		}
		if d := cmp.Diff(wantPorts, r.Ports); d != "" {
			t.Errorf("%s: ports, SB Port_Binding (-) vs predicted (+):\n%s", dp, d)
		}
	}
}

func normalize(m map[string][]string) map[string][]string {
	out := map[string][]string{}
	for k, v := range m {
		v = append([]string{}, v...)
		sort.Strings(v)
		out[k] = v
	}
	return out
}

// ovsdbStrings decodes an OVSDB JSON string or ["set", [...]] value.
func ovsdbStrings(v any) []string {
	out := []string{}
	switch v := v.(type) {
	case string:
		out = append(out, v)
	case []any:
		if len(v) == 2 && v[0] == "set" {
			for _, x := range v[1].([]any) {
				out = append(out, x.(string))
			}
		}
	}
	sort.Strings(out)
	return out
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}
