// Command northd-vs-aclc runs the real ovn-northd of one release (-release:
// 23.03 on the host, 25.03 or 26.03 from their roots) and aclc side by
// side on generated NBs of 1k, 10k and 50k ACLs and prints a Markdown table
// of what each takes: northd's lflow build (its stopwatch/show figures:
// build_lflows in 23.03; from 24.03 on, which has none, the lflow engine
// node, which like build_lflows includes the SB sync, and its
// lflows_to_sb part),
// the time from the NB load transaction's commit until the SB is synced
// (ovn-nbctl --wait=sb sync), northd's peak RSS; `aclc compile --nb` end to
// end (the built binary, stdout to /dev/null) with its peak RSS, and the
// compile step alone; the ACL-stage flow counts of both sides, which must
// be equal, and whether the flows themselves are. It then measures how
// aclc's compile time and memory grow with the number of ACLs at a fixed
// number of switches and with the number of switches at a fixed number of
// ACLs, and fits the exponents (log-log least squares).
//
// Run it from the repository root:
//
//	go run ./bench/northd-vs-aclc -o bench/RESULTS.md
//
// Every ovsdb-server and ovn-northd it starts is stopped when it ends, fails
// or is interrupted.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/internal/ovnroot"
	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
)

// size is one side-by-side configuration.
type size struct {
	name string
	p    nbgen.Params
}

func params(n, s, g, a int) nbgen.Params {
	p := nbgen.Default()
	p.ACLs, p.Switches, p.PortGroups, p.AddressSets = n, s, g, a
	return p
}

var allSizes = []size{
	{"1k", params(1000, 50, 100, 200)},
	{"10k", params(10000, 200, 500, 1000)},
	{"50k", params(50000, 500, 2500, 5000)},
	// Issue 24's largest clusters: 20,000 ports on 2,000 switches, 10,000
	// port groups, 20,000 address sets; and five times that.
	{"200k", params(200000, 2000, 10000, 20000)},
	{"1M", params(1000000, 10000, 50000, 100000)},
}

// clusterPolicies is how many ACLs the cluster shape puts on its
// cluster-wide port group at the sizes above 50k. Its flows are on every
// switch: the 10% of the smaller sizes (5,000 of 50k ACLs on 500
// switches: 4.7M flows) would be 18,000 ACLs on 2,000 switches at 200k
// (about 75M flows; northd 26.03.1 was OOM-killed at 12 GB on that NB)
// and 90,000 on 10,000 switches at 1M (about 1.8G flows). ovn-kubernetes
// puts a few cluster-wide policies there, not a tenth of them.
const clusterPolicies = 200

// sizeNames are the names of allSizes.
func sizeNames() string {
	var n []string
	for _, s := range allSizes {
		n = append(n, s.name)
	}
	return strings.Join(n, ", ")
}

// result is what one size measured.
type result struct {
	size
	loadTxn      time.Duration // NB load, one transaction, until committed
	synced       time.Duration // commit -> ovn-nbctl --wait=sb sync returns
	buildLflows  time.Duration // northd stopwatch build_lflows (lflow from 24.03), maximum sample
	toSB         time.Duration // northd stopwatch lflows_to_sb (24.03+), maximum sample
	nbRun        time.Duration // northd stopwatch ovnnb_db_run, maximum sample
	northdRSS    int64         // KiB, VmHWM
	northdFlows  int
	lflowList    time.Duration              // ovn-sbctl lflow-list, when run
	sbSelect     time.Duration              // the SB select of the ACL-stage flows
	readNB       time.Duration              // nbschema.LoadLive in process (least of the runs)
	rawRead      stats                      // LoadLive's request, reply only scanned (rawRead)
	rawBytes     int                        // the one transaction's reply
	rawBy        map[string][]time.Duration // each raw read, by read method
	compileStep  stats
	compileCPU   time.Duration // least CPU time (all threads, GC included) of one compile
	e2e          stats
	aclcRSS      int64  // KiB, max over the runs
	northd       bool   // northd ran on this size
	northdFailed string // why northd gave no flows, when it died
	aclcFlows    int
	differences  int
	sbLflowsRows int
}

var (
	flagSizes     = flag.String("sizes", "1k,10k,50k", "comma-separated sizes to run side by side (1k, 10k, 50k, 200k, 1M)")
	flagShapes    = flag.String("shapes", "consecutive", "comma-separated nbgen port group layouts to run each size in (consecutive, cluster, random-span; all: every one)")
	flagNorthdMax = flag.Int("northd-max", 200000, "run northd only on sizes of at most this many ACLs; a larger size measures aclc against the raw read alone")
	flagRelease   = flag.String("release", "23.03", "OVN release whose northd to run and compile for (aclc releases)")
	flagRuns      = flag.Int("runs", 5, "repetitions of each aclc timing (minimum and median reported)")
	flagGrowth    = flag.Bool("growth", true, "also measure aclc's growth in N and in S")
	flagOut       = flag.String("o", "", "also write the Markdown report to this file")
	flagAclc      = flag.String("aclc", "", "aclc binary to run (default: go build ./cmd/aclc into the work directory)")
	flagKeep      = flag.Bool("keep", false, "keep the work directory (databases, logs)")
	flagLflowList = flag.Bool("lflow-list", false, "check northd's flows with ovn-sbctl lflow-list at every size (always done at 1k)")
	flagNorthd    = flag.Bool("northd", true, "run ovn-northd (false: only the NB, to profile aclc's side quickly)")
	flagProf      = flag.String("cpuprofile", "", "write CPU profiles of the in-process NB read and compile step to DIR/<size>-{read,compile}.pprof")
)

// sandboxes are the running OVN sandboxes, stopped on any exit path.
var (
	sbMu      sync.Mutex
	sandboxes = map[*ovnsandbox.Sandbox]bool{}
)

func track(sb *ovnsandbox.Sandbox) {
	sbMu.Lock()
	sandboxes[sb] = true
	sbMu.Unlock()
}

func stopSandbox(sb *ovnsandbox.Sandbox) {
	sbMu.Lock()
	delete(sandboxes, sb)
	sbMu.Unlock()
	sb.Stop()
}

func stopAll() {
	sbMu.Lock()
	defer sbMu.Unlock()
	for sb := range sandboxes {
		sb.Stop()
		delete(sandboxes, sb)
	}
}

func main() {
	flag.Parse()
	var err error
	if target, err = release.Lookup(*flagRelease); err != nil {
		fmt.Fprintln(os.Stderr, "northd-vs-aclc: -release:", err)
		os.Exit(2)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go func() {
		s := <-sig
		fmt.Fprintf(os.Stderr, "northd-vs-aclc: %v: stopping the OVN processes\n", s)
		cancel()
		stopAll()
		os.Exit(130)
	}()
	code := 0
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "northd-vs-aclc:", err)
		code = 1
	}
	cancel()
	stopAll()
	os.Exit(code)
}

func run(ctx context.Context) (err error) {
	defer func() {
		if r := recover(); r != nil {
			stopAll()
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	start := time.Now()
	work, err := os.MkdirTemp("", "northd-vs-aclc-")
	if err != nil {
		return err
	}
	if *flagKeep {
		logf("work directory %s (kept)", work)
	} else {
		defer os.RemoveAll(work)
	}
	bin := *flagAclc
	if bin == "" {
		bin = filepath.Join(work, "aclc")
		logf("building aclc")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/aclc/aclc/cmd/aclc").CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/aclc: %v: %s", err, out)
		}
	}
	shapes := nbgen.Shapes
	if *flagShapes != "all" {
		shapes = nil
		for _, name := range strings.Split(*flagShapes, ",") {
			sh := nbgen.Shape(strings.TrimSpace(name))
			if !slices.Contains(nbgen.Shapes, sh) {
				return fmt.Errorf("-shapes: unknown shape %q (known: consecutive, cluster, random-span, all)", name)
			}
			shapes = append(shapes, sh)
		}
	}
	var want []size
	for _, name := range strings.Split(*flagSizes, ",") {
		found := false
		for _, s := range allSizes {
			if s.name == strings.TrimSpace(name) {
				for _, sh := range shapes {
					s.p.Shape = sh
					s.p.ClusterACLFrac = 0
					if sh == nbgen.ShapeCluster && s.p.ACLs > clusterPolicies*250 {
						// Above 50k the cluster-wide group holds
						// clusterPolicies ACLs, not 10% of them.
						s.p.ClusterACLFrac = clusterPolicies / float64(s.p.ACLs)
					}
					want = append(want, s)
				}
				found = true
			}
		}
		if !found {
			return fmt.Errorf("-sizes: unknown size %q (known: %s)", name, sizeNames())
		}
	}
	load0 := loadAvg()
	var results []*result
	for _, s := range want {
		logf("size %s, shape %s: %d ACLs, %d switches, %d port groups, %d address sets", s.name, s.p.Shape, s.p.ACLs, s.p.Switches, s.p.PortGroups, s.p.AddressSets)
		r, err := runSize(ctx, filepath.Join(work, s.name+"-"+string(s.p.Shape)), bin, s)
		if err != nil {
			return fmt.Errorf("size %s, shape %s: %w", s.name, s.p.Shape, err)
		}
		results = append(results, r)
	}
	var growthN, growthS []growthPoint
	if *flagGrowth {
		logf("growth in N at S=200")
		for _, n := range []int{5000, 10000, 20000, 40000, 80000} {
			growthN = append(growthN, measureGrowth(params(n, 200, 500, 1000), float64(n)))
		}
		logf("growth in S at N=20000")
		for _, s := range []int{50, 100, 200, 400, 800} {
			growthS = append(growthS, measureGrowth(params(20000, s, 1000, 1000), float64(s)))
		}
	}
	var md bytes.Buffer
	report(&md, results, growthN, growthS, load0, loadAvg(), time.Since(start))
	os.Stdout.Write(md.Bytes())
	if *flagOut != "" {
		if err := os.WriteFile(*flagOut, md.Bytes(), 0o644); err != nil {
			return err
		}
	}
	for _, r := range results {
		if r.northd && (r.differences > 0 || r.northdFlows != r.aclcFlows) {
			return fmt.Errorf("size %s, shape %s: northd wrote %d ACL-stage flows, aclc %d, %d differences", r.name, r.p.Shape, r.northdFlows, r.aclcFlows, r.differences)
		}
	}
	return nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// runSize loads the NB of s into a fresh sandbox with the real northd and
// measures both sides.
func runSize(ctx context.Context, dir, bin string, s size) (*result, error) {
	r := &result{size: s, northd: *flagNorthd && s.p.ACLs <= *flagNorthdMax}
	sb, err := ovnsandbox.Start(dir, ovnsandbox.Options{NoNorthd: !r.northd, Release: target})
	if err != nil {
		return nil, err
	}
	track(sb)
	defer stopSandbox(sb)
	ctx, cancel := context.WithTimeout(ctx, 40*time.Minute)
	defer cancel()

	if r.northd {
		if _, err := sb.NBCtl(ctx, "--timeout=120", "--wait=sb", "sync"); err != nil {
			return nil, fmt.Errorf("initial sync: %w", err)
		}
		if _, err := appctl(ctx, sb, "stopwatch/reset"); err != nil {
			return nil, err
		}
	}
	snap := nbgen.Generate(s.p)

	// The load: one transaction, then wait for northd to write the SB.
	nb, err := nbschema.Connect(ctx, nbschema.Options{Remotes: sb.NB, Timeout: 5 * time.Minute, Release: target})
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	err = nbschema.Store(ctx, nb.Client, snap, nbschema.StoreOptions{})
	committed := time.Now()
	nb.Close()
	if err != nil {
		return nil, fmt.Errorf("NB load: %w", err)
	}
	r.loadTxn = committed.Sub(t0)
	logf("  NB load transaction committed in %v", r.loadTxn.Round(time.Millisecond))
	northd := &lflow.Listing{}
	if r.northd {
		if northd, err = measureNorthd(ctx, sb, r, committed); err != nil {
			if !sb.NorthdExited() {
				return nil, err
			}
			// northd died on this NB (the OOM killer, at 200k ACLs of
			// the cluster shape): say so, and measure aclc alone.
			r.northd, r.northdFailed, r.northdRSS = false, err.Error(), sb.NorthdPeakRSS()
			r.synced = time.Since(committed)
			northd = &lflow.Listing{}
			logf("  northd failed after %v (peak RSS it logged: %d MiB): %v", r.synced.Round(time.Second), r.northdRSS>>10, err)
		}
	}
	return measureAclc(ctx, sb, bin, r, northd)
}

// measureNorthd waits for northd to sync the SB after the load committed
// and reads its figures and flows.
func measureNorthd(ctx context.Context, sb *ovnsandbox.Sandbox, r *result, committed time.Time) (*lflow.Listing, error) {
	if err := sb.SyncWithin(ctx, 15*time.Minute); err != nil {
		return nil, fmt.Errorf("ovn-nbctl --wait=sb sync: %w", err)
	}
	r.synced = time.Since(committed)
	logf("  SB synced %v after the commit", r.synced.Round(time.Millisecond))

	sw, err := stopwatches(ctx, sb)
	if err != nil {
		return nil, err
	}
	r.buildLflows, r.nbRun, r.toSB = sw[lflowStopwatch()], sw["ovnnb_db_run"], sw["lflows_to_sb"]
	if r.northdRSS, err = northdHWM(sb.Dir); err != nil {
		return nil, err
	}

	t0 := time.Now()
	northd, rows, err := sbACLFlows(ctx, sb.SB, layout())
	if err != nil {
		return nil, err
	}
	r.sbSelect, r.sbLflowsRows, r.northdFlows = time.Since(t0), rows, northd.NumFlows()
	logf("  northd: %d ACL-stage flows from %d SB rows (select took %v)", r.northdFlows, rows, r.sbSelect.Round(time.Millisecond))

	// Check the select against ovn-sbctl lflow-list itself (slow: every
	// flow of every stage): always on the smallest size, on all with
	// -lflow-list.
	if *flagLflowList || r.p.ACLs <= 1000 {
		t0 = time.Now()
		out, err := sb.SBCtl(ctx, "lflow-list")
		if err != nil {
			return nil, err
		}
		r.lflowList = time.Since(t0)
		all, err := lflow.ParseText("ovn-sbctl lflow-list", strings.NewReader(out))
		if err != nil {
			return nil, err
		}
		listed := all.Filter("", func(f lflow.Flow) bool { return f.Stage.IsACLStage() })
		if d := len(lflow.Diff(listed, northd)); d > 0 || listed.NumFlows() != northd.NumFlows() {
			return nil, fmt.Errorf("the SB select disagrees with ovn-sbctl lflow-list: %d vs %d flows, %d differences", northd.NumFlows(), listed.NumFlows(), d)
		}
		logf("  ovn-sbctl lflow-list agrees (%v)", r.lflowList.Round(time.Millisecond))
	}
	return northd, nil
}

// rawByMethod lists the raw read's timings of each read method.
func rawByMethod(r *result) string {
	var parts []string
	for _, m := range rawMethods {
		t := timings(r.rawBy[m])
		parts = append(parts, fmt.Sprintf("%s %s (%s) ms", m, ms(t.min), ms(t.median)))
	}
	return strings.Join(parts, ", ")
}

// measureAclc runs aclc against the loaded NB and compares its flows
// with northd's.
func measureAclc(ctx context.Context, sb *ovnsandbox.Sandbox, bin string, r *result, northd *lflow.Listing) (*result, error) {

	// aclc end to end: the binary, connect + read + compile + write;
	// each run right after a raw read of the same rows (the floor), so
	// that both see about the same load.
	var e2e, raws []time.Duration
	for i := 0; i < *flagRuns; i++ {
		raw := time.Duration(0)
		for _, m := range rawMethods {
			d, n, err := rawRead(ctx, sb.NB, m)
			if err != nil {
				return nil, err
			}
			if raw == 0 || d < raw {
				raw = d
			}
			if r.rawBy == nil {
				r.rawBy = map[string][]time.Duration{}
			}
			r.rawBy[m] = append(r.rawBy[m], d)
			if m == "transact" {
				r.rawBytes = n
			}
		}
		raws = append(raws, raw)
		d, rss, err := runAclc(ctx, bin, sb.NB, io.Discard, r.northd)
		if err != nil {
			return nil, err
		}
		e2e = append(e2e, d)
		r.aclcRSS = max(r.aclcRSS, rss)
	}
	r.e2e, r.rawRead = timings(e2e), timings(raws)
	if r.northd {
		var text bytes.Buffer
		if _, _, err := runAclc(ctx, bin, sb.NB, &text, r.northd); err != nil {
			return nil, err
		}
		mine, err := lflow.ParseText("aclc compile --nb", &text)
		if err != nil {
			return nil, err
		}
		r.aclcFlows = mine.NumFlows()
		r.differences = len(lflow.Diff(northd, mine))
	} else {
		// No northd to compare with: count the flows as they stream by.
		var c flowCounter
		if _, _, err := runAclc(ctx, bin, sb.NB, &c, r.northd); err != nil {
			return nil, err
		}
		r.aclcFlows = c.flows
	}
	logf("  aclc compile --nb: %v (min of %d), raw read %v, peak RSS %d MiB, %d flows, %d differences", r.e2e.min.Round(time.Millisecond), *flagRuns,
		r.rawRead.min.Round(time.Millisecond), r.aclcRSS>>10, r.aclcFlows, r.differences)

	// The compile step alone, on the snapshot read from the live NB the
	// way aclc compile --nb reads it (nbschema.LoadLive).
	stopProf := startProfile(r.name + "-" + string(r.p.Shape) + "-read")
	var live *nbschema.Snapshot
	var err error
	for i := 0; i < *flagRuns; i++ {
		t0 := time.Now()
		if live, err = nbschema.LoadLive(ctx, nbschema.Options{Remotes: sb.NB, Timeout: 5 * time.Minute, Release: target}); err != nil {
			return nil, err
		}
		if d := time.Since(t0); r.readNB == 0 || d < r.readNB {
			r.readNB = d
		}
	}
	stopProf()
	var steps, cpus []time.Duration
	stopProf = startProfile(r.name + "-" + string(r.p.Shape) + "-compile")
	for i := 0; i < *flagRuns; i++ {
		runtime.GC()
		c, t := cpuTime(), time.Now()
		compile.CompileWith(live, compile.Options{Release: target})
		steps, cpus = append(steps, time.Since(t)), append(cpus, cpuTime()-c)
	}
	stopProf()
	if len(northd.Datapaths) > 0 {
		step := compile.CompileWith(live, compile.Options{Release: target}).Flows.Filter("", nil)
		if d := len(lflow.Diff(northd, step)); d > 0 {
			return nil, fmt.Errorf("the compile step's flows differ from northd's: %d differences", d)
		}
	}
	r.compileStep, r.compileCPU = timings(steps), timings(cpus).min
	logf("  compile step %v (min of %d, CPU %v), LoadLive %v; raw read %v for %d MB", r.compileStep.min.Round(time.Millisecond), *flagRuns,
		r.compileCPU.Round(time.Millisecond), r.readNB.Round(time.Millisecond), r.rawRead.min.Round(time.Millisecond), r.rawBytes>>20)
	return r, nil
}

// flowCounter counts the flow lines of lflow-list text written to it
// (every line but the "Datapath: ..." headers).
type flowCounter struct {
	flows     int
	lineStart bool
	started   bool
}

func (c *flowCounter) Write(p []byte) (int, error) {
	for _, b := range p {
		if !c.started || c.lineStart {
			c.started, c.lineStart = true, false
			if b != 'D' {
				c.flows++
			}
		}
		if b == '\n' {
			c.lineStart = true
		}
	}
	return len(p), nil
}

// runAclc runs `aclc compile --nb remote`, stdout to w (/dev/null for
// io.Discard), and returns its wall time and peak RSS (KiB).
//
// The peak RSS comes from GNU time (/usr/bin/time -f %M) when it is
// installed: a child that a Go program starts inherits the parent's peak
// RSS in its own getrusage figure (Go starts children with CLONE_VM, and
// exec keeps the high-water mark of the shared address space), so reading
// ProcessState.SysUsage would report this harness's peak, not aclc's.
// GNU time forks from its own small address space. Without it the figure
// is marked as an upper bound in the log.
func runAclc(ctx context.Context, bin, remote string, w io.Writer, ranNorthd bool) (time.Duration, int64, error) {
	args := []string{"compile", "--nb", remote, "--timeout", "5m"}
	if !ranNorthd {
		// No northd has written its version into the NB: compile for
		// the -release, as the raw read asks for its columns.
		args = append(args, "--ovn-version", target.Name())
	}
	gnuTime, _ := exec.LookPath("/usr/bin/time")
	var rssFile string
	var cmd *exec.Cmd
	if gnuTime != "" {
		f, err := os.CreateTemp("", "aclc-rss")
		if err != nil {
			return 0, 0, err
		}
		f.Close()
		rssFile = f.Name()
		defer os.Remove(rssFile)
		cmd = exec.CommandContext(ctx, gnuTime, append([]string{"-f", "%M", "-o", rssFile, bin}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, bin, args...)
	}
	if w != io.Discard {
		cmd.Stdout = w
	} // else nil: os/exec connects stdout to /dev/null
	var errb bytes.Buffer
	cmd.Stderr = &errb
	t0 := time.Now()
	err := cmd.Run()
	d := time.Since(t0)
	if err != nil {
		return 0, 0, fmt.Errorf("aclc compile --nb: %v: %s", err, errb.String())
	}
	var rss int64
	if rssFile != "" {
		b, err := os.ReadFile(rssFile)
		if err != nil {
			return 0, 0, err
		}
		if rss, err = strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64); err != nil {
			return 0, 0, fmt.Errorf("GNU time output %q: %w", b, err)
		}
	} else if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss // KiB; an upper bound, see above
		logf("  /usr/bin/time not installed (apt-get install time): aclc peak RSS %d KiB is an upper bound (includes this harness's)", rss)
	}
	return d, rss, nil
}

func appctl(ctx context.Context, sb *ovnsandbox.Sandbox, args ...string) (string, error) {
	return sb.Run(ctx, "ovn-appctl", append([]string{"-t", filepath.Join(sb.Dir, "northd.ctl")}, args...)...)
}

// stopwatches parses `ovn-appctl stopwatch/show` of ovn-northd 23.03:
//
//	Statistics for 'build_lflows'
//	  Total samples: 2
//	  Maximum: 2531 msec
//	  ...
//
// and returns the maximum sample of each stopwatch.
func stopwatches(ctx context.Context, sb *ovnsandbox.Sandbox) (map[string]time.Duration, error) {
	// northd hands samples to its stopwatch thread; give it a moment.
	var out map[string]time.Duration
	for try := 0; try < 20; try++ {
		text, err := appctl(ctx, sb, "stopwatch/show")
		if err != nil {
			return nil, err
		}
		out = map[string]time.Duration{}
		var cur string
		sc := bufio.NewScanner(strings.NewReader(text))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			if name, ok := strings.CutPrefix(line, "Statistics for '"); ok {
				cur = strings.TrimSuffix(name, "'")
				continue
			}
			if v, ok := strings.CutPrefix(line, "Maximum: "); ok && cur != "" {
				f := strings.Fields(v)
				ms, err := strconv.ParseFloat(f[0], 64)
				if err != nil {
					return nil, fmt.Errorf("stopwatch/show: %q: %v", line, err)
				}
				unit := time.Millisecond
				if len(f) > 1 && f[1] == "usec" {
					unit = time.Microsecond
				}
				out[cur] = time.Duration(ms * float64(unit))
			}
		}
		if out[lflowStopwatch()] > 0 {
			return out, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return nil, fmt.Errorf("stopwatch/show has no %s sample", lflowStopwatch())
}

// northdVersion is the first line of the -release's `ovn-northd --version`.
func northdVersion() string {
	if ovnroot.OnHost(target) {
		return firstLine("ovn-northd", "--version")
	}
	return firstLine("chroot", ovnroot.Dir(target), "ovn-northd", "--version")
}

// target is the -release.
var target *release.Release

// lflowStopwatch is the stopwatch of northd's logical flow build: 23.03's
// build_lflows; later releases have none and time their lflow engine
// node (SB sync included, as build_lflows).
func lflowStopwatch() string {
	if target.Version.Compare(release.MustVersion("24.03")) < 0 {
		return "build_lflows"
	}
	return "lflow"
}

// layout is the -release's stage layout.
func layout() *lflow.Layout {
	l, _ := lflow.LayoutFor(target.Series())
	return l
}

// startProfile starts a CPU profile into -cpuprofile DIR/name.pprof, if
// asked for, and returns the function that stops it.
func startProfile(name string) func() {
	if *flagProf == "" {
		return func() {}
	}
	os.MkdirAll(*flagProf, 0o755)
	f, err := os.Create(filepath.Join(*flagProf, name+".pprof"))
	if err != nil {
		logf("cpuprofile: %v", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		logf("cpuprofile: %v", err)
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

// northdHWM reads ovn-northd's peak RSS (VmHWM, KiB).
func northdHWM(dir string) (int64, error) {
	b, err := os.ReadFile(filepath.Join(dir, "northd.pid"))
	if err != nil {
		return 0, err
	}
	status, err := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strconv.ParseInt(strings.Fields(v)[0], 10, 64)
		}
	}
	return 0, errors.New("no VmHWM in /proc/PID/status")
}

// growthPoint is aclc's compile step on one generated NB.
type growthPoint struct {
	x          float64
	p          nbgen.Params
	flows      int
	step       stats
	cpu        time.Duration // least CPU time (all threads, GC included) of one compile
	allocBytes uint64        // allocated during one compile
	liveBytes  uint64        // heap held by the result
}

func measureGrowth(p nbgen.Params, x float64) growthPoint {
	snap := nbgen.Generate(p)
	g := growthPoint{x: x, p: p}
	var ds, cpus []time.Duration
	for i := 0; i < max(*flagRuns, 5); i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c, t := cpuTime(), time.Now()
		res := compile.CompileWith(snap, compile.Options{Release: target})
		ds, cpus = append(ds, time.Since(t)), append(cpus, cpuTime()-c)
		runtime.ReadMemStats(&after)
		g.allocBytes = after.TotalAlloc - before.TotalAlloc
		runtime.GC()
		runtime.ReadMemStats(&after)
		if after.HeapAlloc > before.HeapAlloc {
			g.liveBytes = after.HeapAlloc - before.HeapAlloc
		}
		g.flows = res.Flows.NumFlows()
		runtime.KeepAlive(res)
	}
	g.step, g.cpu = timings(ds), timings(cpus).min
	logf("  N=%d S=%d: %d flows, %v (CPU %v), %.1f MB allocated", p.ACLs, p.Switches, g.flows, g.step.min.Round(time.Millisecond), g.cpu.Round(time.Millisecond), float64(g.allocBytes)/1e6)
	return g
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64)
}

func secs(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 2, 64)
}

func mib(kib int64) string { return strconv.FormatInt(kib>>10, 10) }

func lflowListTime(d time.Duration) string {
	if d == 0 {
		return "not run (-lflow-list)"
	}
	return secs(d) + " s"
}

func ratio(a, b time.Duration) string {
	if b <= 0 {
		return "–"
	}
	return strconv.FormatFloat(float64(a)/float64(b), 'f', 1, 64) + "×"
}

func firstLine(bin string, args ...string) string {
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

func report(w io.Writer, rs []*result, gn, gs []growthPoint, load0, load1 string, took time.Duration) {
	fmt.Fprintf(w, "# northd vs aclc\n\n")
	fmt.Fprintf(w, "Made by `go run ./bench/northd-vs-aclc %s` on %s (%d CPUs, %s, %s, %s); load average %s at the start, %s at the end; the run took %v.\n\n",
		strings.Join(os.Args[1:], " "), time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), runtime.Version(),
		northdVersion(), memTotal(), load0, load1, took.Round(time.Second))
	fmt.Fprintf(w, "NBs from nbgen (P=10 ports per switch, K=10 addresses per set, f=0.2 allow-stateless, 10%% of ACLs on switches; shape consecutive: each port group on 3 consecutive switches; cluster: one port group of every port with the default-deny ACLs and 10%% of the port-group ACLs (above 50k: %d ACLs, see clusterPolicies), the others namespaces of pods on random switches; random-span: the default-deny port group of every port, the others each on 2–8 random switches, address sets mixing pod IPs, /24s and outside addresses), loaded into a real NB ovsdb-server in one transaction with a real ovn-northd running. ", clusterPolicies)
	fmt.Fprintf(w, "Release %s (northd %s's stage layout and rules for aclc). ", target, target)
	fmt.Fprintf(w, "northd figures: the maximum sample of its `stopwatch/show` %s (of which lflows_to_sb, the SB sync, where northd has that stopwatch) and ovnnb_db_run, the time from the load transaction's commit until `ovn-nbctl --wait=sb sync` returns, and its VmHWM. ", lflowStopwatch())
	fmt.Fprintf(w, "aclc figures: `aclc compile --nb` run as a child process (connect, read, compile, write to /dev/null) and its peak RSS from GNU time (`/usr/bin/time -f %%M`; getrusage of a child started by Go would carry this harness's own peak); the compile step is compile.CompileWith (this release) on the snapshot read from the same NB, wall time and CPU time (user + system of all threads, GC included; on a shared, loaded machine the CPU time is the steadier figure, and wall time ≈ CPU time ÷ 2 on an idle 2-core machine); the raw read is what nbschema.LoadLive sends (same tables and columns) over a plain socket, its replies only scanned for their ends (the floor for any client: ovsdb-server producing the rows), with both of LoadLive's read methods (the pipelined selects and the one transaction; the faster of the two is the floor), each run just before an aclc compile --nb run; aclc timings are the minimum of %d runs (median in parentheses). ", *flagRuns)
	fmt.Fprintf(w, "Flows are the ACL-stage flows (%s) per datapath: northd's read from the SB with one OVSDB transaction of selects (a row shared by a datapath group counts on each of its datapaths, as `ovn-sbctl lflow-list` prints it; checked equal to `ovn-sbctl lflow-list` at 1k), aclc's parsed from its output; *differences* is the number of flows on only one side (lflow.Diff).\n\n", strings.ReplaceAll(layout().ACLStageNames(), "|", ", "))

	fmt.Fprintf(w, "northd runs on the sizes of at most %d ACLs (-northd-max); on a larger one only aclc and the raw read are measured (northd columns –).\n\n", *flagNorthdMax)
	fmt.Fprintln(w, "| size | shape | S / G / A | NB load txn s | northd "+lflowStopwatch()+" s (lflows_to_sb) | northd ovnnb_db_run s | commit→SB synced s | northd RSS MiB | aclc compile step ms | compile step CPU ms | aclc compile --nb ms | raw read ms | aclc RSS MiB | "+lflowStopwatch()+" ÷ compile step | compile --nb ÷ raw read | synced ÷ compile --nb | RSS northd ÷ aclc | flows northd | flows aclc | differences |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rs {
		lf := secs(r.buildLflows)
		if r.toSB > 0 {
			lf += " (" + secs(r.toSB) + ")"
		}
		nbRun, synced, nRSS, nFlows, diffs := secs(r.nbRun), secs(r.synced), mib(r.northdRSS), strconv.Itoa(r.northdFlows), strconv.Itoa(r.differences)
		if !r.northd {
			lf, nbRun, synced, nRSS, nFlows, diffs = "–", "–", "–", "–", "–", "–"
			if r.northdFailed != "" {
				synced, nRSS = "died after "+secs(r.synced), "≥ "+mib(r.northdRSS)
			}
		}
		// Without northd's figures its ratios are not 0×: they are not
		// measured.
		lfRatio, syncRatio := ratio(r.buildLflows, r.compileStep.min), ratio(r.synced, r.e2e.min)
		if r.buildLflows == 0 {
			lfRatio = "–"
		}
		if r.synced == 0 {
			syncRatio = "–"
		}
		fmt.Fprintf(w, "| %s | %s | %d / %d / %d | %s | %s | %s | %s | %s | %s (%s) | %s | %s (%s) | %s (%s) | %s | %s | %s | %s | %s | %s | %d | %s |\n",
			r.name, r.p.Shape, r.p.Switches, r.p.PortGroups, r.p.AddressSets, secs(r.loadTxn), lf, nbRun, synced,
			nRSS, ms(r.compileStep.min), ms(r.compileStep.median), ms(r.compileCPU), ms(r.e2e.min), ms(r.e2e.median),
			ms(r.rawRead.min), ms(r.rawRead.median), mib(r.aclcRSS),
			lfRatio, ratio2(r.e2e.min, r.rawRead.min), syncRatio, rssRatio(r), nFlows, r.aclcFlows, diffs)
	}
	if len(rs) > 0 {
		fmt.Fprintf(w, "\nAlso measured: ")
		for i, r := range rs {
			if i > 0 {
				fmt.Fprint(w, "; ")
			}
			sb := fmt.Sprintf("ACL-stage SB Logical_Flow rows %d (datapath groups share rows; lflow-list expands them per datapath), SB select %s s, `ovn-sbctl lflow-list` %s, ",
				r.sbLflowsRows, secs(r.sbSelect), lflowListTime(r.lflowList))
			if !r.northd {
				sb = "no SB (northd not run), "
			}
			fmt.Fprintf(w, "%s %s: %sin-process NB read (nbschema.LoadLive, as compile --nb reads) %s ms, raw read's reply %.1f MB, raw read by method (min, median): %s",
				r.name, r.p.Shape, sb, ms(r.readNB), float64(r.rawBytes)/1e6, rawByMethod(r))
		}
		fmt.Fprintln(w, ".")
		targets(w, rs)
	}
	var xs, ysN, ysA, ysC []float64
	if len(rs) >= 2 && rs[0].northd {
		for _, r := range rs {
			if r.p.Shape != rs[0].p.Shape || !r.northd {
				continue
			}
			xs = append(xs, float64(r.p.ACLs))
			ysN = append(ysN, r.buildLflows.Seconds())
			ysA = append(ysA, r.compileStep.min.Seconds())
			ysC = append(ysC, r.compileCPU.Seconds())
		}
	}
	// A growth exponent needs two sizes of one shape: -shapes with one
	// size gives several rows of one size (the fit would be NaN).
	if len(xs) >= 2 {
		fmt.Fprintf(w, "\nOver these sizes (N, S, G, A all grow; shape %s, sizes with northd), time grows like N^%.2f for northd's %s, N^%.2f for aclc's compile step (wall) and N^%.2f (CPU).\n",
			rs[0].p.Shape, fitExponent(xs, ysN), lflowStopwatch(), fitExponent(xs, ysA), fitExponent(xs, ysC))
	}
	growthTable(w, "Growth in N (ACLs) at S=200 switches, G=500, A=1000", "N", gn)
	growthTable(w, "Growth in S (switches) at N=20,000 ACLs, G=1000, A=1000", "S", gs)
}

func rssRatio(r *result) string {
	if r.aclcRSS <= 0 || r.northdRSS <= 0 {
		return "–"
	}
	return strconv.FormatFloat(float64(r.northdRSS)/float64(r.aclcRSS), 'f', 1, 64) + "×"
}

// targets checks issue 12's speed targets on the largest size northd ran,
// per shape, and issue 24's (compile --nb within 1.3× of the raw read, peak
// RSS at most 1/5 of northd's) on every size and shape.
func targets(w io.Writer, rs []*result) {
	verdict := func(ok bool) string {
		if ok {
			return "**met**"
		}
		return "**not met**"
	}
	largest := map[nbgen.Shape]*result{}
	for _, r := range rs {
		if l := largest[r.p.Shape]; r.northd && r.buildLflows > 0 && (l == nil || r.p.ACLs > l.p.ACLs) {
			largest[r.p.Shape] = r
		}
	}
	for _, sh := range nbgen.Shapes {
		r := largest[sh]
		if r == nil {
			continue
		}
		step := float64(r.buildLflows) / float64(r.compileStep.min)
		rss := float64(r.northdRSS) / float64(max(r.aclcRSS, 1))
		e2e := float64(r.e2e.min) / float64(r.rawRead.min)
		fmt.Fprintf(w, "\nTargets at %s, shape %s (issue 12), this run:\n\n| target | measured | |\n|---|---|---|\n", r.name, sh)
		fmt.Fprintf(w, "| compile step ≥ 15× faster than northd's %s (stopwatch/show) | %.1f× (%s ms against %s s) | %s |\n", lflowStopwatch(), step, ms(r.compileStep.min), secs(r.buildLflows), verdict(step >= 15))
		fmt.Fprintf(w, "| aclc peak RSS ≤ 1/5 of northd's VmHWM | %s MiB against %s MiB: 1/%.2f | %s |\n", mib(r.aclcRSS), mib(r.northdRSS), rss, verdict(rss >= 5))
		fmt.Fprintf(w, "| `aclc compile --nb` within 1.3× of a raw read of the same rows | %.2f× (%s ms against %s ms) | %s |\n", e2e, ms(r.e2e.min), ms(r.rawRead.min), verdict(e2e <= 1.3))
		fmt.Fprintf(w, "| flows equal to northd's | %d and %d, %d differences | %s |\n", r.northdFlows, r.aclcFlows, r.differences, verdict(r.differences == 0 && r.northdFlows == r.aclcFlows))
	}
	fmt.Fprintf(w, "\nIssue 24's targets on every size and shape, this run (minimum of %d runs each; a ratio of minima):\n\n", *flagRuns)
	fmt.Fprintln(w, "| size | shape | compile --nb ÷ raw read ≤ 1.3× | | aclc RSS MiB | northd RSS ÷ aclc ≥ 5 | | flows equal |")
	fmt.Fprintln(w, "|---|---|---:|---|---:|---:|---|---|")
	for _, r := range rs {
		e2e := float64(r.e2e.min) / float64(r.rawRead.min)
		rss, rssV, eq := "– (northd not run)", "", "– (northd not run)"
		if r.northdFailed != "" {
			x := float64(r.northdRSS) / float64(max(r.aclcRSS, 1))
			rss, rssV, eq = "≥ "+strconv.FormatFloat(x, 'f', 1, 64)+"× (northd died)", verdict(x >= 5), "– (northd died: "+r.northdFailed+")"
		}
		if r.northd {
			x := float64(r.northdRSS) / float64(max(r.aclcRSS, 1))
			rss, rssV = strconv.FormatFloat(x, 'f', 1, 64)+"×", verdict(x >= 5)
			eq = fmt.Sprintf("%s (%d flows, %d differences)", verdict(r.differences == 0 && r.northdFlows == r.aclcFlows), r.aclcFlows, r.differences)
		}
		fmt.Fprintf(w, "| %s | %s | %.2f× | %s | %s | %s | %s | %s |\n", r.name, r.p.Shape, e2e, verdict(e2e <= 1.3), mib(r.aclcRSS), rss, rssV, eq)
	}
}

// ratio2 is a/b with two decimals.
func ratio2(a, b time.Duration) string {
	if b <= 0 {
		return "–"
	}
	return strconv.FormatFloat(float64(a)/float64(b), 'f', 2, 64) + "×"
}

func growthTable(w io.Writer, title, xname string, gp []growthPoint) {
	if len(gp) == 0 {
		return
	}
	fmt.Fprintf(w, "\n## %s\n\naclc compile step in process: wall and CPU time (minimum of %d runs), bytes allocated by one compile, and heap held by its result.\n\n", title, max(*flagRuns, 5))
	fmt.Fprintf(w, "| %s | flows | compile ms | CPU ms | MB allocated | MB held | CPU ns/flow | B allocated/flow |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n", xname)
	var xs, ts, cs, ms_, fs []float64
	for _, g := range gp {
		fmt.Fprintf(w, "| %d | %d | %s | %s | %.1f | %.1f | %.0f | %.0f |\n", int(g.x), g.flows, ms(g.step.min), ms(g.cpu),
			float64(g.allocBytes)/1e6, float64(g.liveBytes)/1e6, float64(g.cpu.Nanoseconds())/float64(g.flows), float64(g.allocBytes)/float64(g.flows))
		xs, ts, cs = append(xs, g.x), append(ts, g.step.min.Seconds()), append(cs, g.cpu.Seconds())
		ms_, fs = append(ms_, float64(g.allocBytes)), append(fs, float64(g.flows))
	}
	fmt.Fprintf(w, "\nFitted exponents (log-log least squares) in %s: wall time %s, CPU time %s, memory allocated %s, flows %s.\n",
		xname, expo(fitExponent(xs, ts)), expo(fitExponent(xs, cs)), expo(fitExponent(xs, ms_)), expo(fitExponent(xs, fs)))
}

func expo(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			kb, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return fmt.Sprintf("%.0f GiB RAM", float64(kb)/(1<<20))
		}
	}
	return "?"
}
