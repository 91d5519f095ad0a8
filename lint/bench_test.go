package lint

import (
	"syscall"
	"testing"
	"time"

	"github.com/aclc/aclc/nbgen"
)

// TestLint10k lints the 10k-ACL generated NB and reports how long it took;
// it must stay within a few seconds.
func TestLint10k(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	s := nbgen.Generate(nbgen.Default())
	cpu0 := cpuTime()
	r, err := Lint(s)
	if err != nil {
		t.Fatal(err)
	}
	cpu := cpuTime() - cpu0
	counts := map[string]int{}
	for _, f := range r.Findings {
		counts[f.Rule+"/"+f.Severity.String()]++
	}
	t.Logf("10k NB: %d ACLs on %d switches in %v wall, %v CPU; findings %v", r.Stats.ACLs, r.Stats.Switches, r.Stats.Elapsed, cpu, counts)
}

// BenchmarkLint10k measures Lint on the 10k-ACL generated NB.
func BenchmarkLint10k(b *testing.B) {
	s := nbgen.Generate(nbgen.Default())
	for b.Loop() {
		if _, err := Lint(s); err != nil {
			b.Fatal(err)
		}
	}
}

// cpuTime is the CPU time (user+system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
