// Command trace-vs-ovntrace measures issue 22's trace target: `aclc trace`
// answering one packet on a large ovn-kubernetes-shaped NB with a router,
// against the real ovn-trace of the same release on the SB the real
// ovn-northd wrote for that NB, in the same run.
//
// For each shape it generates the NB (nbgen, with ovn_cluster_router
// joining every switch), loads it into a sandbox of the release (NB, SB
// and ovn-northd), waits for northd to write the SB, and then times, as
// separate processes, each a whole answer from nothing:
//
//   - ovn-trace --db=SB --minimal --ct new --ct new FLOW
//   - aclc trace --nb NB --ovn-version R --minimal --ct new --ct new FLOW
//
// for two packets: pod to pod on one switch, and pod to a pod of another
// switch across the router. Both must print the same --minimal text (the
// run fails otherwise) but for the "# flow" line and LOG's packet dump,
// which ovn-trace prints in OpenFlow syntax with the SB's tunnel keys. It prints the medians of -runs runs and the
// ratio ovn-trace / aclc; the target is ≥ 10×.
//
//	go run ./bench/trace-vs-ovntrace -release 26.03.1 -n 50000 -runs 3 -out bench/trace-vs-ovntrace/RESULTS.md
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
)

var (
	flagRelease = flag.String("release", "26.03.1", "OVN release whose northd and ovn-trace run (one whose routers aclc compiles)")
	flagN       = flag.Int("n", 50000, "ACLs of the generated NB (nbgen.Scale)")
	flagShapes  = flag.String("shapes", "cluster,random-span", "port group layouts, comma-separated (consecutive, cluster, random-span)")
	flagRuns    = flag.Int("runs", 3, "timed runs of aclc trace per packet")
	flagOvnRuns = flag.Int("ovn-trace-runs", 1, "timed runs of ovn-trace per packet (minutes each on a large SB)")
	flagOut     = flag.String("out", "", "also write the report to FILE")
	flagAclc    = flag.String("aclc", "", "aclc binary (default: go build ./cmd/aclc)")
	flagMemGiB  = flag.Int("ovn-trace-mem", 16, "address-space limit of each ovn-trace run, GiB (prlimit --as): at 50k ACLs ovn-trace grows past 21 GiB and the OOM killer ends it")
)

// packet is one traced packet: a name and its microflow.
type packet struct{ name, flow string }

// row is one packet's measurement.
type row struct {
	shape, packet      string
	ovnTrace, aclc     time.Duration
	ovnCPU, aclcCPU    time.Duration // user + system
	ovnRSS, aclcRSS    int64         // peak, KiB
	ovnFailed          string
	lflows             int
	identical          bool
	ovnTraceOut, aclcO string
}

// timed runs cmd and returns its stdout, wall time, CPU time (user +
// system) and peak RSS (KiB).
func timed(cmd *exec.Cmd) (string, time.Duration, time.Duration, int64, error) {
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	t := time.Now()
	err := cmd.Run()
	d := time.Since(t)
	var rss int64
	var cpu time.Duration
	if cmd.ProcessState != nil {
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			rss = ru.Maxrss
		}
	}
	if err != nil {
		return o.String(), d, cpu, rss, fmt.Errorf("%v: %s", err, strings.TrimSpace(e.String()))
	}
	return o.String(), d, cpu, rss, nil
}

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "trace-vs-ovntrace:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func run() error {
	rel, err := release.Lookup(*flagRelease)
	if err != nil {
		return fmt.Errorf("-release: %w", err)
	}
	work, err := os.MkdirTemp("", "trace-vs-ovntrace-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bin := *flagAclc
	if bin == "" {
		bin = filepath.Join(work, "aclc")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/aclc/aclc/cmd/aclc").CombinedOutput(); err != nil {
			return fmt.Errorf("go build ./cmd/aclc: %v: %s", err, out)
		}
	}
	var rows []row
	for _, name := range strings.Split(*flagShapes, ",") {
		sh := nbgen.Shape(strings.TrimSpace(name))
		if !slices.Contains(nbgen.Shapes, sh) {
			return fmt.Errorf("-shapes: unknown shape %q", name)
		}
		rs, err := runShape(filepath.Join(work, string(sh)), bin, rel, sh)
		if err != nil {
			return fmt.Errorf("shape %s: %w", sh, err)
		}
		rows = append(rows, rs...)
	}
	var md bytes.Buffer
	report(&md, rel, rows)
	os.Stdout.Write(md.Bytes())
	if *flagOut != "" {
		if err := os.WriteFile(*flagOut, md.Bytes(), 0o644); err != nil {
			return err
		}
	}
	for _, r := range rows {
		if r.ovnFailed == "" && !r.identical {
			return fmt.Errorf("shape %s, %s: aclc's --minimal differs from ovn-trace's:\n--- ovn-trace\n%s--- aclc\n%s", r.shape, r.packet, r.ovnTraceOut, r.aclcO)
		}
	}
	return nil
}

// runShape loads the shape's NB into a sandbox of rel and measures both
// tools on its packets.
func runShape(dir, bin string, rel *release.Release, sh nbgen.Shape) ([]row, error) {
	p := nbgen.Scale(*flagN, sh)
	p.ClusterRouter = true
	snap := nbgen.Generate(p)
	logf("shape %s: %d ACLs, %d switches joined by %s; starting OVN %s", sh, p.ACLs, p.Switches, nbgen.ClusterRouterName, rel)
	sb, err := ovnsandbox.Start(dir, ovnsandbox.Options{Release: rel})
	if err != nil {
		return nil, err
	}
	defer sb.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	nb, err := nbschema.Connect(ctx, nbschema.Options{Remotes: sb.NB, Timeout: 5 * time.Minute, Release: rel})
	if err != nil {
		return nil, err
	}
	err = nbschema.Store(ctx, nb.Client, snap, nbschema.StoreOptions{})
	nb.Close()
	if err != nil {
		return nil, fmt.Errorf("NB load: %w", err)
	}
	t0 := time.Now()
	if err := sb.SyncWithin(ctx, 30*time.Minute); err != nil {
		return nil, err
	}
	logf("  northd wrote the SB in %v", time.Since(t0).Round(time.Second))
	count, err := sb.SBCtl(ctx, "--columns=_uuid", "--format=csv", "--no-headings", "find", "Logical_Flow")
	if err != nil {
		return nil, err
	}
	lflows := strings.Count(count, "\n")
	var rows []row
	for _, pk := range packets() {
		r := row{shape: string(sh), packet: pk.name, lflows: lflows}
		args := []string{"--minimal", "--ct", "new", "--ct", "new", pk.flow}
		var tOvn, tAclc, cOvn, cAclc []time.Duration
		for i := 0; i < *flagRuns; i++ {
			if r.ovnFailed == "" && i < *flagOvnRuns {
				cmd := sb.Command(ctx, "ovn-trace", append([]string{"--db=" + sb.SB}, args...)...)
				cmd.Args = append([]string{"prlimit", fmt.Sprintf("--as=%d", int64(*flagMemGiB)<<30), "--", cmd.Path}, cmd.Args[1:]...)
				cmd.Path = "/usr/bin/prlimit"
				out, d, cpu, rss, err := timed(cmd)
				r.ovnRSS = max(r.ovnRSS, rss)
				if err != nil {
					r.ovnFailed = fmt.Sprintf("failed after %.0f s at %d MiB (limit %d GiB): %v", d.Seconds(), rss>>10, *flagMemGiB, err)
					logf("  %s: ovn-trace %s", pk.name, r.ovnFailed)
				} else {
					tOvn, cOvn, r.ovnTraceOut = append(tOvn, d), append(cOvn, cpu), out
				}
			}
			out, d, cpu, rss, err := timed(exec.CommandContext(ctx, bin, append([]string{"trace", "--nb", sb.NB, "--ovn-version", rel.Name()}, args...)...))
			if err != nil {
				return nil, fmt.Errorf("aclc trace: %w", err)
			}
			tAclc, cAclc, r.aclcO, r.aclcRSS = append(tAclc, d), append(cAclc, cpu), out, max(r.aclcRSS, rss)
			logf("  %s run %d: ovn-trace %v, aclc %v", pk.name, i+1, tOvn, d.Round(time.Millisecond))
		}
		r.aclc, r.aclcCPU = median(tAclc), median(cAclc)
		if r.ovnFailed == "" {
			r.ovnTrace, r.ovnCPU = median(tOvn), median(cOvn)
			r.identical = minimalBody(r.ovnTraceOut) == minimalBody(r.aclcO)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// packets are the traced packets: TCP to port 80 from nbgen's first pod,
// to the next pod on its switch and to a pod on the next switch (routed
// by ovn_cluster_router).
func packets() []packet {
	const src = `inport == "sw0-p0" && eth.src == 0a:00:00:00:00:00 && ip4.src == 10.0.0.1 && ip.ttl == 64 && tcp && tcp.src == 33000 && tcp.dst == 80`
	return []packet{
		{"pod to pod, one switch", src + ` && eth.dst == 0a:00:00:00:00:01 && ip4.dst == 10.0.0.2`},
		{"pod to pod across ovn_cluster_router", src + ` && eth.dst == 0a:58:00:00:00:fe && ip4.dst == 10.0.1.2`},
	}
}

var logPacket = regexp.MustCompile(`, packet="[^"]*"`)

// minimalBody is a --minimal text without the "# flow" line and the packet
// dumps of LOG lines, which ovn-trace prints as OpenFlow flows holding the
// SB's tunnel keys (reg14) and aclc as the microflow (the sweeps of
// package trace compare the same way).
func minimalBody(s string) string {
	var keep []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if !strings.HasPrefix(l, "#") {
			keep = append(keep, logPacket.ReplaceAllString(l, ""))
		}
	}
	return strings.Join(keep, "\n")
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func report(w io.Writer, rel *release.Release, rows []row) {
	fmt.Fprintf(w, "# aclc trace vs ovn-trace, one packet, OVN %s\n\n", rel)
	fmt.Fprintf(w, "`go run ./bench/trace-vs-ovntrace -release %s -n %d -shapes %s -runs %d -ovn-trace-runs %d -ovn-trace-mem %d`, %s; %d CPUs, load %s.\n\n",
		rel, *flagN, *flagShapes, *flagRuns, *flagOvnRuns, *flagMemGiB, time.Now().UTC().Format("2006-01-02 15:04 UTC"), runtime.NumCPU(), loadAvg())
	fmt.Fprintln(w, "Each time is a whole answer from a fresh process: ovn-trace reads the SB that ovn-northd wrote for the NB; aclc trace reads the NB and compiles it. Medians of the runs; both print the same --minimal text, but for the first line and LOG's packet dump (OpenFlow syntax with the SB's tunnel keys in ovn-trace).")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| shape | packet | SB logical flows | ovn-trace wall / CPU | its peak RSS | aclc trace wall / CPU | its peak RSS | ovn-trace / aclc, wall / CPU | same --minimal |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|---|")
	for _, r := range rows {
		ovn := fmt.Sprintf("%.2f s / %.2f s", r.ovnTrace.Seconds(), r.ovnCPU.Seconds())
		ratio := fmt.Sprintf("%.1f× / %.1f×", r.ovnTrace.Seconds()/r.aclc.Seconds(), r.ovnCPU.Seconds()/r.aclcCPU.Seconds())
		same := fmt.Sprint(r.identical)
		if r.ovnFailed != "" {
			ovn, ratio, same = r.ovnFailed, "— (no answer)", "— (no answer)"
		}
		fmt.Fprintf(w, "| %s | %s | %d | %s | %d MiB | %.2f s / %.2f s | %d MiB | %s | %s |\n", r.shape, r.packet, r.lflows, ovn, r.ovnRSS>>10,
			r.aclc.Seconds(), r.aclcCPU.Seconds(), r.aclcRSS>>10, ratio, same)
	}
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
