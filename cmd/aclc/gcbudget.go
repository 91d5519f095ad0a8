package main

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// gcBudget runs a one-shot command with garbage collection driven by a
// memory limit instead of GOGC: the runtime collects only as the heap
// nears the limit. Most of what `aclc compile --nb` allocates while
// decoding the NB and compiling stays live, so collecting by GOGC (20
// cycles at 50k ACLs with GOGC=50) marks the same rows again and again;
// under the limit there are a few cycles, each freeing the garbage of the
// match parser. The limit is limit bytes, or perByte times what grow
// reports (the bytes of the NB's reply received so far) when that is
// more: northd's peak RSS is about 30 times the reply's size, so a
// budget of 5 times it keeps aclc's within a fifth of northd's while a
// 200k-ACL NB (a 110 MB reply) is decoded and compiled with a handful of
// cycles instead of dozens. A larger NB, whose live heap would keep the
// collector running near the limit, is handed back to GOGC=percent as
// soon as a cycle finds three quarters of the limit live. It returns a
// function that stops the watcher.
func gcBudget(limit int64, percent int, grow func() int64, perByte int64) (stop func()) {
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(limit)
	done := make(chan struct{})
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		cur := limit
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			if grow != nil {
				if l := grow() * perByte; l > cur {
					cur = l
					debug.SetMemoryLimit(cur)
				}
			}
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() < uint64(cur/4*3) {
				continue
			}
			debug.SetGCPercent(percent)
			debug.SetMemoryLimit(math.MaxInt64)
			return
		}
	}()
	return func() { close(done) }
}
