package ctnetlink

import (
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ti-mo/conntrack"
)

// FuzzParseLoad feeds arbitrary load text to the parser. It must not
// panic; the file-wide parse (split over cores) and a plain line-by-line
// parse must agree, entries and first error alike; and every entry must
// survive the trip through a create request and the dump decoder.
func FuzzParseLoad(f *testing.F) {
	for _, s := range []string{
		"-I -w 123 -s 1.1.1.1 -d 2.2.2.2 -p tcp --sport 1 --dport 1 --state LISTEN -u SEEN_REPLY -t 50\n",
		"-I -s 2001:db8::1 -d 2001:db8::2 -p udp --sport 53 --dport 5353 -t 30 -m 0x10\n# c\n\n",
		"-I -w 7 -s 10.0.0.1 -d 10.0.0.2 -p icmp --icmp-type 8 --icmp-code 0 --icmp-id 77 -t 5 -u ASSURED,seen_reply\n",
		"-I -s 1.1.1.1 -d 2.2.2.2 -r 3.3.3.3 -q 4.4.4.4 -p sctp --sport 1 --dport 2 --reply-port-src 9 --reply-port-dst 8 -t 1 -f ipv4\n",
		"-D -w 1\n-I -s 1.1.1.1\n",
		"-I -w 0x10 -s 1.1.1.1 -d 2.2.2.2 -p 6 --sport 0x1f --dport 010 --state ESTABLISHED -t 9999999999\n",
	} {
		f.Add(s)
	}
	defer func(m int) { splitMin = m }(splitMin)
	splitMin = 16 // split even small inputs over the cores
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	f.Fuzz(func(t *testing.T, text string) {
		got, err := parseText(text, "f")

		// Reference: one line after the other.
		var want []Entry
		var wantErr *ParseError
		sc := lineScanner{text: text}
		for {
			line, e, perr := sc.next()
			if perr != nil {
				wantErr = perr
				break
			}
			if line < 0 {
				break
			}
			want = append(want, e)
		}
		switch {
		case wantErr != nil:
			pe, ok := err.(*ParseError)
			if !ok || pe.Line != wantErr.Line || pe.Err.Error() != wantErr.Err.Error() {
				t.Fatalf("parseText error %v, want line %d: %v", err, wantErr.Line, wantErr.Err)
			}
			return
		case err != nil:
			t.Fatalf("parseText: %v, the line-by-line parse has no error", err)
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty(), cmp.Comparer(func(a, b Entry) bool { return a == b })); diff != "" {
			t.Fatalf("parseText and the line-by-line parse differ (-line +file):\n%s", diff)
		}

		for _, e := range got {
			var a attrs
			m, err := createRequest(&a, e)
			if err != nil {
				t.Fatalf("createRequest(%v): %v", e, err)
			}
			back, err := decodeEntry(m)
			if err != nil {
				t.Fatalf("decodeEntry(createRequest(%v)): %v", e, err)
			}
			wantBack := e
			wantBack.Status |= conntrack.StatusConfirmed
			if e.Orig.Proto.Protocol != 6 {
				wantBack.TCPState = 0
			}
			if back != wantBack {
				t.Fatalf("entry changed on the way through a create request:\n got %v\nwant %v", back, wantBack)
			}
			if line := e.String(); strings.ContainsAny(line, "\n") {
				t.Fatalf("entry text has a newline: %q", line)
			}
		}
	})
}
