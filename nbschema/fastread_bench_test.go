package nbschema_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
)

// cpuTime is the user + system time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLoadLive50k reads the 50k NB (nbgen: 50k ACLs, 500
// switches, 2,500 port groups, 5,000 address sets) from a real NB
// ovsdb-server: libovsdb (Connect + Monitor + Snapshot, as before the
// fast reader), and the fast reader with either request. cpu-ms/op is
// this process's user + system time. With ACLC_BENCH_BINS set to a
// comma-separated list of aclc binaries, it also runs `aclc compile --nb`
// of each under GNU time and reports wall, CPU and peak RSS.
func BenchmarkLoadLive50k(b *testing.B) {
	testenv.NeedBinaries(b, "ovsdb-server", "ovsdb-tool", "ovn-northd")
	sb, err := ovnsandbox.Start(filepath.Join(b.TempDir(), "ovn"), ovnsandbox.Options{NoNorthd: true})
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Stop()
	p := nbgen.Default()
	p.ACLs, p.Switches, p.PortGroups, p.AddressSets = 50000, 500, 2500, 5000
	ctx := context.Background()
	nb, err := nbschema.Connect(ctx, nbschema.Options{Remotes: sb.NB, Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	if err := nbschema.Store(ctx, nb.Client, nbgen.Generate(p), nbschema.StoreOptions{}); err != nil {
		b.Fatal(err)
	}
	nb.Close()
	opts := nbschema.Options{Remotes: sb.NB, Timeout: time.Minute}
	read := map[string]func() (*nbschema.Snapshot, error){
		"libovsdb": func() (*nbschema.Snapshot, error) {
			nb, err := nbschema.Connect(ctx, opts)
			if err != nil {
				return nil, err
			}
			defer nb.Close()
			if err := nb.Monitor(ctx); err != nil {
				return nil, err
			}
			return nb.Snapshot(ctx)
		},
		"transact": func() (*nbschema.Snapshot, error) { return nbschema.FastRead(ctx, opts, "transact") },
		"monitor":  func() (*nbschema.Snapshot, error) { return nbschema.FastRead(ctx, opts, "monitor") },
	}
	for _, name := range []string{"libovsdb", "transact", "monitor"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			c := cpuTime()
			for b.Loop() {
				s, err := read[name]()
				if err != nil {
					b.Fatal(err)
				}
				if len(s.ACLs) != p.ACLs {
					b.Fatalf("read %d ACLs, want %d", len(s.ACLs), p.ACLs)
				}
			}
			b.ReportMetric(float64((cpuTime()-c).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
	for _, bin := range strings.Split(os.Getenv("ACLC_BENCH_BINS"), ",") {
		if bin == "" {
			continue
		}
		b.Run("compile-"+filepath.Base(bin), func(b *testing.B) {
			// GNU time reports the child's own peak RSS: getrusage of
			// a child this process starts would report this process's
			// peak instead when larger (Go starts children with
			// vfork, and Linux carries the parent's high-water RSS
			// across exec).
			if _, err := os.Stat("/usr/bin/time"); err != nil {
				b.Skip("needs /usr/bin/time (GNU time) to measure the peak RSS")
			}
			var cpu time.Duration
			var rss int64
			for b.Loop() {
				cmd := exec.Command("/usr/bin/time", "-f", "ACLC-TIME %U %S %M", bin, "compile", "--nb", sb.NB, "--timeout", "5m")
				var stderr strings.Builder
				cmd.Stderr = &stderr // stdout: /dev/null
				if err := cmd.Run(); err != nil {
					b.Fatalf("%s: %v: %s", bin, err, stderr.String())
				}
				_, line, ok := strings.Cut(stderr.String(), "ACLC-TIME ")
				var user, sys float64
				var kib int64
				if _, err := fmt.Sscan(line, &user, &sys, &kib); !ok || err != nil {
					b.Fatalf("GNU time output %q: %v", stderr.String(), err)
				}
				cpu += time.Duration((user + sys) * float64(time.Second))
				rss = max(rss, kib)
			}
			b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(rss)/1024, "peak-RSS-MiB")
		})
	}
}
