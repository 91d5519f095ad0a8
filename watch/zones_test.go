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
	"slices"
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
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/watch"
)

// ctEntries returns n established TCP entries in zone.
func ctEntries(zone uint16, n int) []ctnetlink.Entry {
	return netnstest.TCPEntries(zone, n, netip.AddrFrom4([4]byte{10, 0, 0, 1}), netip.AddrFrom4([4]byte{10, 0, 0, 2}), 1000)
}

// zonePorts is the test's zone assignment: port -> zone. Zones 0 and 9
// belong to no port of the NB.
var zonePorts = map[string]uint16{"p1": 1, "p2": 2, "p3": 3, "p4": 4, "p5": 5, "nf-in": 6, "nf-out": 7}

const perZone = 50

// zoneNB builds sw0 (p1, p2) and sw1 (p3, p4) with stateful ACLs and sw2
// (p5) with a stateless one.
func zoneNB(t *testing.T, ctx context.Context, sb *ovnsandbox.Sandbox) {
	t.Helper()
	nbctlAll(t, ctx, sb, [][]string{
		{"ls-add", "sw0", "--", "lsp-add", "sw0", "p1", "--", "lsp-add", "sw0", "p2"},
		{"ls-add", "sw1", "--", "lsp-add", "sw1", "p3", "--", "lsp-add", "sw1", "p4"},
		{"ls-add", "sw2", "--", "lsp-add", "sw2", "p5"},
		{"acl-add", "sw0", "from-lport", "1000", `inport == "p1"`, "allow-related"},
		{"acl-add", "sw0", "to-lport", "1000", "ip4", "allow-stateless"},
		{"acl-add", "sw1", "from-lport", "1000", "ip4", "allow-related"},
		{"acl-add", "sw2", "from-lport", "1000", "ip4", "allow-stateless"},
	})
}

func nbctlAll(t *testing.T, ctx context.Context, sb *ovnsandbox.Sandbox, cmds [][]string) {
	t.Helper()
	for _, c := range cmds {
		if _, err := sb.NBCtl(ctx, c...); err != nil {
			t.Fatal(err)
		}
	}
}

// zoneTrigger is one release's flush trigger in the zone scenario: setup
// runs after zoneNB, keep changes nothing that needs a flush, trigger
// (with "{acl}" the UUID of sw0's allow-related ACL) flushes exactly the
// zones of flushed, logged with reason.
type zoneTrigger struct {
	name        string
	setup, keep [][]string
	trigger     []string
	flushed     []uint16
	reason      string
}

// zoneTriggers are the triggers the netns test exercises per release.
var zoneTriggers = map[string]zoneTrigger{
	// 23.03: the last allow-related ACL becomes allow-stateless.
	"23.03": {name: "allow-stateless",
		keep:    [][]string{{"acl-add", "sw0", "to-lport", "900", "ip6", "allow-stateless"}},
		trigger: []string{"set", "ACL", "{acl}", "action=allow-stateless"},
		flushed: []uint16{1, 2}, reason: "switch sw0 no longer sends traffic to conntrack"},
	// 25.03: tiers and pass — a tier-2 drop keeps conntrack; the tier-1
	// allow-related ACL handing its decision down with pass ends it (a
	// pass ACL is not stateful), persisted entries included.
	"25.03": {name: "pass",
		setup:   [][]string{{"set", "ACL", "{acl}", "tier=1", "options:persist-established=true"}},
		keep:    [][]string{{"--tier=2", "acl-add", "sw0", "to-lport", "900", "ip6", "drop"}},
		trigger: []string{"set", "ACL", "{acl}", "action=pass"},
		flushed: []uint16{1, 2}, reason: "switch sw0 no longer sends traffic to conntrack"},
	// 26.03: network functions — sw0 keeps conntrack, but the connections
	// its allow-related ACL redirected through nf1 lose their redirect.
	"26.03": {name: "network function removed",
		setup: [][]string{
			{"lsp-add", "sw0", "nf-in", "--", "lsp-add", "sw0", "nf-out"},
			{"lsp-set-options", "nf-in", "is-nf=true", "nf-linked-port=nf-out", "receive_multicast=false", "lsp_learn_mac=false"},
			{"lsp-set-options", "nf-out", "is-nf=true", "nf-linked-port=nf-in", "receive_multicast=false", "lsp_learn_mac=false"},
			{"nf-add", "nf1", "7", "nf-in", "nf-out"},
			{"nfg-add", "nfg1", "3", "inline", "nf1"},
			{"set", "ACL", "{acl}", "network_function_group={nfg1}"},
		},
		keep:    [][]string{{"acl-add", "sw0", "to-lport", "900", "ip6", "allow-stateless"}},
		trigger: []string{"set", "ACL", "{acl}", "network_function_group=[]"},
		flushed: []uint16{1, 2, 6, 7}, reason: "network function redirect"},
}

func init() {
	// 26.09: a network function is active only with its ports bound to a
	// chassis, which the watcher (no SB) never assumes: 25.03's trigger.
	zoneTriggers["26.09"] = zoneTriggers["25.03"]
}

// runZoneScenario loads entries into a fresh namespace, starts a watcher
// on an NB of release r with zones and a netlink flusher, applies r's
// trigger, then deletes port p3, and checks with full dumps that exactly
// the trigger's zones, then p3's, were flushed.
func runZoneScenario(t *testing.T, r *release.Release, zones func(t *testing.T, ctx context.Context, log *slog.Logger) watch.ZoneSource) {
	testenv.NeedBinaries(t, "ip")
	testenv.NeedRelease(t, r)
	tr := zoneTriggers[r.Series()]
	ns := netnstest.New(t)
	c, err := ctnetlink.Dial(&ctnetlink.Config{NetNS: ns})
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	want := map[uint16]int{}
	for _, z := range []uint16{0, 1, 2, 3, 4, 5, 6, 7, 9} {
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

	sb, ctx := startReleaseNB(t, r)
	zoneNB(t, ctx, sb)
	uuid, err := sb.NBCtl(ctx, "--bare", "--columns=_uuid", "find", "ACL", "action=allow-related", `match="inport == \"p1\""`)
	if err != nil || strings.TrimSpace(uuid) == "" {
		t.Fatalf("find ACL: %q %v", uuid, err)
	}
	subst := func(args []string) []string {
		out := slices.Clone(args)
		for i, a := range out {
			a = strings.ReplaceAll(a, "{acl}", strings.TrimSpace(uuid))
			if strings.Contains(a, "{nfg1}") {
				id, err := sb.NBCtl(ctx, "--bare", "--columns=_uuid", "find", "Network_Function_Group", "name=nfg1")
				if err != nil {
					t.Fatal(err)
				}
				a = strings.ReplaceAll(a, "{nfg1}", strings.TrimSpace(id))
			}
			out[i] = a
		}
		return out
	}
	for _, c := range tr.setup {
		nbctlAll(t, ctx, sb, [][]string{subst(c)})
	}

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

	// Changes that keep what sw0's connections rely on flush nothing.
	nbctlAll(t, ctx, sb, tr.keep)
	w.waitSnapshot(t, "aclc compile --nb", mustParse(t, compileLive(t, ctx, sb.NB)), 5*time.Second)
	if _, err := sb.NBCtl(ctx, subst(tr.trigger)...); err != nil {
		t.Fatal(err)
	}
	waitFlushes(len(tr.flushed))
	for _, z := range tr.flushed {
		delete(want, z)
		if !strings.Contains(w.logs.String(), fmt.Sprintf("zone=%d ", z)) {
			t.Fatalf("flush of zone %d not logged:\n%s", z, w.logs.String())
		}
	}
	if !strings.Contains(w.logs.String(), tr.reason) {
		t.Fatalf("flushes not logged with the reason %q:\n%s", tr.reason, w.logs.String())
	}
	check("after the " + tr.name + " trigger")

	if _, err := sb.NBCtl(ctx, "lsp-del", "p3"); err != nil {
		t.Fatal(err)
	}
	waitFlushes(len(tr.flushed) + 1)
	delete(want, 3)
	check("after p3 was deleted")
	if !strings.Contains(w.logs.String(), "port p3 deleted") {
		t.Fatalf("p3's flush not logged with its reason:\n%s", w.logs.String())
	}
}

// TestZoneFlushNetlinkReleases runs the zone scenario on an NB of each
// release with that release's trigger (zones from a YAML file).
func TestZoneFlushNetlinkReleases(t *testing.T) {
	for _, r := range testenv.LiveReleases(t) {
		t.Run(r.Name()+"/"+zoneTriggers[r.Series()].name, func(t *testing.T) {
			runZoneScenario(t, r, fileZones)
		})
	}
}

func fileZones(t *testing.T, _ context.Context, _ *slog.Logger) watch.ZoneSource {
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
	runZoneScenario(t, release.MustLookup("23.03.1"), func(t *testing.T, ctx context.Context, log *slog.Logger) watch.ZoneSource {
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
