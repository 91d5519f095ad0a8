package ctnetlink_test

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/aclc/aclc/ctnetlink"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ti-mo/conntrack"
)

func tuple(src, dst string, proto uint8, sport, dport uint16) ctnetlink.Tuple {
	var t ctnetlink.Tuple
	t.IP.SourceAddress = netip.MustParseAddr(src)
	t.IP.DestinationAddress = netip.MustParseAddr(dst)
	t.Proto.Protocol = proto
	t.Proto.SourcePort, t.Proto.DestinationPort = sport, dport
	return t
}

func icmpTuple(src, dst string, proto, typ, code uint8, id uint16) ctnetlink.Tuple {
	t := tuple(src, dst, proto, 0, 0)
	t.Proto.ICMPType, t.Proto.ICMPCode, t.Proto.ICMPID = typ, code, id
	t.Proto.ICMPv4, t.Proto.ICMPv6 = proto == 1, proto == 58
	return t
}

func TestParseLoad(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []ctnetlink.Entry
	}{
		{
			name: "stress script line",
			in:   "-I -w 123 -s 1.1.1.1 -d 2.2.2.2 -p tcp --sport 1 --dport 2 --state LISTEN -u SEEN_REPLY -t 50\n",
			want: []ctnetlink.Entry{{
				Family: ctnetlink.FamilyIPv4, Zone: 123, Timeout: 50, TCPState: 9,
				Status: conntrack.StatusSeenReply,
				Orig:   tuple("1.1.1.1", "2.2.2.2", 6, 1, 2),
				Reply:  tuple("2.2.2.2", "1.1.1.1", 6, 2, 1),
			}},
		},
		{
			name: "udp long options, comments, blank lines, hex",
			in:   "# comment\n\n--create --zone 0x10 --orig-src 10.0.0.1 --orig-dst 10.0.0.2 --proto udp --orig-port-src 53 --orig-port-dst 5353 --timeout 30 --mark 7 -u SEEN_REPLY,ASSURED\n",
			want: []ctnetlink.Entry{{
				Family: ctnetlink.FamilyIPv4, Zone: 16, Timeout: 30, Mark: 7,
				Status: conntrack.StatusSeenReply | conntrack.StatusAssured,
				Orig:   tuple("10.0.0.1", "10.0.0.2", 17, 53, 5353),
				Reply:  tuple("10.0.0.2", "10.0.0.1", 17, 5353, 53),
			}},
		},
		{
			name: "icmp echo",
			in:   "-I -w 3 -s 1.1.1.1 -d 2.2.2.2 -p icmp --icmp-type 8 --icmp-code 0 --icmp-id 9 -t 50",
			want: []ctnetlink.Entry{{
				Family: ctnetlink.FamilyIPv4, Zone: 3, Timeout: 50,
				Orig:  icmpTuple("1.1.1.1", "2.2.2.2", 1, 8, 0, 9),
				Reply: icmpTuple("2.2.2.2", "1.1.1.1", 1, 0, 0, 9),
			}},
		},
		{
			name: "ipv6 icmpv6 echo",
			in:   "-I -s 2001:db8::1 -d 2001:db8::2 -p icmpv6 --icmp-type 128 --icmp-code 0 --icmp-id 1 -t 5",
			want: []ctnetlink.Entry{{
				Family: ctnetlink.FamilyIPv6, Timeout: 5,
				Orig:  icmpTuple("2001:db8::1", "2001:db8::2", 58, 128, 0, 1),
				Reply: icmpTuple("2001:db8::2", "2001:db8::1", 58, 129, 0, 1),
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ctnetlink.ParseLoad(strings.NewReader(tt.in), "test")
			if err != nil {
				t.Fatalf("ParseLoad: %v", err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateComparable(netip.Addr{})); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseLoadErrors(t *testing.T) {
	good := "-I -w 1 -s 1.1.1.1 -d 2.2.2.2 -p udp --sport 1 --dport 2 -t 50\n"
	tests := []struct {
		name string
		in   string
		want string // "file:line: ..." prefix and a fragment of the cause
	}{
		{"zone too big", good + "-I -w 65536 -s 1.1.1.1 -d 2.2.2.2 -p udp --sport 1 --dport 2 -t 5", "f:2: -w 65536: want a number in 0..65535"},
		{"negative zone", "-I -w -1 -s 1.1.1.1 -d 2.2.2.2 -p udp --sport 1 --dport 2 -t 5", "f:1: -w -1"},
		{"bad address", good + good + "-I -s 1.1.1 -d 2.2.2.2 -p udp --sport 1 --dport 2 -t 5", "f:3: -s 1.1.1"},
		{"delete line", "-D -w 1 -s 1.1.1.1 -d 2.2.2.2 -p udp --sport 1 --dport 2", "f:1: only -I (create) lines are supported, not -D"},
		{"no timeout", "-I -s 1.1.1.1 -d 2.2.2.2 -p udp --sport 1 --dport 2", "f:1: -t (timeout > 0) is required"},
		{"tcp without state", "-I -s 1.1.1.1 -d 2.2.2.2 -p tcp --sport 1 --dport 2 -t 5", "f:1: --state is required for tcp"},
		{"unknown state", "-I -s 1.1.1.1 -d 2.2.2.2 -p tcp --sport 1 --dport 2 --state OPEN -t 5", "f:1: --state OPEN: unknown TCP state"},
		{"missing value", "-I -s 1.1.1.1 -d", "f:1: option -d needs a value"},
		{"mixed families", "-I -s 1.1.1.1 -d ::1 -p udp --sport 1 --dport 2 -t 5", "f:1: -s and -d are of different families"},
		{"icmp without id", "-I -s 1.1.1.1 -d 2.2.2.2 -p icmp --icmp-type 8 --icmp-code 0 -t 5", "f:1: --icmp-type, --icmp-code and --icmp-id are required"},
		{"bad status", "-I -s 1.1.1.1 -d 2.2.2.2 -p udp --sport 1 --dport 2 -u SEEN -t 5", `f:1: -u SEEN: unknown status "SEEN"`},
		// Found by FuzzParseLoad: a reply port on a protocol without ports
		// was kept in the entry but could not be sent to the kernel.
		{"port without ports", "-I -s 1.1.1.1 -d 2.2.2.2 -p 0 --reply-port-dst 1 -t 10", "f:1: port options only apply to tcp, udp"},
		{"icmp option on udp", "-I -s 1.1.1.1 -d 2.2.2.2 -p udp --sport 1 --dport 2 --icmp-type 8 -t 5", "f:1: --icmp-type, --icmp-code and --icmp-id only apply to icmp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ctnetlink.ParseLoad(strings.NewReader(tt.in), "f")
			var pe *ctnetlink.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ParseLoad = %d entries, %v; want a ParseError", len(got), err)
			}
			if got != nil {
				t.Errorf("ParseLoad returned %d entries with an error, want none", len(got))
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %q, want prefix %q", err, tt.want)
			}
		})
	}
}

func TestParseLoadFileMissing(t *testing.T) {
	_, err := ctnetlink.ParseLoadFile(filepath.Join(t.TempDir(), "nope"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ParseLoadFile of a missing file: %v, want ErrNotExist", err)
	}
}

// TestParseLoadBig parses files big enough to be split over cores: the
// entries keep the file's order, blank and comment lines in every part are
// skipped, and a bad line is reported with its line number in the whole
// file, the first one when several parts have one.
func TestParseLoadBig(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const n = 60000 // about 5 MB: four parts
	line := func(i int) string {
		return fmt.Sprintf("-I -w %d -s 10.0.0.1 -d 10.0.0.2 -p udp --sport %d --dport 53 -t 30\n", i%7, i%60000+1)
	}
	var b strings.Builder
	var want []uint16
	lineNo := map[int]int{} // entry index -> file line
	cur := 0
	for i := range n {
		if i%1000 == 0 {
			b.WriteString("# comment\n\n")
			cur += 2
		}
		b.WriteString(line(i))
		cur++
		lineNo[i] = cur
		want = append(want, uint16(i%60000+1))
	}
	text := b.String()
	got, err := ctnetlink.ParseLoad(strings.NewReader(text), "big")
	if err != nil {
		t.Fatal(err)
	}
	var ports []uint16
	for _, e := range got {
		ports = append(ports, e.Orig.Proto.SourcePort)
	}
	if diff := cmp.Diff(want, ports); diff != "" {
		t.Fatalf("source ports in order (-want +got):\n%s", diff)
	}

	// Break two lines, in different parts: the first is reported.
	lines := strings.SplitAfter(text, "\n")
	for _, bad := range [][]int{{lineNo[50000]}, {lineNo[20000], lineNo[50000]}, {lineNo[0]}, {lineNo[n-1]}} {
		broken := slices.Clone(lines)
		for _, l := range bad {
			broken[l-1] = "-I -s 10.0.0.1 -d 10.0.0.2 -p udp --sport 1 --dport 2\n" // no timeout
		}
		_, err := ctnetlink.ParseLoad(strings.NewReader(strings.Join(broken, "")), "big")
		if want := fmt.Sprintf("big:%d: -t (timeout > 0) is required", bad[0]); err == nil || err.Error() != want {
			t.Errorf("lines %v broken: error %v, want %q", bad, err, want)
		}
	}
}
