package main

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// gcBudget runs a one-shot command without garbage collection until its
// heap reaches budget bytes, then collects as GOGC=percent would: most of
// what `aclc compile --nb` allocates while decoding the NB and compiling
// stays live, so collecting early (20 cycles at 50k ACLs) only marks the
// same rows again and again. Below the budget there are no cycles at all;
// past it (a larger NB) the command collects as before. The memory limit
// set here makes the runtime collect should the heap outgrow budget
// before the watcher sees it. It returns a function that stops the
// watcher.
func gcBudget(budget int64, percent int) (stop func()) {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(budget + budget/4)
	done := make(chan struct{})
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() < uint64(budget) {
				continue
			}
			debug.SetGCPercent(percent)
			debug.SetMemoryLimit(math.MaxInt64)
			return
		}
	}()
	return func() { close(done) }
}
