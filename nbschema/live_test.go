package nbschema_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
)

const fullFixture = "testdata/full.yaml"

var snapshotCmp = []cmp.Option{
	cmpopts.IgnoreFields(nbschema.Snapshot{}, "Origin", "Positions", "Release", "ReleaseFrom"),
	cmpopts.EquateEmpty(),
}

// sandbox starts an NB and SB ovsdb-server (no ovn-northd) for one test.
func sandbox(t *testing.T) *ovnsandbox.Sandbox {
	t.Helper()
	testenv.NeedBinaries(t, "ovsdb-server", "ovsdb-tool", "ovn-nbctl", "ovn-northd")
	sb, err := ovnsandbox.Start(filepath.Join(t.TempDir(), "ovn"), ovnsandbox.Options{NoNorthd: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Stop)
	return sb
}

func connect(t *testing.T, remote string) *nbschema.NB {
	t.Helper()
	nb, err := nbschema.Connect(context.Background(), nbschema.Options{Remotes: remote})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nb.Close)
	return nb
}

func store(t *testing.T, remote string, snap *nbschema.Snapshot, opt nbschema.StoreOptions) error {
	t.Helper()
	nb := connect(t, remote)
	return nbschema.Store(context.Background(), nb.Client, snap, opt)
}

func loadLive(t *testing.T, remote string) *nbschema.Snapshot {
	t.Helper()
	s, err := nbschema.LoadLive(context.Background(), nbschema.Options{Remotes: remote})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLiveRoundTrip stores a fixture in a real NB, reads it back, dumps it
// as a fixture and parses that: all three snapshots must be equal, and
// ovn-nbctl must see the rows.
func TestLiveRoundTrip(t *testing.T) {
	sb := sandbox(t)
	want, err := nbschema.LoadFixture(fullFixture)
	if err != nil {
		t.Fatal(err)
	}
	if err := store(t, sb.NB, want, nbschema.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	live := loadLive(t, sb.NB)
	if diff := cmp.Diff(want, live, snapshotCmp...); diff != "" {
		t.Fatalf("live NB differs from the fixture (-fixture +live):\n%s", diff)
	}
	for u, o := range live.Origin {
		if !strings.HasPrefix(o, "NB ") || !strings.HasSuffix(o, " "+u) {
			t.Errorf("Origin[%s] = %q, want \"NB <Table> %s\"", u, o, u)
		}
	}
	if got := live.Origin["6f0c6a4e-1d0b-4c55-9a52-0d3c1b7e0001"]; got != "NB Logical_Switch 6f0c6a4e-1d0b-4c55-9a52-0d3c1b7e0001" {
		t.Errorf("sw0 Origin %q", got)
	}

	var buf bytes.Buffer
	if err := nbschema.WriteFixture(&buf, live); err != nil {
		t.Fatal(err)
	}
	back, err := nbschema.ParseFixture("dump.yaml", buf.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if diff := cmp.Diff(want, back, snapshotCmp...); diff != "" {
		t.Errorf("dumped fixture differs (-fixture +dump):\n%s", diff)
	}

	ctx := context.Background()
	acls, err := sb.NBCtl(ctx, "acl-list", "sw0")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`from-lport  1002 (ip4 && tcp) allow-related log(name=n1,severity=info,meter="m1") label=5 [after-lb]`,
		`  to-lport 32767 () allow-stateless`,
		`  to-lport     0 (ip6) reject`,
	} {
		if !strings.Contains(acls, line+"\n") {
			t.Errorf("ovn-nbctl acl-list sw0 lacks %q:\n%s", line, acls)
		}
	}
	pgACLs, err := sb.NBCtl(ctx, "acl-list", "pg1")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(pgACLs, "\n"); n != 3 {
		t.Errorf("ovn-nbctl acl-list pg1: %d ACLs, want 3:\n%s", n, pgACLs)
	}
	ports, err := sb.NBCtl(ctx, "--bare", "--columns=ports", "list", "Port_Group", "pg1")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(ports)); n != 3 {
		t.Errorf("pg1 has %d ports in the NB, want 3: %q", n, ports)
	}
	uuid, err := sb.NBCtl(ctx, "--bare", "--columns=_uuid", "find", "Logical_Switch", "name=sw0")
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(uuid) != "6f0c6a4e-1d0b-4c55-9a52-0d3c1b7e0001" {
		t.Errorf("sw0 has uuid %q in the NB, want the fixture's", uuid)
	}
}

// TestStoreDefaultRows stores rows whose every column has its default
// value, which need an explicit row in the insert operation.
func TestStoreDefaultRows(t *testing.T) {
	sb := sandbox(t)
	want, err := nbschema.ParseFixture("x.yaml", []byte("nb_global: {}\ndns: [{name: d0}]\nload_balancers: [{}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := store(t, sb.NB, want, nbschema.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, loadLive(t, sb.NB), snapshotCmp...); diff != "" {
		t.Errorf("live NB differs (-want +live):\n%s", diff)
	}
}

// TestStoreNonEmptyAndReplace checks that Store refuses an NB with rows,
// and that Replace swaps them for the snapshot's in one transaction, also
// when both share UUIDs.
func TestStoreNonEmptyAndReplace(t *testing.T) {
	sb := sandbox(t)
	full, err := nbschema.LoadFixture(fullFixture)
	if err != nil {
		t.Fatal(err)
	}
	if err := store(t, sb.NB, full, nbschema.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	err = store(t, sb.NB, full, nbschema.StoreOptions{})
	if !errors.Is(err, nbschema.ErrNotEmpty) || !strings.Contains(err.Error(), "2 Logical_Switch") {
		t.Fatalf("second Store: %v, want ErrNotEmpty naming 2 Logical_Switch rows", err)
	}

	// Same switch and port UUIDs, changed contents, fewer rows.
	small, err := nbschema.ParseFixture("small.yaml", []byte(`
switches:
  - name: sw0
    uuid: 6f0c6a4e-1d0b-4c55-9a52-0d3c1b7e0001
    ports: [{name: p1, addresses: [unknown]}]
    acls:
      - {direction: to-lport, priority: 7, match: "ip4", action: drop}
port_groups:
  - {name: pg1, ports: [p1]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if err := store(t, sb.NB, small, nbschema.StoreOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	live := loadLive(t, sb.NB)
	// NB_Global is kept (updated in place), not replaced.
	small.Global = live.Global
	if diff := cmp.Diff(small, live, snapshotCmp...); diff != "" {
		t.Errorf("after replace (-want +live):\n%s", diff)
	}
	if live.GlobalOption("use_ct_inv_match") != "false" {
		t.Errorf("NB_Global options lost: %v", live.Global)
	}
}

// TestStoreReplaceNameClash replaces a port group created by someone else
// with a fixture's port group of the same name but another UUID.
func TestStoreReplaceNameClash(t *testing.T) {
	sb := sandbox(t)
	if _, err := sb.NBCtl(context.Background(), "pg-add", "pgx"); err != nil {
		t.Fatal(err)
	}
	s, err := nbschema.ParseFixture("y.yaml", []byte("port_groups: [{name: pgx}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := store(t, sb.NB, s, nbschema.StoreOptions{Replace: true}); err != nil {
		t.Fatalf("replace over a clashing name: %v", err)
	}
	live := loadLive(t, sb.NB)
	live.Global = nil
	if diff := cmp.Diff(s, live, snapshotCmp...); diff != "" {
		t.Errorf("after replace (-want +live):\n%s", diff)
	}
}

// TestStoreError checks that a failed transaction writes nothing and names
// the fixture rows involved.
func TestStoreError(t *testing.T) {
	sb := sandbox(t)
	s, err := nbschema.ParseFixture("x.yaml", []byte("switches:\n  - name: sw0\n    ports: [{name: p1}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	for u := range s.Ports {
		delete(s.Ports, u) // sw0 now refers to a port the transaction lacks
	}
	err = store(t, sb.NB, s, nbschema.StoreOptions{})
	if err == nil || !strings.Contains(err.Error(), "NB transaction failed, nothing written: ") ||
		!strings.Contains(err.Error(), "from x.yaml:2:5") {
		t.Errorf("got %v, want a failed transaction naming x.yaml:2:5", err)
	}
	if live := loadLive(t, sb.NB); len(live.Switches) != 0 {
		t.Errorf("a failed Store left %d switches", len(live.Switches))
	}
}

func TestConnectUnreachable(t *testing.T) {
	dir := t.TempDir()
	remote := "unix:" + filepath.Join(dir, "nb.sock") + ",tcp:127.0.0.1:1"
	_, err := nbschema.LoadLive(context.Background(), nbschema.Options{Remotes: remote, Timeout: 2 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "cannot reach NB at "+remote) {
		t.Errorf("got %v, want an error naming %s", err, remote)
	}
}

// TestConnectTimeout points at a socket that accepts but never answers.
func TestConnectTimeout(t *testing.T) {
	sock := muteSocket(t)
	start := time.Now()
	_, err := nbschema.Connect(context.Background(), nbschema.Options{Remotes: sock, Timeout: 300 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "did not answer within 300ms") {
		t.Errorf("got %v, want a timeout error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v for a 300ms timeout", d)
	}
}

func TestConnectWrongSchema(t *testing.T) {
	sb := sandbox(t)
	_, err := nbschema.Connect(context.Background(), nbschema.Options{Remotes: sb.SB})
	if err == nil || !strings.Contains(err.Error(), "has no OVN_Northbound database") ||
		!strings.Contains(err.Error(), "serves OVN_Southbound") ||
		!strings.Contains(err.Error(), "that is the OVN Southbound database") {
		t.Errorf("got %v, want an error naming OVN_Southbound", err)
	}
}

func TestConnectBadOptions(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not pem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.pem")
	tests := []struct {
		name string
		opts nbschema.Options
		want string
	}{
		{"passive remote", nbschema.Options{Remotes: "punix:/x"}, `NB remote "punix:/x" is a passive (listening) remote`},
		{"unknown method", nbschema.Options{Remotes: "http:/x"}, `NB remote "http:/x": unknown method "http"`},
		{"ssl without files", nbschema.Options{Remotes: "ssl:127.0.0.1:6641"},
			"ssl: NB remote needs a private key (-p), certificate (-c) and CA certificate (-C)"},
		{"missing key file", nbschema.Options{Remotes: "ssl:127.0.0.1:6641", PrivateKey: missing, Certificate: garbage, CACert: garbage},
			"private key: open " + missing + ": no such file or directory"},
		{"garbage certificate", nbschema.Options{Remotes: "ssl:127.0.0.1:6641", PrivateKey: garbage, Certificate: garbage, CACert: garbage},
			"private key " + garbage + ": no PEM data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := nbschema.Connect(context.Background(), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

// TestConnectClusterList tries the remotes of a list in order, as for a
// clustered NB with a member down.
func TestConnectClusterList(t *testing.T) {
	sb := sandbox(t)
	remote := "unix:" + filepath.Join(t.TempDir(), "down.sock") + "," + sb.NB
	nb := connect(t, remote)
	if got := nb.Client.CurrentEndpoint(); got != sb.NB {
		t.Errorf("connected to %s, want %s", got, sb.NB)
	}
}

func TestDefaultRemoteFromEnv(t *testing.T) {
	sb := sandbox(t)
	t.Setenv("OVN_NB_DB", sb.NB)
	if _, err := nbschema.LoadLive(context.Background(), nbschema.Options{}); err != nil {
		t.Errorf("LoadLive with OVN_NB_DB=%s: %v", sb.NB, err)
	}
}

// TestStore50k stores a generated NB with 50k ACLs in one transaction.
func TestStore50k(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	sb := sandbox(t)
	p := nbgen.Default()
	p.ACLs = 50000
	snap := nbgen.Generate(p)
	start := time.Now()
	if err := store(t, sb.NB, snap, nbschema.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	stored := time.Since(start)
	start = time.Now()
	live := loadLive(t, sb.NB)
	t.Logf("stored %d ACLs in %v, read back in %v", len(snap.ACLs), stored, time.Since(start))
	if len(live.ACLs) != len(snap.ACLs) {
		t.Fatalf("read back %d ACLs, stored %d", len(live.ACLs), len(snap.ACLs))
	}
	if diff := cmp.Diff(snap, live, append(snapshotCmp, cmpopts.SortSlices(func(a, b string) bool { return a < b }))...); diff != "" {
		t.Errorf("live NB differs (-stored +live):\n%.3000s", diff)
	}
	if stored > 2*time.Minute {
		t.Errorf("storing 50k ACLs took %v", stored)
	}
}

// TestMonitorFollowsChanges is what a watcher relies on: after Monitor the
// client's cache follows the NB, and Snapshot reflects later changes.
func TestMonitorFollowsChanges(t *testing.T) {
	sb := sandbox(t)
	ctx := context.Background()
	nb, err := nbschema.Connect(ctx, nbschema.Options{Remotes: sb.NB, Reconnect: true, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer nb.Close()
	if err := nb.Monitor(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sb.NBCtl(ctx, "ls-add", "late", "--", "acl-add", "late", "to-lport", "7", "ip4", "drop"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		s, err := nb.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(s.Switches) == 1 && len(s.ACLs) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cache never showed the new switch and ACL: %d switches, %d ACLs", len(s.Switches), len(s.ACLs))
		}
	}
}
