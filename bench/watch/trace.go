package main

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// syscallTrace is `perf trace` following the NB's ovsdb-server, aclc
// watch and the bench itself (-trace): the kernel's own timestamps of
// the syscalls that carry a change, on one clock — the bench's write of
// the transaction, ovsdb-server's reply and its send of the watcher's
// update notification, the watcher's read of it. perf trace costs each
// traced syscall a few microseconds (ovsdb-server makes a dozen per
// change), so the run is somewhat slower than an untraced one.
type syscallTrace struct {
	cmd  *exec.Cmd
	out  string
	pids struct{ nb, watch, bench int }
}

func startTrace(out string, nbPid, watchPid int) (*syscallTrace, error) {
	t := &syscallTrace{out: out}
	t.pids.nb, t.pids.watch, t.pids.bench = nbPid, watchPid, os.Getpid()
	t.cmd = exec.Command("perf", "trace", "-T", "-e", "read,write,sendto", "-o", out,
		"-p", fmt.Sprintf("%d,%d,%d", nbPid, watchPid, t.pids.bench))
	t.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := t.cmd.Start(); err != nil {
		return nil, fmt.Errorf("perf trace: %w", err)
	}
	time.Sleep(time.Second) // perf attaches to every thread
	return t, nil
}

// traced is one syscall of the trace: its start and end (ms, perf's
// clock), process, fd and result.
type traced struct {
	start, end float64
	pid, fd    int
	call       string
	ret        int
}

var traceLine = regexp.MustCompile(`^\s*([\d.]+) \(\s*([\d.]*)\s*(?:ms)?\): \S+?/(\d+) (\w+)\(fd: (\d+)[^)]*\)\s+=\s*(-?\d+)`)

// stop ends the trace and reads it back, keeping the calls of the
// three processes (by thread: perf names threads, so a thread is mapped
// to its process through /proc while they run).
func (t *syscallTrace) stop(threads map[int]int) ([]traced, error) {
	t.cmd.Process.Signal(os.Interrupt)
	t.cmd.Wait()
	f, err := os.Open(t.out)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var calls []traced
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := traceLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		key := m[1] + "/" + m[3] + "/" + m[4]
		if seen[key] { // perf trace repeats some lines
			continue
		}
		seen[key] = true
		start, _ := strconv.ParseFloat(m[1], 64)
		dur, _ := strconv.ParseFloat(m[2], 64)
		tid, _ := strconv.Atoi(m[3])
		fd, _ := strconv.Atoi(m[5])
		ret, _ := strconv.Atoi(m[6])
		pid, ok := threads[tid]
		if !ok {
			continue
		}
		calls = append(calls, traced{start: start, end: start + dur, pid: pid, fd: fd, call: m[4], ret: ret})
	}
	// perf writes each CPU's buffer in turn: put the calls in time order.
	slices.SortStableFunc(calls, func(a, b traced) int { return cmp.Compare(a.start, b.start) })
	return calls, sc.Err()
}

// threadsOf maps every thread of the pids to its process.
func threadsOf(pids ...int) map[int]int {
	m := map[int]int{}
	for _, p := range pids {
		ents, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", p))
		for _, e := range ents {
			if tid, err := strconv.Atoi(e.Name()); err == nil {
				m[tid] = p
			}
		}
	}
	return m
}

// tracedChange is what the trace says of one change, in time after the
// bench's write of the transaction returned (0 where not found).
type tracedChange struct {
	reply, sendWatch, readWatch time.Duration
	readToEvent                 time.Duration // the watcher's read -> its first row event
	ok                          bool
}

// changes finds each change's syscalls: the bench's write of the
// transaction (sizes[k] bytes on fd), ovsdb-server's first send after it
// (the reply to it), the watcher's first read after it that returns
// bytes, and ovsdb-server's last send before that read of exactly as many
// bytes (the watcher's update notification). t0s are the wall clock times
// taken just before each write: their offset to the perf clock places the
// watcher's first row event (received, wall clock) on the trace.
func (t *syscallTrace) changes(calls []traced, fd int, sizes []int, t0s, received []time.Time) []tracedChange {
	out := make([]tracedChange, len(t0s))
	i := 0
	for k := range t0s {
		for ; i < len(calls); i++ {
			c := calls[i]
			if c.pid == t.pids.bench && c.call == "write" && c.fd == fd && c.ret == sizes[k] {
				break
			}
		}
		if i == len(calls) {
			break
		}
		w := calls[i]
		i++
		tc := &out[k]
		offset := float64(t0s[k].UnixNano()) - w.start*1e6 // ns
		rel := func(ms float64) time.Duration { return time.Duration((ms - w.end) * 1e6) }
		// The watcher's first read after the write that returns as many
		// bytes as one of ovsdb-server's sends between the two (its other
		// reads are the Go runtime's 8-byte eventfd wake-ups).
		var read, send *traced
		var sends []*traced
		for j := i; j < len(calls) && calls[j].start < w.end+1000 && send == nil; j++ {
			c := &calls[j]
			switch {
			case c.pid == t.pids.nb && c.call == "sendto" && c.ret > 0:
				sends = append(sends, c)
			case c.pid == t.pids.watch && c.call == "read" && c.ret > 0:
				for n := len(sends) - 1; n >= 0; n-- {
					if sends[n].ret == c.ret {
						read, send = c, sends[n]
						break
					}
				}
			}
		}
		if send == nil {
			continue
		}
		tc.reply = rel(sends[0].start)
		tc.sendWatch = rel(send.start)
		tc.readWatch = rel(read.end)
		if !received[k].IsZero() {
			tc.readToEvent = time.Duration(float64(received[k].UnixNano())-offset-read.end*1e6) * time.Nanosecond
		}
		tc.ok = true
	}
	return out
}

// pidFile reads a pid file.
func pidFile(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
