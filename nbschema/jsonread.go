package nbschema

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// jreader is a pull parser for the JSON of an OVSDB reply, reading
// straight from the connection into a buffer of its own: no document tree,
// no generic maps. Short strings (names, UUIDs, map keys and values) are
// interned so that the many repeated ones share memory.
type jreader struct {
	r       io.Reader
	buf     []byte // buf[pos:] is read but not consumed
	pos     int
	err     error // the reader's error, once it returned one
	intern  internTable
	scratch []byte
	capture *[]byte // skip appends what it skips here when set
}

// maxIntern is the longest string interned: a UUID is 36 bytes.
const maxIntern = 40

// readBufferSize is the initial size of the reader's buffer; a token
// longer than the buffer grows it.
var readBufferSize = 256 << 10

func newJReader(r io.Reader) *jreader {
	return &jreader{r: r, buf: make([]byte, 0, max(readBufferSize, 16)), intern: newInternTable()}
}

// fill reads more bytes into the buffer, keeping the unconsumed ones
// (moved to its start, or into a larger buffer when it is full); it
// reports false when the reader has no more (j.err says why).
func (j *jreader) fill() bool {
	if j.err != nil {
		return false
	}
	if j.pos > 0 {
		n := copy(j.buf[:cap(j.buf)], j.buf[j.pos:])
		j.buf, j.pos = j.buf[:n], 0
	}
	if len(j.buf) == cap(j.buf) {
		j.buf = append(j.buf, make([]byte, cap(j.buf))...)[:len(j.buf)]
	}
	for {
		n, err := j.r.Read(j.buf[len(j.buf):cap(j.buf)])
		j.buf = j.buf[:len(j.buf)+n]
		if err != nil {
			j.err = err
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
}

// eof is the error for input that ended early.
func (j *jreader) eof() error { return unexpectedEOF(j.err) }

// peek skips white space and returns the next byte without consuming it.
func (j *jreader) peek() (byte, error) {
	for {
		for j.pos < len(j.buf) {
			switch c := j.buf[j.pos]; c {
			case ' ', '\t', '\n', '\r':
				j.pos++
			default:
				return c, nil
			}
		}
		if !j.fill() {
			return 0, j.eof()
		}
	}
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// expect consumes the next non-space byte, which must be c.
func (j *jreader) expect(c byte) error {
	got, err := j.peek()
	if err != nil {
		return err
	}
	if got != c {
		return fmt.Errorf("JSON: got %q, want %q", got, c)
	}
	j.pos++
	return nil
}

// next consumes the next non-space byte: ',' before another element, or
// end (']' or '}') after the last one; it reports whether an element
// follows.
func (j *jreader) next(end byte) (bool, error) {
	c, err := j.peek()
	if err != nil {
		return false, err
	}
	j.pos++
	switch c {
	case ',':
		return true, nil
	case end:
		return false, nil
	}
	return false, fmt.Errorf("JSON: got %q, want ',' or %q", c, end)
}

// open consumes '[' or '{' and reports whether the array or object has
// an element.
func (j *jreader) open(c byte) (bool, error) {
	if err := j.expect(c); err != nil {
		return false, err
	}
	end := byte(']')
	if c == '{' {
		end = '}'
	}
	p, err := j.peek()
	if err != nil {
		return false, err
	}
	if p == end {
		j.pos++
		return false, nil
	}
	return true, nil
}

// strBytes reads a JSON string; the bytes are valid until the next read
// (a refill may move the buffer under them).
func (j *jreader) strBytes() ([]byte, error) {
	if err := j.expect('"'); err != nil {
		return nil, err
	}
	// The closing quote: the first '"' after the opening one (at j.pos
	// again) not escaped by an odd number of backslashes; offsets are
	// relative to j.pos, which a refill moves.
	j.pos--
	from, esc := 1, false
	var q int
	for {
		rest := j.buf[j.pos+from:]
		i := bytes.IndexByte(rest, '"')
		if i < 0 {
			esc = esc || bytes.IndexByte(rest, '\\') >= 0
			from = len(j.buf) - j.pos
			if !j.fill() {
				return nil, j.eof()
			}
			continue
		}
		q = from + i
		if bytes.IndexByte(rest[:i], '\\') >= 0 {
			esc = true
		}
		if !esc || !escapedQuote(j.buf[j.pos:j.pos+q+1]) {
			break
		}
		from = q + 1
	}
	raw := j.buf[j.pos : j.pos+q+1] // with its quotes
	j.pos += q + 1
	if j.capture != nil {
		*j.capture = append(*j.capture, raw...)
	}
	if !esc {
		return raw[1 : len(raw)-1], nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("JSON string: %w", err)
	}
	j.scratch = append(j.scratch[:0], s...)
	return j.scratch, nil
}

// escapedQuote reports whether the final '"' of raw is escaped by an odd
// number of backslashes.
func escapedQuote(raw []byte) bool {
	n := 0
	for i := len(raw) - 2; i >= 0 && raw[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// str reads a JSON string.
func (j *jreader) str() (string, error) {
	b, err := j.strBytes()
	if err != nil {
		return "", err
	}
	if len(b) <= maxIntern {
		return j.intern.get(b), nil
	}
	return string(b), nil
}

// literal reads a number, true, false or null; the bytes are valid until
// the next read.
func (j *jreader) literal() ([]byte, error) {
	if _, err := j.peek(); err != nil {
		return nil, err
	}
	n := 0
	for {
		if j.pos+n == len(j.buf) {
			if !j.fill() {
				if errors.Is(j.err, io.EOF) && n > 0 {
					break
				}
				return nil, j.eof()
			}
			continue
		}
		c := j.buf[j.pos+n]
		if c == ',' || c == ']' || c == '}' || c == ' ' || c == '\n' || c == '\r' || c == '\t' {
			break
		}
		n++
	}
	buf := j.buf[j.pos : j.pos+n]
	j.pos += n
	if len(buf) == 0 {
		return nil, fmt.Errorf("JSON: empty value")
	}
	if j.capture != nil {
		*j.capture = append(*j.capture, buf...)
	}
	return buf, nil
}

func (j *jreader) integer() (int, error) {
	b, err := j.literal()
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(string(b))
	if err != nil {
		return 0, fmt.Errorf("OVSDB integer %q: %w", b, err)
	}
	return n, nil
}

func (j *jreader) real() (float64, error) {
	b, err := j.literal()
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return 0, fmt.Errorf("OVSDB real %q: %w", b, err)
	}
	return f, nil
}

func (j *jreader) boolean() (bool, error) {
	b, err := j.literal()
	if err != nil {
		return false, err
	}
	switch string(b) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("OVSDB boolean: got %q", b)
}

// skip skips one JSON value of any kind.
func (j *jreader) skip() error {
	c, err := j.peek()
	if err != nil {
		return err
	}
	switch c {
	case '"':
		_, err := j.strBytes()
		return err
	case '[', '{':
		end := byte(']')
		if c == '{' {
			end = '}'
		}
		more, err := j.open(c)
		if err != nil {
			return err
		}
		j.put(c)
		for more {
			if c == '{' {
				if _, err := j.strBytes(); err != nil {
					return err
				}
				if err := j.expect(':'); err != nil {
					return err
				}
				j.put(':')
			}
			if err := j.skip(); err != nil {
				return err
			}
			if more, err = j.next(end); err != nil {
				return err
			}
			if more {
				j.put(',')
			}
		}
		j.put(end)
		return nil
	}
	_, err = j.literal()
	return err
}

func (j *jreader) put(c byte) {
	if j.capture != nil {
		*j.capture = append(*j.capture, c)
	}
}

// raw returns the next JSON value as it was sent (without white space).
func (j *jreader) raw() (json.RawMessage, error) {
	var buf []byte
	j.capture = &buf
	err := j.skip()
	j.capture = nil
	return buf, err
}

// An OVSDB <atom> is a string, number or boolean, or ["uuid", "..."] (or
// ["named-uuid", "..."]) for a reference; a <set> is one atom or
// ["set", [atoms]]; a <map> is ["map", [[key, value], ...]] (RFC 7047
// 5.1).

// atomString reads a string atom or a UUID.
func (j *jreader) atomString() (string, error) {
	c, err := j.peek()
	if err != nil {
		return "", err
	}
	if c != '[' {
		return j.str()
	}
	j.pos++
	tag, err := j.strBytes()
	if err != nil {
		return "", err
	}
	if string(tag) != "uuid" && string(tag) != "named-uuid" {
		return "", fmt.Errorf("OVSDB: got [%q, ...], want a string or UUID", tag)
	}
	return j.uuidTail()
}

// uuidTail reads the rest of ["uuid", "..."] after the tag.
func (j *jreader) uuidTail() (string, error) {
	if err := j.expect(','); err != nil {
		return "", err
	}
	s, err := j.str()
	if err != nil {
		return "", err
	}
	return s, j.expect(']')
}

// set reads an OVSDB set, calling atom for each element; a set of UUIDs
// may be a bare ["uuid", ...], which is read here and handed to uuid.
func (j *jreader) set(atom func() error, uuid func(string)) error {
	c, err := j.peek()
	if err != nil {
		return err
	}
	if c != '[' {
		return atom()
	}
	j.pos++
	tag, err := j.strBytes()
	if err != nil {
		return err
	}
	switch string(tag) {
	case "uuid", "named-uuid":
		if uuid == nil {
			return fmt.Errorf("OVSDB: unexpected UUID")
		}
		s, err := j.uuidTail()
		if err != nil {
			return err
		}
		uuid(s)
		return nil
	case "set":
	default:
		return fmt.Errorf("OVSDB: got [%q, ...], want a set", tag)
	}
	if err := j.expect(','); err != nil {
		return err
	}
	for more, err := j.open('['); more || err != nil; more, err = j.next(']') {
		if err != nil {
			return err
		}
		if err := atom(); err != nil {
			return err
		}
	}
	return j.expect(']')
}

// ovsMap reads an OVSDB map, calling pair for each pair with the reader
// on the key.
func (j *jreader) ovsMap(pair func() error) error {
	if err := j.expect('['); err != nil {
		return err
	}
	tag, err := j.strBytes()
	if err != nil {
		return err
	}
	if string(tag) != "map" {
		return fmt.Errorf("OVSDB: got [%q, ...], want a map", tag)
	}
	if err := j.expect(','); err != nil {
		return err
	}
	for more, err := j.open('['); more || err != nil; more, err = j.next(']') {
		if err != nil {
			return err
		}
		if err := j.expect('['); err != nil {
			return err
		}
		if err := pair(); err != nil {
			return err
		}
		if err := j.expect(']'); err != nil {
			return err
		}
	}
	return j.expect(']')
}

// internTable interns short strings lossily: a string's slot is picked by
// a hash of its bytes, and a string that meets another one in its slot
// replaces it. Most repeated strings (UUIDs referenced from other rows,
// column values such as "to-lport") still share one copy, at the cost of
// one hash and one comparison, with no map to grow.
type internTable struct{ slots []string }

const internBits = 17

func newInternTable() internTable { return internTable{slots: make([]string, 1<<internBits)} }

func (t internTable) get(b []byte) string {
	var h uint64 = uint64(len(b))
	if len(b) >= 8 {
		h ^= binary.LittleEndian.Uint64(b) ^ binary.LittleEndian.Uint64(b[len(b)-8:])*0x9e3779b97f4a7c15
		if len(b) >= 24 {
			h ^= binary.LittleEndian.Uint64(b[len(b)/2-4:]) * 0xc2b2ae3d27d4eb4f
		}
	} else {
		for _, c := range b {
			h = h*31 + uint64(c)
		}
	}
	h *= 0x9e3779b97f4a7c15
	slot := &t.slots[h>>(64-internBits)]
	if *slot == string(b) {
		return *slot
	}
	s := string(b)
	*slot = s
	return s
}
