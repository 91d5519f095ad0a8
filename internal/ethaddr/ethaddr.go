// Package ethaddr reads Ethernet addresses as northd does: with
// ovs_scan's ETH_ADDR_SCAN_FMT, six "%hhx" conversions separated by ':'
// (lib/packets.h). OVN prints them back as ETH_ADDR_FMT, two lower-case
// hex digits per octet, whatever the NB spelled.
package ethaddr

import (
	"fmt"
	"net/netip"
	"strings"
)

// Addr is a 48-bit Ethernet address.
type Addr [6]byte

// String is ETH_ADDR_FMT: "00:00:00:00:00:01".
func (a Addr) String() string {
	return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", a[0], a[1], a[2], a[3], a[4], a[5])
}

// LinkLocal is the address's IPv6 link-local address (EUI-64, OVS
// in6_generate_lla).
func (a Addr) LinkLocal() netip.Addr {
	return netip.AddrFrom16([16]byte{0xfe, 0x80, 8: a[0] ^ 2, 9: a[1], 10: a[2], 11: 0xff, 12: 0xfe, 13: a[3], 14: a[4], 15: a[5]})
}

// Scan reads an address at the start of s as ovs_scan(s,
// ETH_ADDR_SCAN_FMT) does and returns it with the number of bytes read;
// what follows is not looked at (northd's L2 lookup flows take "the
// address" of an LSP addresses entry this way). Each octet is a "%hhx":
// optional white space, an optional sign, an optional 0x or 0X, one or
// more hex digits; its value is strtoul's (saturated at 2^64-1, negated
// after a '-') cut to the low 8 bits, so "0", "000", "0x0" and "100" all
// read as 00 and "1ff" and "-1" as ff.
func Scan(s string) (a Addr, n int, ok bool) {
	for i := range a {
		if i > 0 {
			if n >= len(s) || s[n] != ':' {
				return Addr{}, 0, false
			}
			n++
		}
		v, m, ok := scanHex(s[n:])
		if !ok {
			return Addr{}, 0, false
		}
		a[i] = v
		n += m
	}
	return a, n, true
}

// Parse is Scan of the whole of s: what northd's extract_addresses and
// eth_addr_from_string accept as an address on its own.
func Parse(s string) (Addr, error) {
	a, n, ok := Scan(s)
	if !ok || n != len(s) {
		return Addr{}, fmt.Errorf("bad MAC %q", s)
	}
	return a, nil
}

// scanHex is one "%hhx" conversion at the start of s.
func scanHex(s string) (byte, int, bool) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if i+1 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') {
		i += 2
		if i >= len(s) || hexVal(s[i]) < 0 {
			return 0, 0, false // scanf has taken the "0x" and finds no digit
		}
	}
	start := i
	var v uint64
	over := false
	for i < len(s) && hexVal(s[i]) >= 0 {
		if v > (1<<64-1)>>4 {
			over = true
		}
		v = v<<4 | uint64(hexVal(s[i]))
		i++
	}
	if i == start {
		return 0, 0, false
	}
	if over {
		return 0xff, i, true // ULONG_MAX, also when negated
	}
	if neg {
		v = -v
	}
	return byte(v), i, true
}

// hexVal is c's value as a hex digit, -1 if it is none.
func hexVal(c byte) int {
	i := strings.IndexByte("0123456789abcdefABCDEF", c)
	if i >= 16 {
		i -= 6
	}
	return i
}

func isSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }
