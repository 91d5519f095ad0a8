package ctnetlink_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aclc/aclc/ctnetlink"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/google/go-cmp/cmp"
	"github.com/mdlayher/netlink"
	"github.com/ti-mo/conntrack"
)

// mixedLoad is a load file with every protocol and family the loader
// supports, spread over zones 0, 3 and 4.
const mixedLoad = `# mixed protocols and families
-I -w 3 -s 10.0.0.1 -d 10.0.0.2 -p tcp --sport 1000 --dport 80 --state ESTABLISHED -u SEEN_REPLY,ASSURED -t 300
-I -w 3 -s 10.0.0.1 -d 10.0.0.2 -p tcp --sport 1001 --dport 80 --state LISTEN -u SEEN_REPLY -t 300
-I -w 3 -s 10.0.0.1 -d 10.0.0.2 -p udp --sport 53 --dport 5353 -t 300 -m 9
-I -w 3 -s 10.0.0.1 -d 10.0.0.2 -p icmp --icmp-type 8 --icmp-code 0 --icmp-id 77 -t 300
-I -w 3 -s 2001:db8::1 -d 2001:db8::2 -p udp --sport 1 --dport 2 -t 300
-I -w 3 -s 2001:db8::1 -d 2001:db8::2 -p icmpv6 --icmp-type 128 --icmp-code 0 --icmp-id 5 -t 300
-I -w 4 -s 10.0.0.1 -d 10.0.0.2 -p udp --sport 53 --dport 5353 -t 300
-I -s 10.0.0.1 -d 10.0.0.2 -p udp --sport 53 --dport 5353 -t 300
`

// timeoutRE blanks the remaining lifetime, which ticks between two dumps.
var timeoutRE = regexp.MustCompile(`^(\S+\s+\d+) \d+ `)

func normalize(lines []string) []string {
	var out []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, timeoutRE.ReplaceAllString(l, "$1 T "))
		}
	}
	slices.Sort(out)
	return out
}

// TestListZone lists one zone and checks it against conntrack -L -w and
// ti-mo/conntrack's zone-filtered dump, two independent readers.
func TestListZone(t *testing.T) {
	c, ns := dialNetNS(t, nil)
	entries, err := ctnetlink.ParseLoad(strings.NewReader(mixedLoad), "mixed")
	if err != nil {
		t.Fatalf("ParseLoad: %v", err)
	}
	load(t, c, entries)
	load(t, c, zoneEntries(5, 1000))

	tests := []struct {
		zone   uint16
		family ctnetlink.Family
		want   int
	}{
		{zone: 3, want: 6},
		{zone: 3, family: ctnetlink.FamilyIPv6, want: 2},
		{zone: 4, want: 1},
		{zone: 0, want: 1},
		{zone: 5, want: 1000},
		{zone: 6, want: 0},
	}
	for _, tt := range tests {
		var got []string
		if err := c.DumpZone(tt.zone, tt.family, func(e ctnetlink.Entry) error {
			if e.Zone != tt.zone {
				t.Errorf("DumpZone(%d) returned an entry of zone %d", tt.zone, e.Zone)
			}
			got = append(got, e.String())
			return nil
		}); err != nil {
			t.Fatalf("DumpZone(%d): %v", tt.zone, err)
		}
		n, err := c.CountZone(tt.zone, tt.family)
		if err != nil || n != tt.want || len(got) != tt.want {
			t.Errorf("zone %d %s: CountZone = %d, %v; DumpZone %d entries; want %d", tt.zone, tt.family, n, err, len(got), tt.want)
		}
		if tt.family != ctnetlink.FamilyAny {
			continue
		}
		args := []string{"conntrack", "-L", "-w", strconv.Itoa(int(tt.zone))}
		out, err := exec.Command("ip", append([]string{"netns", "exec", ns}, args...)...).Output()
		if err != nil && tt.want != 0 {
			t.Fatalf("%v: %v", args, err)
		}
		if diff := cmp.Diff(normalize(strings.Split(string(out), "\n")), normalize(got)); diff != "" {
			t.Errorf("zone %d: text differs from conntrack -L -w (-conntrack +aclc):\n%s", tt.zone, diff)
		}
	}

	// ti-mo/conntrack as a second, independent reader of zone 5.
	f, err := os.Open(filepath.Join("/run/netns", ns))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tc, err := conntrack.Dial(&netlink.Config{NetNS: int(f.Fd())})
	if err != nil {
		t.Fatalf("ti-mo/conntrack Dial: %v", err)
	}
	defer tc.Close()
	flows, err := tc.DumpFilter(conntrack.NewFilter().Zone(5), nil)
	if err != nil {
		t.Fatalf("ti-mo/conntrack DumpFilter: %v", err)
	}
	var theirs, ours []uint32
	for _, fl := range flows {
		theirs = append(theirs, fl.ID)
	}
	if err := c.DumpZone(5, 0, func(e ctnetlink.Entry) error { ours = append(ours, e.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(theirs)
	slices.Sort(ours)
	if diff := cmp.Diff(theirs, ours); diff != "" || len(ours) != 1000 {
		t.Errorf("conntrack IDs of zone 5, %d entries (-ti-mo/conntrack +ctnetlink):\n%s", len(ours), diff)
	}
}

// TestDeleteStaleID deletes an entry by a conntrack ID that no longer
// matches (the tuple was reused by a newer entry): the kernel must answer
// ENOENT, counted as gone, and keep the newer entry.
func TestDeleteStaleID(t *testing.T) {
	c, _ := dialNetNS(t, nil)
	// As root the receive buffer is forced past net.core.rmem_max; the
	// kernel reports twice the size asked for.
	if n, err := c.ReadBuffer(); err != nil || n < ctnetlink.DefaultReadBuffer {
		t.Errorf("ReadBuffer = %d, %v; want at least %d", n, err, ctnetlink.DefaultReadBuffer)
	}
	load(t, c, zoneEntries(9, 3))
	var old []ctnetlink.Entry
	if err := c.DumpZone(9, 0, func(e ctnetlink.Entry) error { old = append(old, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(old) != 3 {
		t.Fatalf("zone 9 has %d entries, want 3", len(old))
	}
	// Dumps come in hash order; old[0] must be sport 1, what zoneEntries(9, 1) re-creates.
	slices.SortFunc(old, func(a, b ctnetlink.Entry) int {
		return int(a.Orig.Proto.SourcePort) - int(b.Orig.Proto.SourcePort)
	})
	// Replace the first entry: same tuple, new conntrack ID. The ID is a
	// hash of the entry's address and tuple, and the slab hands a freed
	// entry's memory to the next allocation, so other entries are created
	// in between; otherwise the new entry would get the very same ID.
	if _, err := c.Delete(old[:1]); err != nil {
		t.Fatal(err)
	}
	load(t, c, zoneEntries(10, 100))
	load(t, c, zoneEntries(9, 1))
	var renewed []ctnetlink.Entry
	if err := c.DumpZone(9, 0, func(e ctnetlink.Entry) error {
		if e.Orig == old[0].Orig {
			renewed = append(renewed, e)
		}
		return nil
	}); err != nil || len(renewed) != 1 || renewed[0].ID == old[0].ID {
		t.Fatalf("re-created entry %v (%v): want one with an ID other than %d", renewed, err, old[0].ID)
	}
	res, err := c.Delete(old)
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if diff := cmp.Diff(ctnetlink.DeleteResult{Deleted: 2, Gone: 1}, res); diff != "" {
		t.Errorf("Delete result (-want +got):\n%s", diff)
	}
	var left []ctnetlink.Entry
	if err := c.DumpZone(9, 0, func(e ctnetlink.Entry) error { left = append(left, e); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].Orig != old[0].Orig || left[0].ID == old[0].ID {
		t.Errorf("left %v, want only the newer entry with tuple %v", left, old[0].Orig)
	}
}

// TestProbeKernel runs the real probe and checks the per-boot cache.
func TestProbeKernel(t *testing.T) {
	testenv.NeedRoot(t)
	dir := t.TempDir()
	s, err := ctnetlink.Detect(ctnetlink.DetectOptions{CacheDir: dir, Refresh: true})
	if err != nil {
		t.Fatalf("Detect: %v", err)
	}
	t.Logf("probe: %+v", s)
	if s.Source != "probe" || s.BootID == "" || s.KernelRelease == "" || s.ZoneFlush != s.ZoneDump {
		t.Errorf("probe result %+v", s)
	}
	b, err := os.ReadFile(ctnetlink.CachePath(dir))
	if err != nil || !strings.Contains(string(b), s.BootID) {
		t.Fatalf("cache file: %v %s", err, b)
	}
	if _, err := ctnetlink.Dial(&ctnetlink.Config{NetNS: "aclc-no-such-netns"}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Dial of a missing netns: %v, want ErrNotExist", err)
	}
}
