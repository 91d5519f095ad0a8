package ctnetlink_test

import (
	"net/netip"
	"testing"
	"time"

	"github.com/aclc/aclc/ctnetlink"
	"github.com/aclc/aclc/internal/netnstest"
	"github.com/aclc/aclc/internal/testenv"
)

// zoneEntries returns n TCP entries of zone: 1.1.1.1:sport -> 2.2.2.2:80
// with sport 1..n, the same tuples in every zone.
func zoneEntries(zone uint16, n int) []ctnetlink.Entry {
	return netnstest.TCPEntries(zone, n, netip.AddrFrom4([4]byte{1, 1, 1, 1}), netip.AddrFrom4([4]byte{2, 2, 2, 2}), 1)
}

// table returns zones×perZone entries in zones 0..zones-1.
func table(zones, perZone int) []ctnetlink.Entry {
	all := make([]ctnetlink.Entry, 0, zones*perZone)
	for z := range zones {
		all = append(all, zoneEntries(uint16(z), perZone)...)
	}
	return all
}

// dialNetNS creates a throwaway namespace and a Conn inside it.
func dialNetNS(t testing.TB, cfg *ctnetlink.Config) (*ctnetlink.Conn, string) {
	t.Helper()
	testenv.NeedBinaries(t, "ip", "conntrack")
	name := netnstest.New(t)
	if cfg == nil {
		cfg = &ctnetlink.Config{}
	}
	cfg.NetNS = name
	c, err := ctnetlink.Dial(cfg)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, name
}

// load inserts entries and fails t unless all went in.
func load(t testing.TB, c *ctnetlink.Conn, entries []ctnetlink.Entry) {
	t.Helper()
	res, err := c.Create(entries)
	if err != nil {
		t.Fatalf("Create: %v (result %+v)", err, res)
	}
	if res.Inserted != len(entries) {
		t.Fatalf("Create inserted %d, want %d (%+v)", res.Inserted, len(entries), res)
	}
}

// loadedNetNS makes a throwaway namespace holding zones × perZone entries
// (zones 0..zones-1) and probes kernel support once for the process, with
// a private cache so tests never write the system's /run/aclc.
func loadedNetNS(tb testing.TB, zones, perZone int) (*ctnetlink.Conn, string, ctnetlink.Support) {
	tb.Helper()
	netnstest.RaiseConntrackMax(tb, 2*zones*perZone)
	c, ns := dialNetNS(tb, nil)
	start := time.Now()
	load(tb, c, table(zones, perZone))
	tb.Logf("loaded %d entries in %v", zones*perZone, time.Since(start))
	support, err := ctnetlink.Detect(ctnetlink.DetectOptions{CacheDir: tb.TempDir()})
	if err != nil {
		tb.Fatalf("Detect: %v", err)
	}
	tb.Logf("kernel support: %+v", support)
	return c, ns, support
}
