package watch_test

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/ctnetlink"
	"github.com/aclc/aclc/internal/netnstest"
	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/watch"
)

// ctEntries returns n established TCP entries in zone.
func ctEntries(zone uint16, n int) []ctnetlink.Entry {
	return netnstest.TCPEntries(zone, n, netip.AddrFrom4([4]byte{10, 0, 0, 1}), netip.AddrFrom4([4]byte{10, 0, 0, 2}), 1000)
}

// zonePorts is the test's zone assignment: port -> zone. Zones 0 and 9
// belong to no port of the NB.
var zonePorts = map[string]uint16{"p1": 1, "p2": 2, "p3": 3, "p4": 4, "p5": 5}

const perZone = 50

// zoneNB builds sw0 (p1, p2) and sw1 (p3, p4) with stateful ACLs and sw2
// (p5) with a stateless one.
func zoneNB(t *testing.T, ctx context.Context, sb *ovnsandbox.Sandbox) {
	t.Helper()
	for _, c := range [][]string{
		{"ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--", "lsp-add", "sw0", "p2"},
		{"ls-add", "sw1", "--", "lsp-add", "sw1", "p3", "--", "lsp-add", "sw1", "p4"},
		{"ls-add", "sw2", "--", "lsp-add", "sw2", "p5"},
		{"acl-add", "sw0", "from-lport", "1000", `inport == "p1"`, "allow-related"},
		{"acl-add", "sw0", "to-lport", "1000", "ip4", "allow-stateless"},
		{"acl-add", "sw1", "from-lport", "1000", "ip4", "allow-related"},
		{"acl-add", "sw2", "from-lport", "1000", "ip4", "allow-stateless"},
	} {
		if _, err := sb.NBCtl(ctx, c...); err != nil {
			t.Fatal(err)
		}
	}
}

// runZoneScenario loads entries into a fresh namespace, starts a watcher
// with zones and a netlink flusher, converts sw0's last allow-related ACL
// to allow-stateless, then deletes port p3, and checks with full dumps
// that exactly the zones of sw0's ports, then p3's, were flushed.
func runZoneScenario(t *testing.T, zones func(t *testing.T, ctx context.Context, log *slog.Logger) watch.ZoneSource) {
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovn-nbctl", "ip")
	ns := netnstest.New(t)
	c, err := ctnetlink.Dial(&ctnetlink.Config{NetNS: ns})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	want := map[uint16]int{}
	for _, z := range []uint16{0, 1, 2, 3, 4, 5, 9} {
		res, err := c.Create(ctEntries(z, perZone))
		if err != nil || res.Inserted != perZone {
			t.Fatalf("Create zone %d: %+v %v", z, res, err)
		}
		want[z] = perZone
	}
	check := func(what string) {
		t.Helper()
		got, err := c.CountByZone(ctnetlink.FamilyAny)
		if err != nil {
			t.Fatalf("CountByZone: %v", err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Fatalf("%s: entries per zone (full dump) (-want +got):\n%s", what, d)
		}
	}
	check("before")

	sb, ctx := startNB(t)
	zoneNB(t, ctx, sb)

	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	metrics := watch.NewMetrics()
	w := startWatch(t, sb.NB, watch.Config{Zones: zones(t, ctx, log), Flusher: &watch.NetlinkFlusher{NetNS: ns}, Metrics: metrics})
	flushed := func() int {
		return strings.Count(w.logs.String(), "flushed conntrack zone")
	}
	waitFlushes := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for flushed() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d zone flushes after 10s, want %d; log:\n%s", flushed(), n, w.logs.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond) // nothing more may come
		if got := flushed(); got != n {
			t.Fatalf("%d zone flushes, want %d; log:\n%s", got, n, w.logs.String())
		}
	}

	// A change that keeps sw0 stateful flushes nothing.
	if _, err := sb.NBCtl(ctx, "acl-add", "sw0", "to-lport", "900", "ip6", "allow-stateless"); err != nil {
		t.Fatal(err)
	}
	uuid, err := sb.NBCtl(ctx, "--bare", "--columns=_uuid", "find", "ACL", "action=allow-related", `match="inport == \"p1\""`)
	if err != nil || strings.TrimSpace(uuid) == "" {
		t.Fatalf("find ACL: %q %v", uuid, err)
	}
	if _, err := sb.NBCtl(ctx, "set", "ACL", strings.TrimSpace(uuid), "action=allow-stateless"); err != nil {
		t.Fatal(err)
	}
	waitFlushes(2)
	delete(want, 1)
	delete(want, 2)
	check("after sw0's last allow-related ACL became allow-stateless")
	for _, z := range []string{"zone=1 ", "zone=2 "} {
		if !strings.Contains(w.logs.String(), z) || !strings.Contains(w.logs.String(), "switch sw0 no longer needs conntrack") {
			t.Fatalf("flush of %s not logged with its reason:\n%s", z, w.logs.String())
		}
	}

	if _, err := sb.NBCtl(ctx, "lsp-del", "p3"); err != nil {
		t.Fatal(err)
	}
	waitFlushes(3)
	delete(want, 3)
	check("after p3 was deleted")
	if !strings.Contains(w.logs.String(), "port p3 deleted") {
		t.Fatalf("p3's flush not logged with its reason:\n%s", w.logs.String())
	}
}

// TestZoneFlushNetlinkZonesFile is the zone test with zones from a YAML
// --zones file.
func TestZoneFlushNetlinkZonesFile(t *testing.T) {
	runZoneScenario(t, func(t *testing.T, _ context.Context, _ *slog.Logger) watch.ZoneSource {
		path := filepath.Join(t.TempDir(), "zones.yaml")
		var b strings.Builder
		for p, z := range zonePorts {
			fmt.Fprintf(&b, "%s: %d\n", p, z)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		z, err := watch.NewFileZones(path)
		if err != nil {
			t.Fatal(err)
		}
		return z
	})
}

// startOVSDB runs an ovsdb-server with the real Open_vSwitch schema and
// returns its remote.
func startOVSDB(t *testing.T) string {
	t.Helper()
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovs-vsctl")
	dir := t.TempDir()
	db := filepath.Join(dir, "conf.db")
	if out, err := exec.Command("ovsdb-tool", "create", db, "/usr/share/openvswitch/vswitch.ovsschema").CombinedOutput(); err != nil {
		t.Fatalf("ovsdb-tool create: %v: %s", err, out)
	}
	sock := filepath.Join(dir, "db.sock")
	cmd := exec.Command("ovsdb-server", "--no-chdir", "--remote=punix:"+sock, "--unixctl="+filepath.Join(dir, "ctl"),
		"--log-file="+filepath.Join(dir, "ovsdb.log"), db)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for i := 0; ; i++ {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if i > 500 {
			t.Fatal("ovsdb-server socket did not appear")
		}
		time.Sleep(10 * time.Millisecond)
	}
	return "unix:" + sock
}

func vsctl(t *testing.T, remote string, args ...string) {
	t.Helper()
	out, err := exec.Command("ovs-vsctl", append([]string{"--db=" + remote, "--no-wait", "--timeout=10"}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("ovs-vsctl %v: %v: %s", args, err, out)
	}
}

// TestZoneFlushNetlinkOVS is the zone test with zones read, as --ovs does,
// from ct-zone-* keys on br-int in a real Open_vSwitch ovsdb-server. The
// keys of p1..p4 are set only after the watcher connected, and p3's key
// is removed before p3 is (as ovn-controller would): its zone must still
// be known.
func TestZoneFlushNetlinkOVS(t *testing.T) {
	remote := startOVSDB(t)
	vsctl(t, remote, "init")
	vsctl(t, remote, "add-br", "br-int", "--", "set", "Bridge", "br-int", "external_ids:ct-zone-p5=5")
	runZoneScenario(t, func(t *testing.T, ctx context.Context, log *slog.Logger) watch.ZoneSource {
		z, err := watch.NewOVSZones(ctx, remote, log)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { z.Close() })
		if n, ok := z.Zone("p5"); !ok || n != 5 {
			t.Fatalf("Zone(p5) = %d, %v; want 5", n, ok)
		}
		args := []string{"set", "Bridge", "br-int"}
		for p, n := range zonePorts {
			args = append(args, fmt.Sprintf("external_ids:ct-zone-%s=%d", p, n))
		}
		vsctl(t, remote, args...)
		deadline := time.Now().Add(5 * time.Second)
		for {
			if n, ok := z.Zone("p3"); ok && n == 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("ct-zone-p3 never seen")
			}
			time.Sleep(10 * time.Millisecond)
		}
		vsctl(t, remote, "remove", "Bridge", "br-int", "external_ids", "ct-zone-p3")
		return z
	})
}

// flakyFlusher fails the first fails attempts at each zone, and takes
// delay per attempt.
type flakyFlusher struct {
	fails int
	delay time.Duration
	mu    sync.Mutex
	tries map[uint16]int
	ok    map[uint16]int
}

func (f *flakyFlusher) FlushZone(_ context.Context, zone uint16) error {
	time.Sleep(f.delay)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tries[zone]++
	if f.tries[zone] <= f.fails {
		return fmt.Errorf("injected failure %d", f.tries[zone])
	}
	f.ok[zone]++
	return nil
}

func (f *flakyFlusher) counts() (map[uint16]int, map[uint16]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.tries), maps.Clone(f.ok)
}

// TestZoneFlushRetryAndDryRun checks that a failing flush is reported and
// retried until it succeeds, once per zone, while flow updates go on
// (each attempt takes 300ms: the snapshot must follow the NB meanwhile),
// and that dry-run only logs.
func TestZoneFlushRetryAndDryRun(t *testing.T) {
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovn-nbctl")
	zones := filepath.Join(t.TempDir(), "zones.yaml")
	if err := os.WriteFile(zones, []byte("p1: 1\np2: 2\np3: 3\np4: 4\np5: 5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := watch.NewFileZones(zones)
	if err != nil {
		t.Fatal(err)
	}
	for _, dry := range []bool{false, true} {
		t.Run(fmt.Sprint("dry-run=", dry), func(t *testing.T) {
			sb, ctx := startNB(t)
			zoneNB(t, ctx, sb)
			flaky := &flakyFlusher{fails: 2, delay: 300 * time.Millisecond, tries: map[uint16]int{}, ok: map[uint16]int{}}
			dryLog := &syncBuffer{}
			var fl watch.Flusher = flaky
			if dry {
				fl = watch.DryRunFlusher{Log: slog.New(slog.NewTextHandler(dryLog, nil))}
			}
			w := startWatch(t, sb.NB, watch.Config{Zones: src, Flusher: fl})
			if _, err := sb.NBCtl(ctx, "acl-del", "sw0", "from-lport", "1000", `inport == "p1"`); err != nil {
				t.Fatal(err)
			}
			// Flows follow at once, whatever the flusher does.
			if _, err := sb.NBCtl(ctx, "acl-add", "sw2", "to-lport", "5", "ip6", "drop"); err != nil {
				t.Fatal(err)
			}
			w.waitSnapshot(t, "aclc compile --nb", mustParse(t, compileLive(t, ctx, sb.NB)), 2*time.Second)
			if dry {
				deadline := time.Now().Add(5 * time.Second)
				for strings.Count(dryLog.String(), "would flush") < 2 {
					if time.Now().After(deadline) {
						t.Fatalf("dry-run log:\n%s", dryLog.String())
					}
					time.Sleep(10 * time.Millisecond)
				}
				if !strings.Contains(dryLog.String(), "zone=1") || !strings.Contains(dryLog.String(), "zone=2") {
					t.Fatalf("dry-run log:\n%s", dryLog.String())
				}
				return
			}
			if tries, _ := flaky.counts(); tries[1]+tries[2] >= 6 {
				t.Fatalf("flushes were done before the flows were updated: %v", tries)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				tries, ok := flaky.counts()
				if ok[1] == 1 && ok[2] == 1 {
					if d := cmp.Diff(map[uint16]int{1: 3, 2: 3}, tries); d != "" {
						t.Fatalf("attempts per zone (-want +got):\n%s", d)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("flushes did not succeed: tries %v ok %v", tries, ok)
				}
				time.Sleep(20 * time.Millisecond)
			}
			if n := strings.Count(w.logs.String(), "will retry"); n != 4 {
				t.Fatalf("%d failures reported, want 4:\n%s", n, w.logs.String())
			}
		})
	}
}
