package ctnetlink_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/ctnetlink"
	"github.com/aclc/aclc/internal/netnstest"
	"github.com/google/go-cmp/cmp"
)

// TestFlushZoneLarge loads 500 zones × 1000 entries into a throwaway
// namespace, flushes single zones with the kernel filter and with the
// fallback, and checks with a full dump (and conntrack -C) that exactly
// those zones went.
func TestFlushZoneLarge(t *testing.T) {
	const zones, perZone = 500, 1000
	c, ns, support := loadedNetNS(t, zones, perZone)

	want := map[uint16]int{}
	for z := range uint16(zones) {
		want[z] = perZone
	}
	check := func(t *testing.T) {
		t.Helper()
		got, err := c.CountByZone(ctnetlink.FamilyAny)
		if err != nil {
			t.Fatalf("CountByZone: %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("entries per zone (-want +got):\n%s", diff)
		}
		total := 0
		for _, n := range want {
			total += n
		}
		out, err := netnstest.Exec(t, ns, "conntrack", "-C")
		if err != nil {
			t.Fatalf("conntrack -C: %v: %s", err, out)
		}
		if n, err := strconv.Atoi(strings.TrimSpace(string(out))); err != nil || n != total {
			t.Fatalf("conntrack -C = %q, want %d", out, total)
		}
	}
	check(t)

	tests := []struct {
		name   string
		zone   uint16
		method ctnetlink.Method
		empty  bool
	}{
		{name: "kernel", zone: 17, method: ctnetlink.MethodKernel},
		{name: "kernel zone 0", zone: 0, method: ctnetlink.MethodKernel},
		{name: "fallback", zone: 42, method: ctnetlink.MethodFallback},
		{name: "auto", zone: 43, method: ctnetlink.MethodAuto},
		{name: "kernel empty zone", zone: 4000, method: ctnetlink.MethodKernel, empty: true},
		{name: "fallback empty zone", zone: 4001, method: ctnetlink.MethodFallback, empty: true},
		{name: "kernel again", zone: 17, method: ctnetlink.MethodKernel, empty: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res, err := c.FlushZone(tt.zone, ctnetlink.FlushOptions{Method: tt.method})
			took := time.Since(start)
			if tt.method == ctnetlink.MethodKernel && !support.ZoneFlush {
				if !errors.Is(err, ctnetlink.ErrZoneFilterUnsupported) {
					t.Fatalf("FlushZone on a kernel without zone filter: err = %v, want ErrZoneFilterUnsupported", err)
				}
				check(t)
				return
			}
			if err != nil {
				t.Fatalf("FlushZone: %v", err)
			}
			t.Logf("flush zone %d: %+v in %v", tt.zone, res, took)
			if res.Method == ctnetlink.MethodFallback {
				wantDeleted := perZone
				if tt.empty {
					wantDeleted = 0
				}
				if res.Deleted != wantDeleted || res.Gone != 0 {
					t.Errorf("deleted %d, gone %d; want %d, 0", res.Deleted, res.Gone, wantDeleted)
				}
			}
			delete(want, tt.zone)
			check(t)
		})
	}
}
