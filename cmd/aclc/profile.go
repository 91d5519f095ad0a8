package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// startProfiles starts a CPU profile into cpu and arranges a heap profile
// into mem (either may be empty) for the hidden --cpuprofile and
// --memprofile flags; the function returned stops and writes them.
func startProfiles(cpu, mem string) (stop func(), err error) {
	var f *os.File
	if cpu != "" {
		if f, err = os.Create(cpu); err != nil {
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("--cpuprofile: %w", err)
		}
	}
	return func() {
		if f != nil {
			pprof.StopCPUProfile()
			f.Close()
		}
		if mem != "" {
			if m, err := os.Create(mem); err == nil {
				runtime.GC()
				pprof.Lookup("allocs").WriteTo(m, 0)
				m.Close()
			}
		}
	}, nil
}
