package ctnetlink

import (
	"errors"
	"net/netip"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"
)

// fakeEntries returns n UDP entries in each of zones, IPv4 and IPv6 mixed.
func fakeEntries(zones []uint16, n int) []Entry {
	var es []Entry
	for _, z := range zones {
		for i := range n {
			e := Entry{Family: FamilyIPv4, Zone: z, Timeout: 60}
			src, dst := netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2")
			if i%2 == 1 {
				e.Family = FamilyIPv6
				src, dst = netip.MustParseAddr("2001:db8::1"), netip.MustParseAddr("2001:db8::2")
			}
			e.Orig.IP.SourceAddress, e.Orig.IP.DestinationAddress = src, dst
			e.Orig.Proto.Protocol = unix.IPPROTO_UDP
			e.Orig.Proto.SourcePort, e.Orig.Proto.DestinationPort = uint16(1000+i), 53
			e.Reply = invert(e.Orig)
			es = append(es, e)
		}
	}
	return es
}

// zoneCounts counts the fake kernel's entries per zone and family.
func zoneCounts(k *fakeKernel) map[uint16]map[Family]int {
	m := map[uint16]map[Family]int{}
	for _, e := range k.entries {
		if m[e.Zone] == nil {
			m[e.Zone] = map[Family]int{}
		}
		m[e.Zone][e.Family]++
	}
	return m
}

// zoneOnlyDeletes counts the zone-only deletes k received.
func zoneOnlyDeletes(k *fakeKernel) int {
	n := 0
	for _, m := range k.sent {
		if IsZoneOnlyDelete(m) {
			n++
		}
	}
	return n
}

func TestProbeDecides(t *testing.T) {
	tests := []struct {
		name        string
		honoursZone bool
		want        bool
	}{
		{name: "old kernel ignores the zone", honoursZone: false, want: false},
		{name: "kernel honours the zone", honoursZone: true, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &fakeKernel{honoursZone: tt.honoursZone}
			s, err := k.conn(nil).probe()
			if err != nil {
				t.Fatalf("probe: %v", err)
			}
			if s.ZoneFlush != tt.want || s.ZoneDump != tt.want {
				t.Errorf("probe = flush %v, dump %v; want %v (%s)", s.ZoneFlush, s.ZoneDump, tt.want, s.Detail)
			}
		})
	}
}

// TestOldKernelNeverZoneOnlyDelete plays a kernel that ignores the zone
// filter: the probe must find that out, and no flush may then send a
// zone-only delete (which would wipe every zone); the fallback must remove
// exactly the zone (and family) asked for.
func TestOldKernelNeverZoneOnlyDelete(t *testing.T) {
	probeKernel := &fakeKernel{}
	support, err := probeKernel.conn(nil).probe()
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	if support.ZoneFlush {
		t.Fatalf("probe of an old kernel says the zone filter works: %s", support.Detail)
	}
	zones := []uint16{0, 1, 2, 3, 65535}
	tests := []struct {
		name    string
		zone    uint16
		family  Family
		method  Method
		wantErr error
	}{
		{name: "auto", zone: 2, method: MethodAuto},
		{name: "auto zone 0", zone: 0, method: MethodAuto},
		{name: "auto zone 65535 ipv6", zone: 65535, family: FamilyIPv6, method: MethodAuto},
		{name: "fallback ipv4", zone: 1, family: FamilyIPv4, method: MethodFallback},
		{name: "kernel refused", zone: 3, method: MethodKernel, wantErr: ErrZoneFilterUnsupported},
		{name: "empty zone", zone: 77, method: MethodAuto},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := &fakeKernel{entries: fakeEntries(zones, 10)}
			for i := range k.entries {
				k.entries[i].ID = uint32(i + 1)
			}
			want := zoneCounts(k)
			c := k.conn(&Config{Support: &support})
			res, err := c.FlushZone(tt.zone, FlushOptions{Family: tt.family, Method: tt.method})
			if n := zoneOnlyDeletes(k); n != 0 {
				t.Fatalf("sent %d zone-only deletes to a kernel that ignores the zone filter", n)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("FlushZone: %v, want %v", err, tt.wantErr)
				}
			} else {
				if err != nil {
					t.Fatalf("FlushZone: %v", err)
				}
				if res.Method != MethodFallback {
					t.Errorf("method %v, want fallback", res.Method)
				}
				for f := range want[tt.zone] {
					if tt.family.matches(f) {
						res.Deleted -= want[tt.zone][f]
						delete(want[tt.zone], f)
					}
				}
				if len(want[tt.zone]) == 0 {
					delete(want, tt.zone)
				}
				if res.Deleted != 0 || res.Gone != 0 {
					t.Errorf("deleted/gone off by %d/%d", res.Deleted, res.Gone)
				}
			}
			if diff := cmp.Diff(want, zoneCounts(k)); diff != "" {
				t.Errorf("entries per zone and family (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeleteKeepsReusedTuple deletes entries whose tuple was meanwhile
// reused by a newer entry: the conntrack ID in the request keeps the newer
// entry alive, and ENOENT counts as gone.
func TestDeleteKeepsReusedTuple(t *testing.T) {
	k := &fakeKernel{honoursZone: true}
	c := k.conn(&Config{Support: &Support{ZoneFlush: true, ZoneDump: true}})
	if _, err := c.Create(fakeEntries([]uint16{5}, 4)); err != nil {
		t.Fatalf("Create: %v", err)
	}
	var old []Entry
	if err := c.DumpZone(5, FamilyAny, func(e Entry) error { old = append(old, e); return nil }); err != nil {
		t.Fatalf("DumpZone: %v", err)
	}
	// Entry 0 expires and its tuple comes back as a new connection.
	k.entries = k.entries[1:]
	if _, err := c.Create(old[:1]); err != nil {
		t.Fatalf("re-Create: %v", err)
	}
	// Entry 1 is simply gone.
	k.entries = slices.DeleteFunc(k.entries, func(e Entry) bool { return e.ID == old[1].ID })
	res, err := c.Delete(old)
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if diff := cmp.Diff(DeleteResult{Deleted: 2, Gone: 2}, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	if len(k.entries) != 1 || k.entries[0].Orig != old[0].Orig || k.entries[0].ID == old[0].ID {
		t.Errorf("left %+v, want only the new entry reusing %v", k.entries, old[0].Orig)
	}
}

// TestBatching checks that many requests share a sendmsg and that only
// the last request of each batch asks for an acknowledgement.
func TestBatching(t *testing.T) {
	k := &fakeKernel{}
	c := k.conn(&Config{BatchBytes: 4096})
	es := fakeEntries([]uint16{1, 2}, 500)
	res, err := c.Create(es)
	if err != nil || res.Inserted != len(es) {
		t.Fatalf("Create = %+v, %v; want %d inserted", res, err, len(es))
	}
	acks := 0
	for _, m := range k.sent {
		if m.Header.Flags&0x4 != 0 {
			acks++
		}
	}
	if k.sendCalls != acks || k.sendCalls < 2 || k.sendCalls > len(es)/10 {
		t.Errorf("%d requests in %d sendmsg calls with %d acks requested; want one ack per batch, ≥10 requests per batch", len(k.sent), k.sendCalls, acks)
	}
	// A second load finds everything there already.
	res, err = c.Create(es)
	if err != nil || res != (CreateResult{Existing: len(es)}) {
		t.Errorf("second Create = %+v, %v; want all existing", res, err)
	}
}

// TestCreateTableFull stops at ENOMEM and says how many went in.
func TestCreateTableFull(t *testing.T) {
	k := &fakeKernel{capacity: 700}
	c := k.conn(&Config{BatchBytes: 8192})
	res, err := c.Create(fakeEntries([]uint16{1}, 2000))
	if !errors.Is(err, ErrTableFull) {
		t.Fatalf("Create: %v, want ErrTableFull", err)
	}
	if res.Inserted != 700 || len(k.entries) != 700 {
		t.Errorf("inserted %d (table %d), want 700", res.Inserted, len(k.entries))
	}
	if len(k.sent) >= 2000 {
		t.Errorf("kept sending after the table was full: %d requests", len(k.sent))
	}
}
