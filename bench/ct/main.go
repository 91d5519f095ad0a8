// Command ct reproduces the zone flush experiment of OVS's "netlink-conntrack:
// Optimize flushing ct zone" patch (seed 000) and conntrack-tools' bulk load
// stress test (seed 002) against aclc's ctnetlink package, on this machine's
// kernel, inside throwaway network namespaces.
//
// It loads 500 zones × 1000 entries, then times 20 flushes of a loaded zone
// and 20 of an empty zone for each path: a raw single zone-only delete
// message, ctnetlink's kernel-filter path, its fallback (zone-filtered dump +
// batched deletes), the fallback as it runs on a pre-6.8 kernel (dump of
// everything), `aclc ct flush` and `conntrack -D -w`. It then times
// `aclc ct load` against `conntrack -R` on the stress script's 131,070-entry
// file and `aclc ct list --zone` against `conntrack -L -w`, and prints one
// markdown table with ratios measured in the same run.
//
// Run as root from the repository root:
//
//	go run ./bench/ct > bench/ct/RESULTS.md
//
// It never touches the root namespace's conntrack table; it raises
// net.netfilter.nf_conntrack_max (the per-namespace limit, only writable in
// the root namespace) while it runs if that is below what it loads, and
// puts it back.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mdlayher/netlink"
	"github.com/ti-mo/netfilter"
	"golang.org/x/sys/unix"

	"github.com/aclc/aclc/ctnetlink"
)

var (
	zones    = flag.Int("zones", 500, "zones to load")
	perZone  = flag.Int("per-zone", 1000, "entries per zone")
	runs     = flag.Int("runs", 20, "timed runs per flush and list row")
	loadRuns = flag.Int("load-runs", 5, "timed runs per load row")
	aclcBin  = flag.String("aclc", "", "aclc binary (default: go build ./cmd/aclc into a temporary directory)")
)

// loadAvg is /proc/loadavg's 1, 5 and 15 minute averages at the start.
var loadAvg string

func main() {
	runtime.LockOSThread() // see timeit
	flag.Parse()
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		loadAvg = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	log.SetFlags(0)
	log.SetPrefix("bench/ct: ")
	if os.Geteuid() != 0 {
		log.Fatal("needs root (network namespaces, conntrack)")
	}
	tmp, err := os.MkdirTemp("", "aclc-bench-ct-")
	check(err)
	defer os.RemoveAll(tmp)
	if *aclcBin == "" {
		*aclcBin = filepath.Join(tmp, "aclc")
		run("go", "build", "-o", *aclcBin, "./cmd/aclc")
	}
	restore := raiseMax(2 * *zones * *perZone)
	defer restore()

	support, err := ctnetlink.Detect(ctnetlink.DetectOptions{})
	check(err)
	log.Printf("kernel %s: zone flush %v, zone dump %v (%s)", support.KernelRelease, support.ZoneFlush, support.ZoneDump, support.Source)

	var rows []row
	ns := newNetNS("flush")
	defer ns.del()
	c, err := ctnetlink.Dial(&ctnetlink.Config{NetNS: ns.name, Support: &support})
	check(err)
	defer c.Close()
	start := time.Now()
	var all []ctnetlink.Entry
	for z := range *zones {
		all = append(all, zoneEntries(uint16(z), *perZone)...)
	}
	res, err := c.Create(all)
	check(err)
	log.Printf("loaded %d entries in %v", res.Inserted, time.Since(start))

	const loaded, empty = 7, 60000
	reload := func() {
		if _, err := c.Create(zoneEntries(loaded, *perZone)); err != nil {
			log.Fatalf("reload zone %d: %v", loaded, err)
		}
	}
	raw := rawFlusher(ns)
	flushes := []struct {
		name, group string
		fn          func(zone uint16)
	}{
		{"raw single delete message (mdlayher/netlink, no aclc code)", "raw", raw},
		{"ctnetlink kernel path (FlushZone, MethodKernel)", "kernel", func(z uint16) {
			_, err := c.FlushZone(z, ctnetlink.FlushOptions{Method: ctnetlink.MethodKernel})
			check(err)
		}},
		{"ctnetlink fallback (zone-filtered dump + batched deletes)", "fallback", func(z uint16) {
			_, err := c.FlushZone(z, ctnetlink.FlushOptions{Method: ctnetlink.MethodFallback})
			check(err)
		}},
		{"ctnetlink fallback as on a pre-6.8 kernel (dump everything)", "fallback-old", func(z uint16) {
			var es []ctnetlink.Entry
			check(c.DumpAll(ctnetlink.FamilyAny, func(e ctnetlink.Entry) error {
				if e.Zone == z {
					es = append(es, e)
				}
				return nil
			}))
			_, err := c.Delete(es)
			check(err)
		}},
		{"`aclc ct flush --zone Z --netns NS` (process, cached probe)", "aclc-cli", func(z uint16) {
			run(*aclcBin, "ct", "flush", "--netns", ns.name, "--zone", strconv.Itoa(int(z)))
		}},
		{"`conntrack -D -w Z` (process, via nsenter)", "conntrack", func(z uint16) {
			runOK(ns.cmd("conntrack", "-D", "-w", strconv.Itoa(int(z))), 1) // exit 1 when nothing matched
		}},
	}
	// Runs are interleaved (every path once per round) so that load from
	// elsewhere on the machine spreads over all paths alike.
	with := make([][]sample, len(flushes))
	without := make([][]sample, len(flushes))
	for range *runs {
		for i, f := range flushes {
			if (f.group == "raw" || f.group == "kernel") && !support.ZoneFlush {
				continue // a zone-only delete would flush every zone
			}
			with[i] = append(with[i], timeit(func() { f.fn(loaded) }))
			if n, err := c.CountZone(loaded, ctnetlink.FamilyAny); err != nil || n != 0 {
				log.Fatalf("%s: zone %d has %d entries after the flush (%v)", f.name, loaded, n, err)
			}
			reload()
			without[i] = append(without[i], timeit(func() { f.fn(empty) }))
		}
	}
	for i, f := range flushes {
		if len(with[i]) == 0 {
			continue
		}
		rows = append(rows,
			row{section: "flush zone with 1000 entries", name: f.name, group: f.group, d: with[i]},
			row{section: "flush zone with no entry", name: f.name, group: f.group, d: without[i]})
	}
	log.Printf("done: flush")
	total, err := c.CountByZone(ctnetlink.FamilyAny)
	check(err)
	if len(total) != *zones {
		log.Fatalf("after the flush runs %d zones have entries, want %d", len(total), *zones)
	}

	// zone list on the full table
	z := strconv.Itoa(loaded)
	rawDump := rawDumper(ns)
	list := interleave(*runs,
		step{timed: func() { rawDump(loaded) }},
		step{timed: func() { run(*aclcBin, "ct", "list", "--netns", ns.name, "--zone", z) }},
		step{timed: func() { check(c.DumpZone(loaded, 0, func(ctnetlink.Entry) error { return nil })) }},
		step{timed: func() { run(ns.cmd("conntrack", "-L", "-w", z)...) }})
	const listSect = "list one zone of 1000 entries"
	rows = append(rows,
		row{section: listSect, name: "raw single zone-filtered dump request (mdlayher/netlink with its default buffers, no aclc code)", group: "raw-list", d: list[0]},
		row{section: listSect, name: "`aclc ct list --zone Z --netns NS` (process)", group: "aclc-list", d: list[1]},
		row{section: listSect, name: "ctnetlink DumpZone (in process)", group: "lib-list", d: list[2]},
		row{section: listSect, name: "`conntrack -L -w Z` (process, via nsenter)", group: "conntrack-list", d: list[3]})
	log.Printf("done: list")

	// bulk load, seed 002's file, in an empty namespace
	file := filepath.Join(tmp, "ct_data.txt")
	n := writeStressFile(file, 123, 0xffff, 2)
	lns := newNetNS("load")
	defer lns.del()
	lc, err := ctnetlink.Dial(&ctnetlink.Config{NetNS: lns.name, Support: &support})
	check(err)
	defer lc.Close()
	loadOnce := func(argv []string) step {
		return step{timed: func() { run(argv...) }, after: func() {
			if got, err := lc.CountZone(123, 0); err != nil || got != n {
				log.Fatalf("%s loaded %d entries, want %d (%v)", argv, got, n, err)
			}
			_, err := lc.FlushZone(123, ctnetlink.FlushOptions{})
			check(err)
		}}
	}
	load := interleave(*loadRuns,
		loadOnce([]string{*aclcBin, "ct", "load", "--netns", lns.name, file}),
		loadOnce(lns.cmd("conntrack", "-R", file)))
	loadSect := fmt.Sprintf("load %d entries (seed 002 stress file)", n)
	rows = append(rows,
		row{section: loadSect, name: "`aclc ct load FILE --netns NS` (parse + batched create)", group: "aclc-load", d: load[0]},
		row{section: loadSect, name: "`conntrack -R FILE` (via nsenter)", group: "conntrack-load", d: load[1]})
	log.Printf("done: load")
	report(os.Stdout, rows, support)
}

// row is one timed line of the table.
type row struct {
	section, name, group string
	d                    []sample
}

// sample is one timed run: wall-clock time, and CPU time (user + system)
// of the measuring thread plus any child processes. CPU time shows the
// work itself; wall time also counts waiting for a CPU on a busy machine.
type sample struct{ wall, cpu time.Duration }

func (r row) wall() []time.Duration { return r.pick(func(s sample) time.Duration { return s.wall }) }
func (r row) cpu() []time.Duration  { return r.pick(func(s sample) time.Duration { return s.cpu }) }

func (r row) pick(f func(sample) time.Duration) []time.Duration {
	var d []time.Duration
	for _, s := range r.d {
		d = append(d, f(s))
	}
	return d
}

// pct returns the p-th percentile (nearest rank) of d.
func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	i := (p*len(s) + 99) / 100
	return s[max(i-1, 0)]
}

// report prints the markdown table and the target checks.
func report(w io.Writer, rows []row, s ctnetlink.Support) {
	fmt.Fprintf(w, "# ctnetlink zone flush, list and load benchmark\n\n")
	cmd := "go run ./bench/ct " + strings.Join(os.Args[1:], " ")
	if prio, err := unix.Getpriority(unix.PRIO_PROCESS, 0); err == nil && prio != 20 {
		// The raw syscall returns 20 - nice.
		cmd = fmt.Sprintf("nice -n %d %s", 20-prio, cmd)
	}
	fmt.Fprintf(w, "Made by `%s` (as root) on %s, kernel %s, %d CPUs, Go %s, load average before the run %s.\n",
		strings.TrimSpace(cmd), time.Now().UTC().Format("2006-01-02 15:04 MST"), s.KernelRelease, numCPU(), goVersion(), loadAvg)
	fmt.Fprintf(w, "Table: %d zones × %d entries in a throwaway network namespace; %d runs per flush/list row, %d per load row.\n",
		*zones, *perZone, *runs, *loadRuns)
	fmt.Fprintf(w, "Kernel zone filter: flush %v, dump %v (%s).\n\n", s.ZoneFlush, s.ZoneDump, s.Detail)
	med, medCPU := map[string]time.Duration{}, map[string]time.Duration{}
	var sections []string
	for _, r := range rows {
		if !slices.Contains(sections, r.section) {
			sections = append(sections, r.section)
		}
	}
	for _, section := range sections {
		fmt.Fprintf(w, "\n## %s\n\n| path | min (s) | median (s) | p90 (s) | max (s) | median CPU (s) | runs |\n|---|---:|---:|---:|---:|---:|---:|\n", section)
		for _, r := range rows {
			if r.section != section {
				continue
			}
			wall := r.wall()
			fmt.Fprintf(w, "| %s | %.4f | %.4f | %.4f | %.4f | %.4f | %d |\n", r.name, secs(slices.Min(wall)), secs(pct(wall, 50)), secs(pct(wall, 90)), secs(slices.Max(wall)), secs(pct(r.cpu(), 50)), len(wall))
			med[r.section+"/"+r.group] = pct(wall, 50)
			medCPU[r.section+"/"+r.group] = pct(r.cpu(), 50)
		}
	}
	fmt.Fprintf(w, "\n## Ratios of medians (same run) and targets\n\n| comparison | wall ratio | CPU ratio | target (wall) | met |\n|---|---:|---:|---|---|\n")
	ratio := func(desc, sect, slow, fast string, op string, target float64) {
		a, b := med[sect+"/"+slow], med[sect+"/"+fast]
		if a == 0 || b == 0 {
			fmt.Fprintf(w, "| %s | n/a | n/a | %s %.1f | not measured |\n", desc, op, target)
			return
		}
		r := float64(a) / float64(b)
		rc := float64(medCPU[sect+"/"+slow]) / float64(max(medCPU[sect+"/"+fast], time.Microsecond))
		if op == "" {
			// A bound, not a target: what no client can beat.
			fmt.Fprintf(w, "| %s | %.2f× | %.2f× | (bound for any client) | |\n", desc, r, rc)
			return
		}
		met := r >= target
		if op == "≤" {
			met = r <= target
		}
		fmt.Fprintf(w, "| %s | %.2f× | %.2f× | %s %.1f× | %v |\n", desc, r, rc, op, target, yes(met))
	}
	for _, sect := range []string{"flush zone with 1000 entries", "flush zone with no entry"} {
		ratio("kernel path / raw single message ("+sect+")", sect, "kernel", "raw", "≤", 1.2)
		ratio("`conntrack -D -w` / raw single message ("+sect+")", sect, "conntrack", "raw", "", 0)
		ratio("`conntrack -D -w` / kernel path ("+sect+")", sect, "conntrack", "kernel", "≥", 10)
		ratio("`conntrack -D -w` / `aclc ct flush` process ("+sect+")", sect, "conntrack", "aclc-cli", "≥", 10)
		ratio("`conntrack -D -w` / fallback ("+sect+")", sect, "conntrack", "fallback", "≥", 2)
		ratio("`conntrack -D -w` / fallback as on pre-6.8 ("+sect+")", sect, "conntrack", "fallback-old", "≥", 2)
	}
	for _, r := range rows {
		if r.group == "aclc-load" {
			ratio("`conntrack -R` / `aclc ct load`", r.section, "conntrack-load", "aclc-load", "≥", 3)
		}
	}
	ratio("`conntrack -L -w` / ctnetlink DumpZone", "list one zone of 1000 entries", "conntrack-list", "lib-list", "≥", 10)
	ratio("`conntrack -L -w` / `aclc ct list --zone`", "list one zone of 1000 entries", "conntrack-list", "aclc-list", "≥", 10)
	fmt.Fprintf(w, "\nRatios are slower median / faster median, except \"kernel path / raw single message\", which is the kernel path's median over the raw message's (target ≤ 1.2×). CPU time is user + system time of the measuring thread and of the commands it ran; wall time also includes waiting for a CPU, which on a busy machine dominates.\n")
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

func secs(d time.Duration) float64 { return d.Seconds() }

// timeit runs fn and measures it. main locks its goroutine to one thread,
// so RUSAGE_THREAD covers the kernel work done in its syscalls (a flush
// walks the table inside sendmsg, a dump inside recvmsg); RUSAGE_CHILDREN
// covers the commands run and waited for.
func timeit(fn func()) sample {
	c0 := cpuNow()
	start := time.Now()
	fn()
	return sample{wall: time.Since(start), cpu: cpuNow() - c0}
}

func cpuNow() time.Duration {
	var t, ch unix.Rusage
	check(unix.Getrusage(unix.RUSAGE_THREAD, &t))
	check(unix.Getrusage(unix.RUSAGE_CHILDREN, &ch))
	tv := func(v unix.Timeval) time.Duration { return time.Duration(v.Nano()) }
	return tv(t.Utime) + tv(t.Stime) + tv(ch.Utime) + tv(ch.Stime)
}

// step is one timed action and an untimed check or cleanup after it.
type step struct{ timed, after func() }

// interleave runs every step once per round, n rounds, and returns the
// durations of each step's timed part.
func interleave(n int, steps ...step) [][]sample {
	d := make([][]sample, len(steps))
	for range n {
		for i, s := range steps {
			d[i] = append(d[i], timeit(s.timed))
			if s.after != nil {
				s.after()
			}
		}
	}
	return d
}

// rawFlusher returns a flush that sends one hand-built zone-only delete
// with mdlayher/netlink and ti-mo/netfilter only: the floor for the kernel
// path.
func rawFlusher(ns netNS) func(uint16) {
	return rawZoneRequest(ns, 2, netlink.Acknowledge) // IPCTNL_MSG_CT_DELETE
}

// rawDumper returns a zone list that sends one hand-built zone-filtered
// dump request the same way, with the library's default buffers, and
// drops the answer.
func rawDumper(ns netNS) func(uint16) {
	return rawZoneRequest(ns, 1, netlink.Dump) // IPCTNL_MSG_CT_GET
}

// rawZoneRequest returns a function that sends one ctnetlink request of
// type typ carrying only CTA_ZONE, on a socket opened once in ns, and waits
// for its answer.
func rawZoneRequest(ns netNS, typ netfilter.MessageType, flags netlink.HeaderFlags) func(uint16) {
	f, err := os.Open("/run/netns/" + ns.name)
	check(err)
	nl, err := netlink.Dial(unix.NETLINK_NETFILTER, &netlink.Config{NetNS: int(f.Fd())})
	check(err)
	f.Close()
	return func(zone uint16) {
		ae := netfilter.NewAttributeEncoder()
		ae.Uint16(18, zone) // CTA_ZONE
		m, err := netfilter.EncodeNetlink(netfilter.Header{
			SubsystemID: netfilter.NFSubsysCTNetlink, MessageType: typ,
			Flags: netlink.Request | flags,
		}, ae)
		check(err)
		_, err = nl.Execute(m)
		check(err)
	}
}

// zoneEntries returns n TCP entries 1.1.1.1:1..n -> 2.2.2.2:80 in zone.
func zoneEntries(zone uint16, n int) []ctnetlink.Entry {
	es := make([]ctnetlink.Entry, n)
	for i := range es {
		e := &es[i]
		e.Family, e.Zone, e.Timeout, e.TCPState = ctnetlink.FamilyIPv4, zone, 3600, 3
		e.Status = 2 // SEEN_REPLY
		e.Orig.IP.SourceAddress = netip.AddrFrom4([4]byte{1, 1, 1, 1})
		e.Orig.IP.DestinationAddress = netip.AddrFrom4([4]byte{2, 2, 2, 2})
		e.Orig.Proto.Protocol = unix.IPPROTO_TCP
		e.Orig.Proto.SourcePort, e.Orig.Proto.DestinationPort = uint16(i+1), 80
	}
	return es
}

// writeStressFile writes the lines of conntrack-tools'
// tests/conntrack/bulk-load-stress.sh (ct_data_gen) and returns their count.
func writeStressFile(path string, zone, sports, dports int) int {
	var b strings.Builder
	n := 0
	for d := 1; d <= dports; d++ {
		for s := 1; s <= sports; s++ {
			fmt.Fprintf(&b, "-I -w %d -s 1.1.1.1 -d 2.2.2.2 -p tcp --sport %d --dport %d --state LISTEN -u SEEN_REPLY -t 50\n", zone, s, d)
			n++
		}
	}
	check(os.WriteFile(path, []byte(b.String()), 0o644))
	return n
}

// netNS is a named network namespace made with ip netns add.
type netNS struct{ name string }

func newNetNS(tag string) netNS {
	n := netNS{fmt.Sprintf("aclc-bench-%s-%d", tag, os.Getpid())}
	run("ip", "netns", "add", n.name)
	return n
}

func (n netNS) del() { _ = exec.Command("ip", "netns", "del", n.name).Run() }

// cmd returns argv running args inside n (nsenter: cheaper than ip netns exec).
func (n netNS) cmd(args ...string) []string {
	return append([]string{"nsenter", "--net=/run/netns/" + n.name, "--"}, args...)
}

func run(argv ...string) { runOK(argv) }

// runOK runs argv, output discarded, and fails unless it exits 0 or one
// of okCodes.
func runOK(argv []string, okCodes ...int) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok && slices.Contains(okCodes, ee.ExitCode()) {
		return
	}
	if err != nil {
		log.Fatalf("%s: %v: %s", strings.Join(argv, " "), err, stderr.String())
	}
}

const maxPath = "/proc/sys/net/netfilter/nf_conntrack_max"

// raiseMax raises nf_conntrack_max to at least n and returns the undo.
func raiseMax(n int) func() {
	b, err := os.ReadFile(maxPath)
	check(err)
	old, err := strconv.Atoi(strings.TrimSpace(string(b)))
	check(err)
	if old >= n {
		return func() {}
	}
	check(os.WriteFile(maxPath, []byte(strconv.Itoa(n)), 0o644))
	log.Printf("raised nf_conntrack_max from %d to %d while running", old, n)
	return func() { _ = os.WriteFile(maxPath, []byte(strconv.Itoa(old)), 0o644) }
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}

func goVersion() string {
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
