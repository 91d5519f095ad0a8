package ctnetlink_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aclc/aclc/ctnetlink"
)

// BenchmarkZone loads zones × 1000 entries into a throwaway namespace once,
// then times zone flushes (kernel filter and fallback, loaded and empty
// zone) and a zone list. Each iteration reloads the flushed zone with the
// timer stopped. CI smoke-runs it with -benchtime=1x.
func BenchmarkZone(b *testing.B) {
	const zones, perZone = 100, 1000
	c, _, support := loadedNetNS(b, zones, perZone)
	const zone, empty = 7, 60000
	flush := func(b *testing.B, z uint16, m ctnetlink.Method, reload bool) {
		if m == ctnetlink.MethodKernel && !support.ZoneFlush {
			b.Skip("kernel ignores the zone filter")
		}
		deleted := 0
		for b.Loop() {
			res, err := c.FlushZone(z, ctnetlink.FlushOptions{Method: m})
			if err != nil {
				b.Fatalf("FlushZone: %v", err)
			}
			deleted += res.Deleted
			if reload {
				b.StopTimer()
				load(b, c, zoneEntries(z, perZone))
				b.StartTimer()
			}
		}
		b.ReportMetric(float64(zones*perZone), "table-entries")
		if m == ctnetlink.MethodFallback {
			b.ReportMetric(float64(deleted)/float64(b.N), "deleted/op")
		}
	}
	b.Run("FlushKernel", func(b *testing.B) { flush(b, zone, ctnetlink.MethodKernel, true) })
	b.Run("FlushFallback", func(b *testing.B) { flush(b, zone, ctnetlink.MethodFallback, true) })
	b.Run("FlushEmptyKernel", func(b *testing.B) { flush(b, empty, ctnetlink.MethodKernel, false) })
	b.Run("FlushEmptyFallback", func(b *testing.B) { flush(b, empty, ctnetlink.MethodFallback, false) })
	b.Run("ListZone", func(b *testing.B) {
		n := 0
		for b.Loop() {
			if err := c.DumpZone(zone, ctnetlink.FamilyAny, func(ctnetlink.Entry) error { n++; return nil }); err != nil {
				b.Fatalf("DumpZone: %v", err)
			}
		}
		b.ReportMetric(float64(n)/float64(b.N), "entries/op")
	})
}

// BenchmarkLoad parses and inserts conntrack-tools' bulk-load stress file
// (131,070 lines, seed 002), flushing it again with the timer stopped.
func BenchmarkLoad(b *testing.B) {
	c, _ := dialNetNS(b, nil)
	var sb strings.Builder
	for d := 1; d <= 2; d++ {
		for s := 1; s <= 0xffff; s++ {
			fmt.Fprintf(&sb, "-I -w 123 -s 1.1.1.1 -d 2.2.2.2 -p tcp --sport %d --dport %d --state LISTEN -u SEEN_REPLY -t 50\n", s, d)
		}
	}
	file := sb.String()
	n := 0
	for b.Loop() {
		entries, err := ctnetlink.ParseLoad(strings.NewReader(file), "stress")
		if err != nil {
			b.Fatalf("ParseLoad: %v", err)
		}
		load(b, c, entries)
		n += len(entries)
		b.StopTimer()
		if _, err := c.FlushZone(123, ctnetlink.FlushOptions{Method: ctnetlink.MethodFallback}); err != nil {
			b.Fatalf("FlushZone: %v", err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "entries/s")
}
