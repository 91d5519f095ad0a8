// Command lint measures `aclc lint --nb` against `aclc compile --nb` on the
// same live NB, in the same run, for nbgen's shapes (consecutive: each
// port group spans 3 consecutive switches; cluster: ovn-kubernetes' port
// group of every port plus namespaces; random-span: port groups over 2-8
// random switches plus the cluster-wide one) at several sizes, and prints a
// Markdown table: wall and CPU time and peak RSS of each, and the ratios
// lint/compile. Each NB is loaded into a fresh ovsdb-server (no northd) of
// the host's release started by internal/ovnsandbox, in one transaction as
// `aclc nb load` does.
//
// Run it from the repository root:
//
//	go run ./bench/lint -o bench/lint/RESULTS.md
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
)

type size struct {
	shape      nbgen.Shape
	n, s, g, a int
}

var (
	flagOut     = flag.String("o", "", "write the Markdown table to FILE too")
	flagSizes   = flag.String("sizes", "consecutive:1000,consecutive:10000,consecutive:50000,cluster:1000,cluster:2000,cluster:10000", "shape:ACLs list (switches N/100 at least 20, port groups N/20, address sets N/10)")
	flagTimeout = flag.Duration("timeout", 300*time.Second, "give up on one command after this long")
	flagRuns    = flag.Int("runs", 1, "run compile and lint this many times each, alternately, and report the median wall and CPU time and the largest peak RSS")
)

// run is one command's measurement.
type run struct {
	wall, cpu time.Duration
	rssKiB    int64
	done      bool
}

func measure(ctx context.Context, bin string, args ...string) (run, error) {
	ctx, cancel := context.WithTimeout(ctx, *flagTimeout)
	defer cancel()
	f, err := os.CreateTemp("", "aclc-bench-lint")
	if err != nil {
		return run{}, err
	}
	f.Close()
	defer os.Remove(f.Name())
	// GNU time forks from its own small address space, so %M is aclc's.
	cmd := exec.CommandContext(ctx, "/usr/bin/time", append([]string{"-f", "%e %U %S %M", "-o", f.Name(), bin}, args...)...)
	t0 := time.Now()
	err = cmd.Run()
	if ctx.Err() != nil {
		return run{wall: time.Since(t0)}, nil
	}
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 { // lint exits 1 on errors found
			return run{}, fmt.Errorf("%s %v: %v", bin, args, err)
		}
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
	return run{wall: sec(v[0]), cpu: sec(v[1] + v[2]), rssKiB: int64(v[3]), done: true}, nil
}

// median is the run of median wall time, with the median CPU time and
// the largest peak RSS of the runs; not done if any run did not finish.
func median(rs []run) run {
	walls := make([]time.Duration, len(rs))
	cpus := make([]time.Duration, len(rs))
	m := run{done: true}
	for i, r := range rs {
		walls[i], cpus[i] = r.wall, r.cpu
		m.rssKiB = max(m.rssKiB, r.rssKiB)
		m.done = m.done && r.done
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	m.wall, m.cpu = walls[len(walls)/2], cpus[len(cpus)/2]
	return m
}

// target says whether lint run l meets issue 13's target against compile
// run c: at most twice compile's wall time, at most 500 MB.
func target(c, l run) string {
	if !l.done {
		return "not met"
	}
	var miss []string
	if l.wall > 2*c.wall {
		miss = append(miss, "wall")
	}
	if l.rssKiB > 500*1024 {
		miss = append(miss, "RSS")
	}
	if len(miss) == 0 {
		return "met"
	}
	return "not met (" + strings.Join(miss, ", ") + ")"
}

// loadAvg returns the machine's load averages over 1, 5 and 15 minutes.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " / ")
	}
	return "unknown"
}

func parseSizes(s string) ([]size, error) {
	var out []size
	for _, f := range strings.Split(s, ",") {
		shape, n, ok := strings.Cut(f, ":")
		k, err := strconv.Atoi(n)
		if !ok || err != nil || (shape != string(nbgen.ShapeConsecutive) && shape != string(nbgen.ShapeCluster) && shape != string(nbgen.ShapeRandomSpan)) {
			return nil, fmt.Errorf("-sizes: want shape:N, got %q", f)
		}
		out = append(out, size{shape: nbgen.Shape(shape), n: k, s: max(20, k/100), g: k / 20, a: k / 10})
	}
	return out, nil
}

func main() {
	flag.Parse()
	if err := mainErr(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/lint:", err)
		os.Exit(1)
	}
}

func mainErr() error {
	sizes, err := parseSizes(*flagSizes)
	if err != nil {
		return err
	}
	if _, err := exec.LookPath("/usr/bin/time"); err != nil {
		return fmt.Errorf("needs GNU time (apt-get install time) for the peak RSS of each command")
	}
	tmp, err := os.MkdirTemp("", "bench-lint")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "aclc")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/aclc/aclc/cmd/aclc").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v: %s", err, out)
	}
	ctx := context.Background()
	started, loadBefore := time.Now().UTC(), loadAvg()
	var b strings.Builder
	fmt.Fprintf(&b, "| shape | ACLs | switches | PGs | ASs | compile --nb wall / CPU / RSS | lint --nb wall / CPU / RSS | lint/compile wall | CPU | RSS | target (wall ≤ 2×, RSS ≤ 500 MB) |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i, sz := range sizes {
		p := nbgen.Default()
		p.Shape, p.ACLs, p.Switches, p.PortGroups, p.AddressSets = sz.shape, sz.n, sz.s, sz.g, sz.a
		snap := nbgen.Generate(p)
		sb, err := ovnsandbox.Start(filepath.Join(tmp, fmt.Sprint("sb", i)), ovnsandbox.Options{NoNorthd: true})
		if err != nil {
			return err
		}
		row, err := func() (string, error) {
			defer sb.Stop()
			// What `aclc nb load` does: one transaction into the NB.
			nb, err := nbschema.Connect(ctx, nbschema.Options{Remotes: sb.NB})
			if err != nil {
				return "", err
			}
			err = nbschema.Store(ctx, nb.Client, snap, nbschema.StoreOptions{})
			nb.Close()
			if err != nil {
				return "", err
			}
			var cs, ls []run
			for range max(1, *flagRuns) {
				c, err := measure(ctx, bin, "compile", "--nb", sb.NB, "--timeout", "5m")
				if err != nil {
					return "", err
				}
				l, err := measure(ctx, bin, "lint", "--nb", sb.NB, "--timeout", "5m", "--format", "json")
				if err != nil {
					return "", err
				}
				cs, ls = append(cs, c), append(ls, l)
				if !l.done {
					break // a second run would not finish either
				}
			}
			c, l := median(cs), median(ls)
			cell := func(r run) string {
				if !r.done {
					return fmt.Sprintf("did not finish in %v", *flagTimeout)
				}
				return fmt.Sprintf("%.2f s / %.2f s / %d MB", r.wall.Seconds(), r.cpu.Seconds(), r.rssKiB/1024)
			}
			ratio := func(a, b float64) string {
				if !l.done || b == 0 {
					return "—"
				}
				return fmt.Sprintf("%.2f×", a/b)
			}
			return fmt.Sprintf("| %s | %d | %d | %d | %d | %s | %s | %s | %s | %s | %s |\n", sz.shape, sz.n, sz.s, sz.g, sz.a, cell(c), cell(l),
				ratio(l.wall.Seconds(), c.wall.Seconds()), ratio(l.cpu.Seconds(), c.cpu.Seconds()), ratio(float64(l.rssKiB), float64(c.rssKiB)), target(c, l)), nil
		}()
		if err != nil {
			return err
		}
		fmt.Fprint(os.Stderr, row)
		b.WriteString(row)
	}
	fmt.Print(b.String())
	if *flagOut != "" {
		out := "# lint vs compile on live NBs\n\n`go run ./bench/lint " + strings.Join(os.Args[1:], " ") + "`\n\n" +
			fmt.Sprintf("Run %s (%v); load average (1/5/15 min) %s before, %s after.\n\n", started.Format("2006-01-02 15:04 UTC"),
				time.Since(started).Round(time.Second), loadBefore, loadAvg()) + b.String()
		return os.WriteFile(*flagOut, []byte(out), 0o644)
	}
	return nil
}
