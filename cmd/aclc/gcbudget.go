package main

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// gcBudget runs a one-shot command with garbage collection driven by a
// memory limit instead of GOGC: the runtime collects only as the heap
// nears limit bytes. Most of what `aclc compile --nb` allocates while
// decoding the NB and compiling stays live, so collecting by GOGC (20
// cycles at 50k ACLs with GOGC=50) marks the same rows again and again;
// under the limit there are a few cycles, each freeing the garbage of the
// match parser. A larger NB, whose live heap would keep the collector
// running near the limit, is handed back to GOGC=percent as soon as a
// cycle finds three quarters of the limit live. It returns a function that
// stops the watcher.
func gcBudget(limit int64, percent int) (stop func()) {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(limit)
	done := make(chan struct{})
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() < uint64(limit/4*3) {
				continue
			}
			debug.SetGCPercent(percent)
			debug.SetMemoryLimit(math.MaxInt64)
			return
		}
	}()
	return func() { close(done) }
}
