package ctnetlink

import (
	"errors"
	"fmt"
	"os"
	"unsafe"

	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// A Load is a checked load file of conntrack-tools `-R` lines (see
// ParseLoad), ready for Conn.CreateLoad. It keeps the file's text, mapped
// from the page cache where possible, not its entries: OpenLoad parses
// every line, on every core, only to check it, and CreateLoad parses the
// lines again one by one while the kernel inserts the previous batch. A
// []Entry of a whole file would cost more in fresh pages than the second
// parse costs in CPU time, and that parse runs beside the kernel's work.
type Load struct {
	name    string
	text    string
	entries int
	unmap   func() error
}

// OpenLoad reads and checks the load file at path. Any bad line is an
// error (a *ParseError naming path:line) and nothing is returned, so a
// file that fails to parse inserts nothing. Close the Load when done. A
// regular file is mapped, not copied: it must not be truncated while the
// Load is open (reading a page past the new end would fault, SIGBUS).
func OpenLoad(path string) (*Load, error) {
	text, unmap, err := mapFile(path)
	if err != nil {
		return nil, err
	}
	l := &Load{name: path, text: text, unmap: unmap}
	l.entries, err = scanText(text, path, func(int) {}, func(int, Entry) {})
	if err != nil {
		// The cause may point into the mapped text (netip's errors keep
		// the string they failed on): keep only its message.
		if pe, ok := err.(*ParseError); ok && pe.Err != nil {
			pe.Err = errors.New(pe.Err.Error())
		}
		l.Close()
		return nil, err
	}
	return l, nil
}

// Len returns the number of entries.
func (l *Load) Len() int { return l.entries }

// Name returns the file name the Load was opened from.
func (l *Load) Name() string { return l.name }

// Close releases the file's text.
func (l *Load) Close() error {
	if l.unmap == nil {
		return nil
	}
	err := l.unmap()
	l.unmap, l.text = nil, ""
	return err
}

// mapFile returns the content of a regular file mapped read-only (and
// prefaulted in one go), or read into memory for anything else.
func mapFile(path string) (string, func() error, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", nil, err
	}
	if !st.Mode().IsRegular() || st.Size() == 0 || int64(int(st.Size())) != st.Size() {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", nil, err
		}
		return string(b), func() error { return nil }, nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_POPULATE)
	if err != nil {
		return "", nil, fmt.Errorf("map %s: %w", path, err)
	}
	return unsafe.String(&b[0], len(b)), func() error { return unix.Munmap(b) }, nil
}

// CreateLoad inserts the entries of l as Create does, parsing them from
// the text while earlier batches are in the kernel. A rejected entry is
// named by its file and line.
func (c *Conn) CreateLoad(l *Load) (CreateResult, error) {
	var res CreateResult
	var err error
	sc := lineScanner{text: l.text}
	res.Inserted, res.Existing, err = c.batchRun(l.entries,
		func(i int, a *attrs) (netlink.Message, error) {
			line, e, perr := sc.next()
			if perr != nil || line < 0 {
				// OpenLoad checked every line: the file changed under us.
				return netlink.Message{}, fmt.Errorf("%s: entry %d no longer parses", l.name, i+1)
			}
			return createRequest(a, e)
		},
		unix.EEXIST,
		l.describe)
	return res, c.opError("create", -1, err)
}

// describe names entry i (from 0) as "file:line (tuple zone N)", scanning
// the text again: it is only needed for an error.
func (l *Load) describe(i int) string {
	sc := lineScanner{text: l.text}
	for n := 0; ; n++ {
		line, e, err := sc.next()
		if err != nil || line < 0 {
			return fmt.Sprintf("%s: entry %d", l.name, i+1)
		}
		if n == i {
			return fmt.Sprintf("%s:%d (%s zone %d)", l.name, line+1, e.Orig, e.Zone)
		}
	}
}
