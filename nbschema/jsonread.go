package nbschema

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// jreader is a pull parser for the JSON of an OVSDB reply, reading
// straight from the connection: no document tree, no generic maps. Short
// strings (names, UUIDs, map keys and values) are interned so that the
// many repeated ones share memory.
type jreader struct {
	r       *bufio.Reader
	intern  map[string]string
	scratch []byte
	capture *[]byte // skip appends what it skips here when set
}

// maxIntern is the longest string interned: a UUID is 36 bytes.
const maxIntern = 40

// readBufferSize is the size of the reader's buffer.
var readBufferSize = 256 << 10

func newJReader(r io.Reader) *jreader {
	return &jreader{r: bufio.NewReaderSize(r, readBufferSize), intern: map[string]string{}}
}

// peek skips white space and returns the next byte without consuming it.
func (j *jreader) peek() (byte, error) {
	for {
		c, err := j.r.ReadByte()
		if err != nil {
			return 0, unexpectedEOF(err)
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		j.r.UnreadByte()
		return c, nil
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
	j.r.ReadByte()
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
	j.r.ReadByte()
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
		j.r.ReadByte()
		return false, nil
	}
	return true, nil
}

// strBytes reads a JSON string; the bytes are valid until the next read
// (bufio may refill its buffer under them).
func (j *jreader) strBytes() ([]byte, error) {
	if err := j.expect('"'); err != nil {
		return nil, err
	}
	line, err := j.r.ReadSlice('"')
	if err == nil && bytes.IndexByte(line, '\\') < 0 {
		if j.capture != nil {
			*j.capture = append(append(*j.capture, '"'), line...)
		}
		return line[:len(line)-1], nil
	}
	// Slow path: escapes, or longer than the buffer.
	raw := append(j.scratch[:0], '"')
	for {
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return nil, unexpectedEOF(err)
		}
		raw = append(raw, line...)
		if err == nil && !escapedQuote(raw) {
			break
		}
		line, err = j.r.ReadSlice('"')
	}
	j.scratch = raw
	if j.capture != nil {
		*j.capture = append(*j.capture, raw...)
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw[1 : len(raw)-1], nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("JSON string: %w", err)
	}
	return []byte(s), nil
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
		if s, ok := j.intern[string(b)]; ok {
			return s, nil
		}
		s := string(b)
		j.intern[s] = s
		return s, nil
	}
	return string(b), nil
}

// literal reads a number, true, false or null; the bytes are valid until
// the next read.
func (j *jreader) literal() ([]byte, error) {
	if _, err := j.peek(); err != nil {
		return nil, err
	}
	buf := j.scratch[:0]
	for {
		c, err := j.r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) && len(buf) > 0 {
				break
			}
			return nil, unexpectedEOF(err)
		}
		if c == ',' || c == ']' || c == '}' || c == ' ' || c == '\n' || c == '\r' || c == '\t' {
			j.r.UnreadByte()
			break
		}
		buf = append(buf, c)
	}
	j.scratch = buf
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
	j.r.ReadByte()
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
	j.r.ReadByte()
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
