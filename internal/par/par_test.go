package par

import (
	"runtime"
	"sync/atomic"
	"testing"
)

func TestForCallsEachIndexOnce(t *testing.T) {
	for _, n := range []int{0, 1, 7, 1000} {
		for _, minPer := range []int{0, 1, 8, 2000} {
			calls := make([]atomic.Int32, n)
			For(n, minPer, func(i int) { calls[i].Add(1) })
			for i := range calls {
				if c := calls[i].Load(); c != 1 {
					t.Fatalf("n=%d minPer=%d: index %d called %d times", n, minPer, i, c)
				}
			}
		}
	}
}

// TestForPanicReachesCaller: a panic in a worker goroutine is the
// caller's, where recover sees it (TestSincePoints compiles facts switched
// on where a layout has no stage for them and counts the panic as a
// difference).
func TestForPanicReachesCaller(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // workers even on one core
	var got any
	func() {
		defer func() { got = recover() }()
		For(1000, 1, func(i int) {
			if i == 500 {
				panic("boom")
			}
		})
	}()
	if got != "boom" {
		t.Fatalf("recover() = %v, want boom", got)
	}
}
