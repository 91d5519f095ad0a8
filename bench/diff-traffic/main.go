// Command diff-traffic measures `aclc diff --traffic A B` against `aclc
// compile A` in the same run: A is an nbgen NB, B the same NB with a
// number of its ACLs changed (a verdict flipped, allow-related made
// allow-stateless or the reverse, an ACL deleted, a priority raised, in
// turn), both written as fixtures. It prints a Markdown table: wall and
// CPU time and peak RSS of each command (GNU time), the ratio diff/compile,
// and what the diff executed (from its -v log: switches and pairs
// compared, skipped, executed) and found (changes by kind).
//
// Run it from the repository root:
//
//	go run ./bench/diff-traffic -o bench/diff-traffic/RESULTS.md
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
)

var (
	flagOut     = flag.String("o", "", "write the Markdown report to FILE too")
	flagSizes   = flag.String("sizes", "consecutive:50000,cluster:50000,random-span:50000", "shape:ACLs list (switches N/100 at least 20, port groups N/20, address sets N/10)")
	flagChanged = flag.Int("changed", 100, "ACLs changed between A and B")
	flagRuns    = flag.Int("runs", 3, "run compile and diff this many times each, alternately; report the median wall and CPU time and the largest peak RSS (0: only write the fixtures, with -keep)")
	flagKeep    = flag.String("keep", "", "write the fixtures A and B into DIR (SHAPE-a.yaml, SHAPE-b.yaml) and keep them")
	flagTimeout = flag.Duration("timeout", 600*time.Second, "give up on one command after this long")
)

// run is one command's measurement.
type run struct {
	wall, cpu time.Duration
	rssKiB    int64
	code      int
	stderr    string
	timedOut  bool
}

// measure runs bin args under GNU time; exit codes in ok are success.
func measure(ctx context.Context, bin string, args []string, ok ...int) (run, error) {
	ctx, cancel := context.WithTimeout(ctx, *flagTimeout)
	defer cancel()
	f, err := os.CreateTemp("", "bench-diff-traffic")
	if err != nil {
		return run{}, err
	}
	f.Close()
	defer os.Remove(f.Name())
	cmd := exec.CommandContext(ctx, "/usr/bin/time", append([]string{"-f", "%e %U %S %M", "-o", f.Name(), bin}, args...)...)
	// On the timeout, kill aclc too, not only GNU time.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var errb strings.Builder
	cmd.Stderr = &errb
	t0 := time.Now()
	err = cmd.Run()
	if ctx.Err() != nil {
		return run{wall: time.Since(t0), timedOut: true, stderr: errb.String()}, nil
	}
	code := 0
	if ee, isExit := err.(*exec.ExitError); isExit {
		code = ee.ExitCode()
	} else if err != nil {
		return run{}, err
	}
	if !slices.Contains(append(ok, 0), code) {
		return run{}, fmt.Errorf("%s %v: exit %d: %s", bin, args, code, errb.String())
	}
	b, err := os.ReadFile(f.Name())
	if err != nil {
		return run{}, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	fs := strings.Fields(lines[len(lines)-1])
	if len(fs) != 4 {
		return run{}, fmt.Errorf("GNU time output %q", b)
	}
	var v [4]float64
	for i := range fs {
		if v[i], err = strconv.ParseFloat(fs[i], 64); err != nil {
			return run{}, fmt.Errorf("GNU time output %q: %w", b, err)
		}
	}
	sec := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	return run{wall: sec(v[0]), cpu: sec(v[1] + v[2]), rssKiB: int64(v[3]), code: code, stderr: errb.String()}, nil
}

// median is the median wall and CPU time and the largest RSS of rs.
func median(rs []run) run {
	var walls, cpus []time.Duration
	m := rs[0]
	for _, r := range rs {
		walls, cpus = append(walls, r.wall), append(cpus, r.cpu)
		m.rssKiB = max(m.rssKiB, r.rssKiB)
		m.timedOut = m.timedOut || r.timedOut
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	m.wall, m.cpu = walls[len(walls)/2], cpus[len(cpus)/2]
	return m
}

// change edits n ACLs of s, chosen at random, in turn: a verdict
// flipped, allow-related to allow-stateless (or back), deleted, priority
// raised by 500.
func change(s *nbschema.Snapshot, n int, seed uint64) {
	r := rand.New(rand.NewPCG(seed, 100))
	ids := nbschema.SortedKeys(s.ACLs)
	r.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	for i, id := range ids[:min(n, len(ids))] {
		a := s.ACLs[id]
		switch i % 4 {
		case 0:
			if strings.HasPrefix(string(a.Action), "allow") {
				a.Action = nbdb.ACLActionDrop
			} else {
				a.Action = nbdb.ACLActionAllowRelated
			}
		case 1:
			if a.Action == nbdb.ACLActionAllowRelated {
				a.Action = nbdb.ACLActionAllowStateless
			} else {
				a.Action = nbdb.ACLActionAllowRelated
			}
		case 2:
			delete(s.ACLs, id)
			for _, sw := range s.Switches {
				sw.ACLs = slices.DeleteFunc(sw.ACLs, func(x string) bool { return x == id })
			}
			for _, pg := range s.PortGroups {
				pg.ACLs = slices.DeleteFunc(pg.ACLs, func(x string) bool { return x == id })
			}
		case 3:
			a.Priority = min(a.Priority+500, 32767)
		}
	}
}

func writeFixture(path string, s *nbschema.Snapshot) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := nbschema.WriteFixture(w, s); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " / ")
	}
	return "unknown"
}

func main() {
	flag.Parse()
	if err := mainErr(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/diff-traffic:", err)
		os.Exit(1)
	}
}

func mainErr() error {
	if _, err := exec.LookPath("/usr/bin/time"); err != nil {
		return fmt.Errorf("needs GNU time (apt-get install time) for the peak RSS of each command")
	}
	tmp, err := os.MkdirTemp("", "bench-diff-traffic")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dir := tmp
	if *flagKeep != "" {
		dir = *flagKeep
	}
	bin := filepath.Join(tmp, "aclc")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/aclc/aclc/cmd/aclc").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v: %s", err, out)
	}
	ctx := context.Background()
	started, loadBefore := time.Now().UTC(), loadAvg()
	var b strings.Builder
	fmt.Fprintf(&b, "| shape | ACLs | switches | PGs | ASs | changed | compile A wall / CPU / RSS | diff --traffic A B wall / CPU / RSS | diff/compile wall | CPU | what diff executed | changes found | exit |\n")
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---|---|---:|---:|---|---|---:|\n")
	for _, f := range strings.Split(*flagSizes, ",") {
		shape, ns, _ := strings.Cut(f, ":")
		n, err := strconv.Atoi(ns)
		if err != nil || !slices.Contains(nbgen.Shapes, nbgen.Shape(shape)) {
			return fmt.Errorf("-sizes: want shape:N, got %q", f)
		}
		p := nbgen.Default()
		p.Shape, p.ACLs, p.Switches, p.PortGroups, p.AddressSets = nbgen.Shape(shape), n, max(20, n/100), n/20, n/10
		fa, fb := filepath.Join(dir, shape+"-a.yaml"), filepath.Join(dir, shape+"-b.yaml")
		if err := writeFixture(fa, nbgen.Generate(p)); err != nil {
			return err
		}
		sb := nbgen.Generate(p)
		change(sb, *flagChanged, p.Seed)
		if err := writeFixture(fb, sb); err != nil {
			return err
		}
		if *flagRuns == 0 {
			continue // -keep -runs 0: the fixtures only
		}
		var cs, ds []run
		for range *flagRuns {
			c, err := measure(ctx, bin, []string{"compile", fa, "-o", os.DevNull})
			if err != nil {
				return err
			}
			d, err := measure(ctx, bin, []string{"diff", "--traffic", "-v", "--format", "json", fa, fb}, 1, 3)
			if err != nil {
				return err
			}
			cs, ds = append(cs, c), append(ds, d)
		}
		c, d := median(cs), median(ds)
		if d.timedOut {
			row := fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %.2f s / %.2f s / %d MB | did not finish in %s | > %.0f× | | last progress: %s | | |\n",
				shape, n, p.Switches, p.PortGroups, p.AddressSets, *flagChanged, c.wall.Seconds(), c.cpu.Seconds(), c.rssKiB/1024,
				flagTimeout.String(), d.wall.Seconds()/c.wall.Seconds(), lastProgress(d.stderr))
			fmt.Fprint(os.Stderr, row)
			b.WriteString(row)
			continue
		}
		row := fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %.2f s / %.2f s / %d MB | %.2f s / %.2f s / %d MB | %.2f× | %.2f× | %s | %s | %d |\n",
			shape, n, p.Switches, p.PortGroups, p.AddressSets, *flagChanged,
			c.wall.Seconds(), c.cpu.Seconds(), c.rssKiB/1024, d.wall.Seconds(), d.cpu.Seconds(), d.rssKiB/1024,
			d.wall.Seconds()/c.wall.Seconds(), d.cpu.Seconds()/c.cpu.Seconds(), logField(d.stderr, "executed"), logField(d.stderr, "found"), d.code)
		fmt.Fprint(os.Stderr, row)
		b.WriteString(row)
	}
	report := fmt.Sprintf("# aclc diff --traffic vs aclc compile\n\nMade by `go run ./bench/diff-traffic %s` on %s (%d CPUs); load average %s at the start, %s at the end; the run took %s.\n\n"+
		"A is an nbgen NB (P=10 ports per switch, K=10 addresses per set, f=0.2 allow-stateless), B the same NB with %d ACLs changed (in turn: verdict flipped, allow-related ↔ allow-stateless, deleted, priority +500), both as fixtures. Each command runs as a child process under GNU time (`/usr/bin/time -f %%M` for the peak RSS); median of %d runs, compile and diff alternately. `compile A` reads and compiles one NB; `diff --traffic A B` reads and compiles two, then executes (package reach) only the switches whose ACL-stage flows, referenced sets or ports differ, and there only the packets a differing flow can take. Target (issue 23): diff ≤ 2× compile.\n\n%s",
		strings.Join(os.Args[1:], " "), started.Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), loadBefore, loadAvg(), time.Since(started).Round(time.Second), *flagChanged, max(1, *flagRuns), b.String())
	fmt.Print(report)
	if *flagOut != "" {
		return os.WriteFile(*flagOut, []byte(report), 0o644)
	}
	return nil
}

// logField returns the value of key in the diff's -v summary log line.
func logField(stderr, key string) string {
	for _, line := range strings.Split(stderr, "\n") {
		if !strings.Contains(line, "diff --traffic:") {
			continue
		}
		i := strings.Index(line, key+"=")
		if i < 0 {
			continue
		}
		v := line[i+len(key)+1:]
		if strings.HasPrefix(v, `"`) {
			if s, err := strconv.QuotedPrefix(v); err == nil {
				u, _ := strconv.Unquote(s)
				return u
			}
		}
		return strings.Fields(v)[0]
	}
	return "?"
}

// lastProgress returns the diff's last -v progress: switches compared and
// the time since its start.
func lastProgress(stderr string) string {
	last := "none"
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "diff --traffic:") {
			_, rest, _ := strings.Cut(line, "msg=")
			last = rest
		}
	}
	return strings.ReplaceAll(last, "|", "/")
}
