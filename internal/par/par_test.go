package par

import (
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
