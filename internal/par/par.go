// Package par runs independent pieces of work on every core.
package par

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls fn(0), ..., fn(n-1) on up to GOMAXPROCS goroutines, handing
// out indexes in ascending order, with at least minPer calls per
// goroutine (sequentially, in order, when that leaves one). It returns
// when every call has returned. fn must be safe to call concurrently for
// different indexes.
//
// A panic in fn is raised again in the caller's goroutine once the other
// workers have stopped (they take no new index after it), so that a
// caller's recover sees it as it would on one core, instead of the
// process dying from a worker goroutine.
func For(n, minPer int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/max(minPer, 1))
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var panicked any
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					once.Do(func() { panicked = p })
					next.Store(int64(n)) // the others stop at their next index
				}
			}()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
}
