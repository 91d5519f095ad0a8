package ctnetlink

import (
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Support says whether the running kernel honours the CTA_ZONE filter of
// ctnetlink (Linux >= 6.8 with the zone-0 fix, or a backport), and how
// that was decided. Kernels without it accept the attribute and ignore
// it: a zone dump returns every zone and a zone-only delete flushes every
// zone, both with a success reply, so only an experiment can tell.
type Support struct {
	// ZoneFlush is true when a delete request carrying only a zone
	// removed exactly that zone.
	ZoneFlush bool `json:"zone_flush"`
	// ZoneDump is true when a dump request carrying a zone (including
	// zone 0) returned only that zone.
	ZoneDump bool `json:"zone_dump"`
	// KernelRelease and BootID identify the boot the result holds for.
	KernelRelease string `json:"kernel_release"`
	BootID        string `json:"boot_id"`
	// ProbedAt is when the probe ran.
	ProbedAt time.Time `json:"probed_at"`
	// Detail tells what the probe saw.
	Detail string `json:"detail"`
	// Source is "probe", "cache <file>" or "config".
	Source string `json:"source"`
}

// Support returns the kernel support c's zone operations rely on:
// Config.Support when given, else the process-wide Detect result.
func (c *Conn) Support() (Support, error) {
	if c.support != nil {
		s := *c.support
		if s.Source == "" {
			s.Source = "config"
		}
		return s, nil
	}
	return Detect(DetectOptions{})
}

// DetectOptions tunes Detect.
type DetectOptions struct {
	// CacheDir holds the per-boot cache file; "" means DefaultCacheDir().
	CacheDir string
	// NoCache neither reads nor writes the cache file.
	NoCache bool
	// Refresh ignores the process and file caches, probes again and
	// rewrites the file.
	Refresh bool
}

var detected struct {
	sync.Mutex
	ok bool
	s  Support
}

// Detect returns whether the kernel honours the zone filter. The probe
// runs at most once per process; its result is also cached per boot in
// CacheDir (keyed by kernel release and boot ID), so that each CLI call
// does not pay for it again. Probing needs root (it creates a network
// namespace).
func Detect(opts DetectOptions) (Support, error) {
	detected.Lock()
	defer detected.Unlock()
	if detected.ok && !opts.Refresh {
		return detected.s, nil
	}
	release, bootID, err := bootKey()
	if err != nil {
		return Support{}, &OpError{Op: "probe", Zone: -1, Err: err}
	}
	dir := opts.CacheDir
	if dir == "" {
		dir = DefaultCacheDir()
	}
	if !opts.NoCache && !opts.Refresh {
		// Callers without root may still use what root's probe found.
		for _, d := range []string{dir, rootCacheDir} {
			if d == "" {
				continue
			}
			if s, ok := readCache(d, release, bootID); ok {
				detected.ok, detected.s = true, s
				return s, nil
			}
		}
	}
	s, err := Probe()
	if err != nil {
		return Support{}, err
	}
	if !opts.NoCache && dir != "" {
		if err := writeCache(dir, s); err != nil {
			s.Detail += fmt.Sprintf(" (cache not written: %v)", err)
		}
	}
	detected.ok, detected.s = true, s
	return s, nil
}

// Probe runs the zone filter experiment in a throwaway network namespace
// (it needs root or CAP_SYS_ADMIN and CAP_NET_ADMIN). It never touches
// the caller's namespace.
func Probe() (Support, error) {
	ns, err := newThrowawayNetNS()
	if err != nil {
		return Support{}, (*Conn)(nil).opError("probe", -1, fmt.Errorf("create throwaway network namespace: %w", err))
	}
	defer ns.Close()
	c, err := Dial(&Config{NetNSPath: fmt.Sprintf("/proc/self/fd/%d", ns.Fd())})
	if err != nil {
		return Support{}, err
	}
	defer c.Close()
	s, err := c.probe()
	if err != nil {
		return Support{}, err
	}
	s.KernelRelease, s.BootID, _ = bootKey()
	return s, nil
}

// newThrowawayNetNS creates a network namespace no process lives in and
// returns a file keeping it alive; closing the file (and every socket
// made in it) destroys it. The namespace is entered by a locked thread
// that then exits without unlocking, so the Go runtime discards that
// thread instead of reusing it in the wrong namespace.
func newThrowawayNetNS() (*os.File, error) {
	type result struct {
		f   *os.File
		err error
	}
	ch := make(chan result)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with us
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- result{err: os.NewSyscallError("unshare", err)}
			return
		}
		f, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
		ch <- result{f, err}
	}()
	r := <-ch
	return r.f, r.err
}

// probe runs the experiment on c, whose namespace must be a throwaway one:
// on an old kernel the zone-only delete flushes all of it. It inserts one
// entry in each of zones 0, 1 and 2, dumps zones 0 and 2 with the zone
// filter, flushes zone 1 with a zone-only delete and looks at what is left.
func (c *Conn) probe() (Support, error) {
	s := Support{Source: "probe", ProbedAt: time.Now().UTC()}
	var entries []Entry
	for zone := range uint16(3) {
		entries = append(entries, probeEntry(zone))
	}
	if _, err := c.Create(entries); err != nil {
		return s, c.opError("probe", -1, err)
	}
	var notes []string
	s.ZoneDump = true
	for _, zone := range []uint16{0, 2} {
		var got []uint16
		if err := c.dump(&zone, FamilyAny, nil, func(e Entry) error { got = append(got, e.Zone); return nil }); err != nil {
			return s, c.opError("probe", int(zone), err)
		}
		ok := slices.Equal(got, []uint16{zone})
		s.ZoneDump = s.ZoneDump && ok
		notes = append(notes, fmt.Sprintf("dump of zone %d returned zones %v (want [%d])", zone, got, zone))
	}
	if err := c.flushKernel(1, FamilyAny); err != nil {
		return s, c.opError("probe", 1, err)
	}
	var left []uint16
	if err := c.dump(nil, FamilyAny, nil, func(e Entry) error { left = append(left, e.Zone); return nil }); err != nil {
		return s, c.opError("probe", -1, err)
	}
	slices.Sort(left)
	s.ZoneFlush = slices.Equal(left, []uint16{0, 2})
	notes = append(notes, fmt.Sprintf("zone-only delete of zone 1 left zones %v (want [0 2])", left))
	s.Detail = "probe in a throwaway network namespace with one entry in each of zones 0, 1, 2: " + strings.Join(notes, "; ")
	return s, nil
}

// probeEntry is the probe's UDP entry in zone.
func probeEntry(zone uint16) Entry {
	e := Entry{Family: FamilyIPv4, Zone: zone, Timeout: 30}
	e.Orig.IP.SourceAddress = netip.AddrFrom4([4]byte{192, 0, 2, 1})
	e.Orig.IP.DestinationAddress = netip.AddrFrom4([4]byte{192, 0, 2, 2})
	e.Orig.Proto.Protocol = unix.IPPROTO_UDP
	e.Orig.Proto.SourcePort = 1000 + zone
	e.Orig.Proto.DestinationPort = 53
	return e
}

// bootKey returns the kernel release and the boot ID.
func bootKey() (release, bootID string, err error) {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "", "", err
	}
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", "", err
	}
	return unix.ByteSliceToString(u.Release[:]), strings.TrimSpace(string(b)), nil
}
