package main

import (
	"math"
	"slices"
	"syscall"
	"time"
)

// fitExponent returns the least-squares slope b of log y = a + b log x:
// y grows like x^b. It returns NaN with fewer than two usable points.
func fitExponent(xs, ys []float64) float64 {
	var n, sx, sy, sxx, sxy float64
	for i := range xs {
		if xs[i] <= 0 || ys[i] <= 0 {
			continue
		}
		lx, ly := math.Log(xs[i]), math.Log(ys[i])
		n++
		sx += lx
		sy += ly
		sxx += lx * lx
		sxy += lx * ly
	}
	d := n*sxx - sx*sx
	if n < 2 || d == 0 {
		return math.NaN()
	}
	return (n*sxy - sx*sy) / d
}

// stats is the minimum and median of repeated timings. On a shared machine
// the minimum is the least disturbed run; the median shows the spread.
type stats struct {
	min, median time.Duration
}

func timings(ds []time.Duration) stats {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return stats{}
	}
	return stats{min: s[0], median: s[len(s)/2]}
}

// cpuTime is this process's user + system CPU time so far, all threads.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
