package ctnetlink

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// writeLoadFile writes n udp entries in zone 9, with a comment and a blank
// line every 100 entries, and returns its path and each entry's line.
func writeLoadFile(t *testing.T, n int) (string, []int) {
	t.Helper()
	var b strings.Builder
	var lines []int
	line := 0
	for i := range n {
		if i%100 == 0 {
			b.WriteString("# batch\n\n")
			line += 2
		}
		fmt.Fprintf(&b, "-I -w 9 -s 10.0.0.1 -d 10.0.0.2 -p udp --sport %d --dport 53 -t 60\n", 1000+i)
		line++
		lines = append(lines, line)
	}
	path := filepath.Join(t.TempDir(), "load.txt")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, lines
}

// openLoad opens path with OpenLoad and closes it when the test ends.
func openLoad(t *testing.T, path string) *Load {
	t.Helper()
	l, err := OpenLoad(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// TestCreateLoad streams a checked file into the kernel in order, over
// many batches, and a second load finds every entry there already.
func TestCreateLoad(t *testing.T) {
	path, _ := writeLoadFile(t, 2000)
	l := openLoad(t, path)
	if l.Len() != 2000 {
		t.Fatalf("Len = %d, want 2000", l.Len())
	}
	k := &fakeKernel{}
	c := k.conn(&Config{BatchBytes: 8192})
	res, err := c.CreateLoad(l)
	if err != nil || res != (CreateResult{Inserted: 2000}) {
		t.Fatalf("CreateLoad = %+v, %v", res, err)
	}
	for i, e := range k.entries {
		if e.Zone != 9 || e.Orig.Proto.SourcePort != uint16(1000+i) {
			t.Fatalf("entry %d in the kernel: zone %d sport %d", i, e.Zone, e.Orig.Proto.SourcePort)
		}
	}
	if k.sendCalls < 2 {
		t.Errorf("%d sendmsg calls, want several batches", k.sendCalls)
	}
	res, err = c.CreateLoad(l)
	if err != nil || res != (CreateResult{Existing: 2000}) {
		t.Errorf("second CreateLoad = %+v, %v; want all existing", res, err)
	}
}

// TestCreateLoadTableFull stops at ENOMEM, says how many went in and
// names the file line of the first entry the kernel refused.
func TestCreateLoadTableFull(t *testing.T) {
	path, lines := writeLoadFile(t, 2000)
	l := openLoad(t, path)
	k := &fakeKernel{capacity: 700}
	c := k.conn(&Config{BatchBytes: 8192})
	res, err := c.CreateLoad(l)
	if !errors.Is(err, ErrTableFull) {
		t.Fatalf("CreateLoad: %v, want ErrTableFull", err)
	}
	if res.Inserted != 700 || len(k.entries) != 700 {
		t.Errorf("inserted %d (table %d), want 700", res.Inserted, len(k.entries))
	}
	if want := fmt.Sprintf("%s:%d (<udp, Src: 10.0.0.1:1700, Dst: 10.0.0.2:53> zone 9)", path, lines[700]); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %q", err, want)
	}
	if len(k.sent) >= 2000 {
		t.Errorf("kept sending after the table was full: %d requests", len(k.sent))
	}
}

// TestOpenLoadBadLine: a bad line anywhere means no Load at all.
func TestOpenLoadBadLine(t *testing.T) {
	path, lines := writeLoadFile(t, 300)
	b, _ := os.ReadFile(path)
	text := strings.Replace(string(b), "--sport 1250 ", "--sport 99999 ", 1)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := OpenLoad(path)
	var pe *ParseError
	if !errors.As(err, &pe) || l != nil {
		t.Fatalf("OpenLoad = %v, %v; want a ParseError", l, err)
	}
	if pe.File != path || pe.Line != lines[250] {
		t.Errorf("error at %s:%d, want %s:%d", pe.File, pe.Line, path, lines[250])
	}
	if _, err := OpenLoad(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("OpenLoad of a missing file: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.WriteFile(empty, nil, 0o644)
	if l, err := OpenLoad(empty); err != nil || l.Len() != 0 {
		t.Errorf("OpenLoad of an empty file: %v, %v", l, err)
	}
}

// TestOpenLoadErrorOutlivesFile: the error of a bad address is still
// readable, through errors.Unwrap too, after the file's mapping is gone.
func TestOpenLoadErrorOutlivesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.txt")
	os.WriteFile(path, []byte("-I -s 1.1.1.x -d 2.2.2.2 -p udp --sport 1 --dport 2 -t 5\n"), 0o644)
	_, err := OpenLoad(path)
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("OpenLoad: %v, want a ParseError", err)
	}
	for e := error(pe); e != nil; e = errors.Unwrap(e) {
		if msg := e.Error(); !strings.Contains(msg, "1.1.1.x") {
			t.Errorf("error %q does not name the bad address", msg)
		}
	}
}

// TestExchangeStopsBuilder: once a batched operation has returned (here
// stopped by ENOMEM), the goroutine building batches calls build no more —
// CreateLoad's build reads a mapped file that the caller unmaps next.
func TestExchangeStopsBuilder(t *testing.T) {
	es := fakeEntries([]uint16{1}, 5000)
	k := &fakeKernel{capacity: 300}
	c := k.conn(&Config{BatchBytes: 8192})
	var returned atomic.Bool
	var late atomic.Int32
	_, _, err := c.batchRun(len(es), func(i int, a *attrs) (netlink.Message, error) {
		if returned.Load() {
			late.Add(1)
		}
		time.Sleep(20 * time.Microsecond) // a slow builder, still at work when the error comes
		return createRequest(a, es[i])
	}, unix.EEXIST, func(i int) string { return fmt.Sprint("entry ", i) })
	returned.Store(true)
	if !errors.Is(err, unix.ENOMEM) {
		t.Fatalf("batchRun: %v, want ENOMEM", err)
	}
	time.Sleep(100 * time.Millisecond)
	if n := late.Load(); n > 0 {
		t.Fatalf("build was called %d times after the operation returned", n)
	}
}
