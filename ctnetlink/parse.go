package ctnetlink

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/ti-mo/conntrack"
	"golang.org/x/sys/unix"
)

// ParseError locates a bad line of a load file.
type ParseError struct {
	File string
	Line int
	Err  error
}

// Error implements error as "file:line: cause".
func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }

// Unwrap returns the cause.
func (e *ParseError) Unwrap() error { return e.Err }

// ParseLoadFile reads a file of conntrack-tools `-R` lines (see
// ParseLoad). The whole file is parsed before anything is returned, so a
// bad line means nothing from the file gets inserted.
func ParseLoadFile(path string) ([]Entry, error) {
	b, err := os.ReadFile(path) // one allocation of the file's size
	if err != nil {
		return nil, err
	}
	return parseText(string(b), path)
}

// ParseLoad parses conntrack-tools `-R` lines, one entry per line, for
// example (from conntrack-tools' bulk-load stress script):
//
//	-I -w 123 -s 1.1.1.1 -d 2.2.2.2 -p tcp --sport 1 --dport 1 --state LISTEN -u SEEN_REPLY -t 50
//
// The subset understood: -I/--create (required), -w/--zone, -s/--src/
// --orig-src, -d/--dst/--orig-dst, -r/--reply-src, -q/--reply-dst, -p/
// --proto (tcp, udp, udplite, sctp, dccp, icmp, icmpv6 or a number),
// --sport/--orig-port-src, --dport/--orig-port-dst, --reply-port-src,
// --reply-port-dst, --state, -u/--status (SEEN_REPLY, ASSURED,
// FIXED_TIMEOUT, UNSET), -t/--timeout (required), -m/--mark,
// --icmp-type, --icmp-code, --icmp-id, -f/--family. Blank lines and lines
// starting with # are skipped. name labels errors ("file:line: ...").
func ParseLoad(r io.Reader, name string) ([]Entry, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, &ParseError{File: name, Line: 0, Err: err}
	}
	return parseText(string(b), name)
}

// parseText parses the whole text of a load file.
func parseText(text, name string) ([]Entry, error) {
	var entries []Entry
	_, err := scanText(text, name, func(lines int) { entries = make([]Entry, lines) },
		func(line int, e Entry) { entries[line] = e })
	if err != nil {
		return nil, err
	}
	// Blank and comment lines left zero entries (a valid one always has a
	// timeout): close the gaps.
	return slices.DeleteFunc(entries, func(e Entry) bool { return e.Timeout == 0 }), nil
}

// scanText parses every line of text, on every core for a big text, and
// returns the number of entries or the error of the first bad line. It
// calls size once with the number of lines, then fn for each entry with
// its line's index (from 0), concurrently from several goroutines but each
// index once.
func scanText(text, name string, size func(lines int), fn func(line int, e Entry)) (int, error) {
	parts := splitLines(text, runtime.GOMAXPROCS(0), splitMin)
	lines := 0
	for i := range parts {
		parts[i].first = lines
		lines += parts[i].lines
	}
	size(lines)
	errs := make([]*ParseError, len(parts))
	counts := make([]int, len(parts))
	var wg sync.WaitGroup
	for i, p := range parts {
		wg.Go(func() {
			n := 0 // not counts[i]++: the parts' counters share a cache line
			errs[i] = scanLines(p.text, func(l int, e Entry) {
				n++
				fn(p.first+l, e)
			})
			counts[i] = n
		})
	}
	wg.Wait()
	total := 0
	for i, err := range errs {
		if err != nil {
			err.File, err.Line = name, parts[i].first+err.Line
			return 0, err
		}
		total += counts[i]
	}
	return total, nil
}

// splitMin is the smallest part of a load file parsed on its own core
// (tests lower it to split small texts).
var splitMin = 1 << 20

// linePart is a run of whole lines of a load file.
type linePart struct {
	text         string
	first, lines int // index of its first line in the file; its line count
}

// splitLines cuts text into at most n runs of whole lines, each at least
// min bytes long (a small file stays in one run).
func splitLines(text string, n, min int) []linePart {
	var parts []linePart
	for text != "" {
		end := len(text)
		if n > 1 && len(text)/n >= min {
			end = len(text) / n
			if i := strings.IndexByte(text[end:], '\n'); i >= 0 {
				end += i + 1
			} else {
				end = len(text)
			}
		}
		part := text[:end]
		lines := strings.Count(part, "\n")
		if !strings.HasSuffix(part, "\n") {
			lines++
		}
		parts = append(parts, linePart{text: part, lines: lines})
		text = text[end:]
		n--
	}
	return parts
}

// scanLines parses the lines of text and calls fn with each entry and its
// line's index within text (from 0); blank and comment lines are skipped.
// A returned error has the line number within text and no file name.
func scanLines(text string, fn func(line int, e Entry)) *ParseError {
	var sc lineScanner
	sc.text = text
	for {
		line, e, err := sc.next()
		if err != nil {
			return err
		}
		if line < 0 {
			return nil
		}
		fn(line, e)
	}
}

// lineScanner parses a load text one entry at a time.
type lineScanner struct {
	text  string
	line  int      // lines consumed
	words []string // reused: a load file has hundreds of thousands of lines
}

// next returns the next entry and its line's index (from 0), or line -1 at
// the end. An error has the line number (from 1) and no file name.
func (sc *lineScanner) next() (int, Entry, *ParseError) {
	for sc.text != "" {
		l := sc.text
		if j := strings.IndexByte(sc.text, '\n'); j >= 0 {
			l, sc.text = sc.text[:j], sc.text[j+1:]
		} else {
			sc.text = ""
		}
		sc.line++
		sc.words = appendFields(sc.words[:0], l)
		if len(sc.words) == 0 || strings.HasPrefix(sc.words[0], "#") {
			continue
		}
		e, err := parseLine(sc.words)
		if err != nil {
			return 0, Entry{}, &ParseError{Line: sc.line, Err: err}
		}
		return sc.line - 1, e, nil
	}
	return -1, Entry{}, nil
}

// appendFields appends the space-separated words of s to dst, like
// strings.Fields but without allocating a new slice per line.
func appendFields(dst []string, s string) []string {
	start := -1
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == ' ' || c == '\t' || c == '\r' {
			if start >= 0 {
				dst = append(dst, s[start:i])
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		dst = append(dst, s[start:])
	}
	return dst
}

// lineSpec collects the options of one line before they become an Entry.
type lineSpec struct {
	create                        bool
	src, dst, rsrc, rdst          netip.Addr
	proto                         int
	sport, dport, rsport, rdport  int
	icmpType, icmpCode, icmpID    int
	zone, timeout, mark, tcpState int
	status                        conntrack.Status
	family                        Family
}

// parseLine turns the words of one line into an Entry.
func parseLine(args []string) (Entry, error) {
	s := lineSpec{proto: -1, sport: -1, dport: -1, rsport: -1, rdport: -1, icmpType: -1, icmpCode: -1, icmpID: -1, timeout: -1, tcpState: -1}
	for i := 0; i < len(args); i++ {
		opt := args[i]
		switch opt {
		case "-I", "--create":
			s.create = true
			continue
		case "-D", "--delete", "-L", "--dump", "-U", "--update", "-G", "--get", "-F", "--flush", "-E", "--event", "-C", "--count", "-S", "--stats", "-R", "--load-file":
			return Entry{}, fmt.Errorf("only -I (create) lines are supported, not %s", opt)
		}
		if i+1 >= len(args) {
			return Entry{}, fmt.Errorf("option %s needs a value", opt)
		}
		i++
		if err := s.set(opt, args[i]); err != nil {
			return Entry{}, fmt.Errorf("%s %s: %w", opt, args[i], err)
		}
	}
	return s.entry()
}

// set applies one option with its value.
func (s *lineSpec) set(opt, val string) error {
	var err error
	switch opt {
	case "-w", "--zone":
		s.zone, err = number(val, 0xffff)
	case "-s", "--src", "--orig-src":
		s.src, err = netip.ParseAddr(val)
	case "-d", "--dst", "--orig-dst":
		s.dst, err = netip.ParseAddr(val)
	case "-r", "--reply-src":
		s.rsrc, err = netip.ParseAddr(val)
	case "-q", "--reply-dst":
		s.rdst, err = netip.ParseAddr(val)
	case "-p", "--proto", "--protonum":
		s.proto, err = parseProto(val)
	case "--sport", "--orig-port-src":
		s.sport, err = number(val, 0xffff)
	case "--dport", "--orig-port-dst":
		s.dport, err = number(val, 0xffff)
	case "--reply-port-src":
		s.rsport, err = number(val, 0xffff)
	case "--reply-port-dst":
		s.rdport, err = number(val, 0xffff)
	case "--icmp-type":
		s.icmpType, err = number(val, 0xff)
	case "--icmp-code":
		s.icmpCode, err = number(val, 0xff)
	case "--icmp-id":
		s.icmpID, err = number(val, 0xffff)
	case "--state":
		var st TCPState
		st, err = ParseTCPState(val)
		s.tcpState = int(st)
	case "-u", "--status":
		s.status, err = parseStatus(val)
	case "-t", "--timeout":
		s.timeout, err = number(val, 1<<31-1)
	case "-m", "--mark":
		s.mark, err = number(val, 1<<32-1)
	case "-f", "--family":
		s.family, err = ParseFamily(val)
	default:
		return errors.New("unsupported option")
	}
	return err
}

// entry checks the collected options and builds the Entry.
func (s *lineSpec) entry() (Entry, error) {
	switch {
	case !s.create:
		return Entry{}, errors.New("only -I (create) lines are supported")
	case !s.src.IsValid() || !s.dst.IsValid():
		return Entry{}, errors.New("-s and -d are required")
	case s.src.Is4() != s.dst.Is4():
		return Entry{}, errors.New("-s and -d are of different families")
	case s.proto < 0:
		return Entry{}, errors.New("-p is required")
	case s.timeout <= 0:
		return Entry{}, errors.New("-t (timeout > 0) is required")
	}
	e := Entry{Zone: uint16(s.zone), Timeout: uint32(s.timeout), Mark: uint32(s.mark), Status: s.status, Family: FamilyIPv4}
	if s.src.Is6() {
		e.Family = FamilyIPv6
	}
	if s.family != FamilyAny && s.family != e.Family {
		return Entry{}, fmt.Errorf("-f %s does not match the addresses", s.family)
	}
	p := &e.Orig.Proto
	p.Protocol = uint8(s.proto)
	e.Orig.IP.SourceAddress, e.Orig.IP.DestinationAddress = s.src, s.dst
	icmp := p.Protocol == unix.IPPROTO_ICMP || p.Protocol == unix.IPPROTO_ICMPV6
	if !hasPorts(p.Protocol) && (s.sport >= 0 || s.dport >= 0 || s.rsport >= 0 || s.rdport >= 0) {
		return Entry{}, errors.New("port options only apply to tcp, udp, udplite, sctp, dccp and gre")
	}
	if !icmp && (s.icmpType >= 0 || s.icmpCode >= 0 || s.icmpID >= 0) {
		return Entry{}, errors.New("--icmp-type, --icmp-code and --icmp-id only apply to icmp and icmpv6")
	}
	switch {
	case icmp:
		if s.icmpType < 0 || s.icmpCode < 0 || s.icmpID < 0 {
			return Entry{}, errors.New("--icmp-type, --icmp-code and --icmp-id are required for icmp")
		}
		if (p.Protocol == unix.IPPROTO_ICMP) != (e.Family == FamilyIPv4) {
			return Entry{}, errors.New("icmp needs IPv4 addresses, icmpv6 IPv6 ones")
		}
		p.ICMPType, p.ICMPCode, p.ICMPID = uint8(s.icmpType), uint8(s.icmpCode), uint16(s.icmpID)
		p.ICMPv4, p.ICMPv6 = p.Protocol == unix.IPPROTO_ICMP, p.Protocol == unix.IPPROTO_ICMPV6
	case hasPorts(p.Protocol):
		if s.sport < 0 || s.dport < 0 {
			return Entry{}, errors.New("--sport and --dport are required")
		}
		p.SourcePort, p.DestinationPort = uint16(s.sport), uint16(s.dport)
	}
	if p.Protocol == unix.IPPROTO_TCP {
		if s.tcpState < 0 {
			return Entry{}, errors.New("--state is required for tcp")
		}
		e.TCPState = TCPState(s.tcpState)
	} else if s.tcpState >= 0 {
		return Entry{}, errors.New("--state only applies to tcp")
	}
	e.Reply = invert(e.Orig)
	if s.rsrc.IsValid() {
		e.Reply.IP.SourceAddress = s.rsrc
	}
	if s.rdst.IsValid() {
		e.Reply.IP.DestinationAddress = s.rdst
	}
	if s.rsport >= 0 {
		e.Reply.Proto.SourcePort = uint16(s.rsport)
	}
	if s.rdport >= 0 {
		e.Reply.Proto.DestinationPort = uint16(s.rdport)
	}
	if e.Reply.IP.SourceAddress.Is4() != e.Orig.IP.SourceAddress.Is4() || e.Reply.IP.DestinationAddress.Is4() != e.Orig.IP.SourceAddress.Is4() {
		return Entry{}, errors.New("reply addresses are of another family")
	}
	return e, nil
}

// number parses a decimal or 0x-hex number in 0..max.
func number(s string, max int64) (int, error) {
	if len(s) > 0 && len(s) < 10 && s[0] != '0' {
		// Plain decimal, the common case: no strconv.
		n := int64(0)
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				n = -1
				break
			}
			n = n*10 + int64(s[i]-'0')
		}
		if n >= 0 {
			if n > max {
				return 0, fmt.Errorf("want a number in 0..%d", max)
			}
			return int(n), nil
		}
	}
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil || n < 0 || n > max {
		return 0, fmt.Errorf("want a number in 0..%d", max)
	}
	return int(n), nil
}

// parseProto parses a protocol name or number.
func parseProto(s string) (int, error) {
	switch s { // the usual spellings, without walking the map
	case "tcp":
		return unix.IPPROTO_TCP, nil
	case "udp":
		return unix.IPPROTO_UDP, nil
	}
	for num, name := range protoNames {
		if strings.EqualFold(s, name) {
			return int(num), nil
		}
	}
	if strings.EqualFold(s, "ipv6-icmp") {
		return unix.IPPROTO_ICMPV6, nil
	}
	return number(s, 255)
}

// parseStatus parses a comma-separated -u list.
func parseStatus(s string) (conntrack.Status, error) {
	var st conntrack.Status
	for more := true; more; {
		var f string
		f, s, more = strings.Cut(s, ",")
		switch {
		case strings.EqualFold(f, "SEEN_REPLY"):
			st |= conntrack.StatusSeenReply
		case strings.EqualFold(f, "ASSURED"):
			st |= conntrack.StatusAssured
		case strings.EqualFold(f, "FIXED_TIMEOUT"):
			st |= conntrack.StatusFixedTimeout
		case strings.EqualFold(f, "UNSET"):
		default:
			return 0, fmt.Errorf("unknown status %q", f)
		}
	}
	return st, nil
}
