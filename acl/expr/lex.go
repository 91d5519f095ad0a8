package expr

import (
	"encoding/binary"
	"fmt"
	"math/big"
	"math/bits"
	"net/netip"
	"strconv"
	"strings"
	"sync"
)

// itemType identifies the type of a lexical item, as OVN's enum lex_type.
type itemType int

// Lexical item types. They mirror OVN's lib/lex.h token types that can appear
// in a match expression; the action-only tokens (`=`, `<->`, `--`, `;`, `:`,
// `-`) are lexed too because OVN lexes them and then rejects them in the
// parser with a syntax error naming them.
const (
	itemEOF           itemType = iota // end of input
	itemError                         // lexical error; val holds the message
	itemID                            // identifier: tcp.dst, reg0, is_chassis_resident
	itemInteger                       // integer, IPv4, IPv6 or Ethernet constant
	itemMaskedInteger                 // integer with /mask or /prefix
	itemString                        // "quoted string"
	itemMacro                         // $address_set
	itemPortGroup                     // @port_group
	itemTemplate                      // ^template_var
	itemLParen                        // (
	itemRParen                        // )
	itemLCurly                        // {
	itemRCurly                        // }
	itemLSquare                       // [
	itemRSquare                       // ]
	itemEq                            // ==
	itemNe                            // !=
	itemLt                            // <
	itemLe                            // <=
	itemGt                            // >
	itemGe                            // >=
	itemNot                           // !
	itemAnd                           // &&
	itemOr                            // ||
	itemEllipsis                      // ..
	itemComma                         // ,
	itemSemicolon                     // ;
	itemEquals                        // =
	itemExchange                      // <->
	itemDecrement                     // --
	itemColon                         // :
	itemHyphen                        // -
)

var itemNames = map[itemType]string{
	itemLParen: "(", itemRParen: ")", itemLCurly: "{", itemRCurly: "}",
	itemLSquare: "[", itemRSquare: "]", itemEq: "==", itemNe: "!=",
	itemLt: "<", itemLe: "<=", itemGt: ">", itemGe: ">=", itemNot: "!",
	itemAnd: "&&", itemOr: "||", itemEllipsis: "..", itemComma: ",",
	itemSemicolon: ";", itemEquals: "=", itemExchange: "<->",
	itemDecrement: "--", itemColon: ":", itemHyphen: "-",
}

// Format says how an integer constant was written; it decides the printed
// form and, for non-masked constants, the constant's width for type checks
// (OVN's enum lex_format).
type Format int

// Integer constant formats.
const (
	Decimal     Format = iota // 80
	Hexadecimal               // 0x50
	IPv4                      // 10.0.0.1
	IPv6                      // fe80::1
	Ethernet                  // 00:00:00:00:00:01
)

// String returns the format's name as OVN's lex_format_to_string.
func (f Format) String() string {
	switch f {
	case Decimal:
		return "decimal"
	case Hexadecimal:
		return "hexadecimal"
	case IPv4:
		return "IPv4"
	case IPv6:
		return "IPv6"
	case Ethernet:
		return "Ethernet"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// item is one lexical token with its byte span in the input.
type item struct {
	typ itemType
	pos int    // byte offset of the first byte
	end int    // byte offset just past the token
	val string // source text, or the error message for itemError
	str string // unescaped contents of a string; name of $, @, ^ tokens
	// An integer's value (ANDed with the mask) is w, its mask wm, unless
	// wider than 128 bits: then num (and mask) hold them. A mask may be a
	// shared prefix mask (mask set, wm unused). value and maskValue
	// return them as big.Ints.
	w, wm w128
	num   *big.Int
	mask  *big.Int
	fmt   Format
	hostb bool // masked constant had value bits outside the mask
}

// value returns the integer's value, in a box of b when it fits 128 bits.
func (it *item) value(b *boxes) *big.Int {
	if it.num != nil {
		return it.num
	}
	return b.big(it.w)
}

// bigValue returns the integer's value in a big.Int of its own.
func (it *item) bigValue() *big.Int {
	if it.num != nil {
		return it.num
	}
	return it.w.big()
}

// maskValue returns a masked integer's mask, in a box of b when it fits.
func (it *item) maskValue(b *boxes) *big.Int {
	if it.mask != nil {
		return it.mask
	}
	return b.big(it.wm)
}

// small reports whether the integer's value is at most max.
func (it *item) small(max uint64) bool {
	if it.num != nil {
		return it.num.IsUint64() && it.num.Uint64() <= max
	}
	return it.w[1] == 0 && it.w[0] <= max
}

// wordsPerBox is the number of big.Words of 128 bits.
const wordsPerBox = 128 / bits.UintSize

// bigBox is a big.Int of at most 128 bits with its words: one allocation
// (of a chunk of them) instead of two per constant.
type bigBox struct {
	i big.Int
	w [wordsPerBox]big.Word
}

// boxes hands out big.Ints from chunks of bigBoxes. The chunks belong to
// the constants they hold: a pooled parse drops its boxes (reset) rather
// than reusing them.
type boxes struct {
	chunk []bigBox
	hint  int // the size of the next chunk
}

// big returns w as a big.Int of the current chunk.
func (b *boxes) big(w w128) *big.Int {
	if len(b.chunk) == cap(b.chunk) {
		b.chunk = make([]bigBox, 0, max(b.hint, 4))
	}
	b.chunk = b.chunk[:len(b.chunk)+1]
	x := &b.chunk[len(b.chunk)-1]
	for i := range x.w {
		x.w[i] = big.Word(w[i*bits.UintSize/64] >> (i * bits.UintSize % 64))
	}
	return x.i.SetBits(x.w[:])
}

// reset starts a new chunk of size hint at the next use.
func (b *boxes) reset(hint int) { *b = boxes{hint: hint} }

// stateFn is one state of the lexer; it returns the next state.
type stateFn func(*lexer) stateFn

// lexer holds the state of the scanner. It runs the state machine over the
// whole input eagerly and stops at the first lexical error, like
// text/template/parse's lexer. OVN lexes lazily, but its parser can only ever
// observe the tokens before the first error token, so the results agree.
type lexer struct {
	input string
	start int // start of the current item
	pos   int // current position
	items []item
	cont  bool // keep lexing after an error
}

func lex(input string) []item { return lexMode(input, false) }

// lexMode lexes input; with cont it goes on after lexical errors from where
// OVN's lexer would resume, as lexer_parse_template_string does.
func lexMode(input string, cont bool) []item { return lexInto(input, cont, nil) }

// lexInto is lexMode appending the items to buf[:0] (a buffer of an
// earlier lex, for reuse) when it has room for a typical match of input's
// length.
func lexInto(input string, cont bool, buf []item) []item {
	l := &lexer{items: buf}
	return l.lex(input, cont)
}

// lex lexes input into l's item buffer, reusing it.
func (l *lexer) lex(input string, cont bool) []item {
	// About one item per four bytes of a typical match: one allocation.
	buf := l.items
	if n := len(input)/4 + 4; cap(buf) < n {
		buf = make([]item, 0, n)
	}
	*l = lexer{input: input, cont: cont, items: buf[:0]}
	for state := lexAny; state != nil; {
		state = state(l)
	}
	return l.items
}

// lexers are lexers with their item buffers, for the parses and address
// set conversions that do not keep the items (the parser copies what it
// keeps of them).
var lexers = sync.Pool{New: func() any { return new(lexer) }}

// putLexer returns l to the pool, its items cleared.
func putLexer(l *lexer) {
	putLexerBuf(l)
	lexers.Put(l)
}

// putLexerBuf clears l, keeping its item buffer.
func putLexerBuf(l *lexer) {
	clear(l.items)
	*l = lexer{items: l.items[:0]}
}

func (l *lexer) at(i int) byte {
	if i < len(l.input) {
		return l.input[i]
	}
	return 0
}

func (l *lexer) emit(t itemType) {
	l.items = append(l.items, item{typ: t, pos: l.start, end: l.pos, val: l.input[l.start:l.pos]})
	l.start = l.pos
}

// errorf emits an error item and stops the scan.
func (l *lexer) errorf(format string, args ...any) stateFn {
	l.items = append(l.items, item{typ: itemError, pos: l.start, end: l.pos, val: fmt.Sprintf(format, args...)})
	if l.cont {
		l.start = l.pos
		return lexAny
	}
	return nil
}

// punctItems are the one-byte punctuation tokens.
var punctItems = [256]itemType{'(': itemLParen, ')': itemRParen, '{': itemLCurly, '}': itemRCurly,
	'[': itemLSquare, ']': itemRSquare, ',': itemComma, ';': itemSemicolon}

func lexAny(l *lexer) stateFn {
	l.start = l.pos
	c := l.at(l.pos)
	if c == 0 { // end of input; OVN also stops at a NUL byte
		l.items = append(l.items, item{typ: itemEOF, pos: l.pos, end: l.pos})
		return nil
	}
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		l.pos++
		return lexAny
	case '/':
		return lexComment
	case '(', ')', '{', '}', '[', ']', ',', ';':
		l.pos++
		l.emit(punctItems[c])
		return lexAny
	case '=':
		return l.two('=', itemEq, itemEquals)
	case '!':
		return l.two('=', itemNe, itemNot)
	case '>':
		return l.two('=', itemGe, itemGt)
	case '-':
		return l.two('-', itemDecrement, itemHyphen)
	case '&', '|':
		l.pos++
		if l.at(l.pos) != c {
			return l.errorf("`%c' is only valid as part of `%c%c'.", c, c, c)
		}
		l.pos++
		if c == '&' {
			l.emit(itemAnd)
		} else {
			l.emit(itemOr)
		}
		return lexAny
	case '<':
		l.pos++
		switch {
		case l.at(l.pos) == '=':
			l.pos++
			l.emit(itemLe)
		case l.at(l.pos) == '-' && l.at(l.pos+1) == '>':
			l.pos += 2
			l.emit(itemExchange)
		default:
			l.emit(itemLt)
		}
		return lexAny
	case '.':
		l.pos++
		if l.at(l.pos) != '.' {
			return l.errorf("`.' is only valid as part of `..' or a number.")
		}
		l.pos++
		l.emit(itemEllipsis)
		return lexAny
	case '$':
		return lexMacro
	case '@':
		return lexPortGroup
	case '^':
		return lexTemplate
	case ':':
		if l.at(l.pos+1) != ':' {
			l.pos++
			l.emit(itemColon)
			return lexAny
		}
		return lexNumber
	case '"':
		return lexString
	}
	switch {
	case c >= '0' && c <= '9':
		return lexNumber
	case isHex(c):
		// An Ethernet or IPv6 address starting with a letter always has a
		// colon after its leading hex digits; an identifier never does.
		i := l.pos
		for isHex(l.at(i)) {
			i++
		}
		if l.at(i) == ':' {
			return lexNumber
		}
		return lexIdent
	case isID1(c):
		return lexIdent
	}
	l.pos++
	if c >= 0x20 && c < 0x7f {
		return l.errorf("Invalid character `%c' in input.", c)
	}
	// OVN prints the byte in decimal after "0x" (a bug kept for fidelity),
	// and as a signed char.
	return l.errorf("Invalid byte 0x%d in input.", int(int8(c)))
}

// two lexes a one- or two-byte operator: c followed by next is long, else short.
func (l *lexer) two(next byte, long, short itemType) stateFn {
	l.pos++
	if l.at(l.pos) == next {
		l.pos++
		l.emit(long)
	} else {
		l.emit(short)
	}
	return lexAny
}

func lexComment(l *lexer) stateFn {
	l.pos++ // '/'
	switch l.at(l.pos) {
	case '/':
		for l.at(l.pos) != 0 && l.at(l.pos) != '\n' {
			l.pos++
		}
		return lexAny
	case '*':
		l.pos++
		for {
			if l.at(l.pos) == '*' && l.at(l.pos+1) == '/' {
				l.pos += 2
				return lexAny
			}
			if c := l.at(l.pos); c == 0 || c == '\n' {
				return l.errorf("`/*' without matching `*/'.")
			}
			l.pos++
		}
	}
	return l.errorf("`/' is only valid as part of `//' or `/*'.")
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isID1(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '.'
}

func isIDN(c byte) bool { return isID1(c) || (c >= '0' && c <= '9') }

func isAlnum(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

func lexIdent(l *lexer) stateFn {
	l.pos++
	for isIDN(l.at(l.pos)) {
		l.pos++
	}
	l.emit(itemID)
	l.items[len(l.items)-1].str = l.items[len(l.items)-1].val
	return lexAny
}

func lexMacro(l *lexer) stateFn     { return l.sigil(itemMacro, '$') }
func lexPortGroup(l *lexer) stateFn { return l.sigil(itemPortGroup, '@') }
func lexTemplate(l *lexer) stateFn  { return l.sigil(itemTemplate, '^') }

func (l *lexer) sigil(t itemType, sigil byte) stateFn {
	l.pos++
	if !isID1(l.at(l.pos)) {
		return l.errorf("`%c' must be followed by a valid identifier.", sigil)
	}
	for isIDN(l.at(l.pos)) {
		l.pos++
	}
	l.emit(t)
	it := &l.items[len(l.items)-1]
	it.str = it.val[1:]
	return lexAny
}

func lexString(l *lexer) stateFn {
	l.pos++
	for {
		switch l.at(l.pos) {
		case 0:
			return l.errorf("Input ends inside quoted string.")
		case '"':
			raw := l.input[l.start+1 : l.pos]
			l.pos++
			s, err := jsonUnescape(raw)
			if err != "" {
				return l.errorf("%s", err)
			}
			l.emit(itemString)
			l.items[len(l.items)-1].str = s
			return lexAny
		case '\\':
			l.pos++
			if l.at(l.pos) != 0 {
				l.pos++
			}
		default:
			l.pos++
		}
	}
}

// jsonUnescape is OVS's json_string_unescape: it returns the unescaped string
// or a non-empty error message.
func jsonUnescape(in string) (string, string) {
	if !strings.ContainsAny(in, `\"`) {
		return in, "" // nothing to unescape
	}
	var b strings.Builder
	for i := 0; i < len(in); {
		c := in[i]
		if c == '"' {
			return "", "quoted string may not include unescaped \""
		}
		if c != '\\' {
			b.WriteByte(c)
			i++
			continue
		}
		i++
		if i >= len(in) {
			return "", "quoted string may not end with backslash"
		}
		e := in[i]
		i++
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			c0, err := hex4(in[i:])
			if err != "" {
				return "", err
			}
			i += 4
			if c0 < 0xd800 || c0 > 0xdbff {
				b.WriteRune(rune(c0))
				continue
			}
			if i+2 > len(in) || in[i] != '\\' || in[i+1] != 'u' {
				return "", "malformed escaped surrogate pair"
			}
			i += 2
			c1, err := hex4(in[i:])
			if err != "" {
				return "", err
			}
			i += 4
			if c1 < 0xdc00 || c1 > 0xdfff {
				return "", "second half of escaped surrogate pair is not trailing surrogate"
			}
			b.WriteRune(rune(((c0 - 0xd800) << 10) + (c1 - 0xdc00) + 0x10000))
		default:
			return "", fmt.Sprintf("bad escape \\%c", e)
		}
	}
	return b.String(), ""
}

func hex4(s string) (int, string) {
	if len(s) < 4 {
		return 0, "quoted string ends within \\u escape"
	}
	v := 0
	for i := 0; i < 4; i++ {
		c := s[i]
		var d int
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		default:
			return 0, fmt.Sprintf("malformed \\u escape")
		}
		v = v<<4 | d
	}
	if v == 0 {
		return 0, "null bytes not supported in quoted strings"
	}
	return v, ""
}

func lexNumber(l *lexer) stateFn {
	it, ok := l.scanInteger(l.pos)
	if !ok {
		l.pos = it.end
		return l.errorf("%s", it.val)
	}
	l.pos = it.end
	if l.at(l.pos) == '/' {
		m, ok := l.scanInteger(l.pos + 1)
		l.pos = m.end
		if !ok {
			return l.errorf("%s", m.val)
		}
		if !applyMask(&it, &m) {
			return l.errorf("Value and mask have incompatible formats.")
		}
		it.typ = itemMaskedInteger
	}
	it.pos, it.end = l.start, l.pos
	it.val = l.input[l.start:l.pos]
	l.items = append(l.items, it)
	return lexAny
}

// scanInteger is OVN's lex_parse_integer__: it finds the extent of an integer
// starting at p and converts it. On failure the item's val is the message.
func (l *lexer) scanInteger(p int) (item, bool) {
	end := p
	sawDot := false
	for {
		c := l.at(end)
		if isAlnum(c) || (c == ':' && !sawDot) || (c == '.' && l.at(end+1) != '.') {
			if c == '.' {
				sawDot = true
			}
			end++
			continue
		}
		break
	}
	s := l.input[p:end]
	it := item{typ: itemInteger, end: end}
	fail := func(msg string) (item, bool) { it.val = msg; return it, false }
	if s == "" {
		return fail("Integer constant expected.")
	}
	if mac, ok := parseMAC(s); ok {
		it.w, it.fmt = w128{mac}, Ethernet
		return it, true
	}
	if allDigits(s) {
		if s[0] == '0' && len(s) > 1 {
			return fail("Decimal constants must not have leading zeros.")
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			it.w, it.fmt = w128{u}, Decimal
			return it, true
		}
		n, ok := new(big.Int).SetString(s, 10)
		if !ok || n.BitLen() > 64 {
			return fail("Decimal constants must be less than 2**64.")
		}
		it.w, it.fmt = w128{n.Uint64()}, Decimal
		return it, true
	}
	if s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		if len(s) == 2 {
			return fail(fmt.Sprintf("Hex digits expected following 0%c.", s[1]))
		}
		digits := s[2:]
		// Scan from the least significant digit like OVN so that the first
		// problem found is the one OVN reports.
		for i := 0; i < len(digits); i++ {
			c := digits[len(digits)-1-i]
			if !isHex(c) {
				return fail("Invalid syntax in hexadecimal constant.")
			}
			if c != '0' && i/2 >= 128 {
				return fail("Hexadecimal constant requires more than 1024 bits.")
			}
		}
		it.fmt = Hexadecimal
		if sig := strings.TrimLeft(digits, "0"); len(sig) <= 32 {
			for i := 0; i < len(sig); i++ {
				it.w = it.w.shl(4)
				it.w[0] |= uint64(hexVal(sig[i]))
			}
			return it, true
		}
		it.num, _ = new(big.Int).SetString(digits, 16)
		return it, true
	}
	if len(s) < 46 { // INET6_ADDRSTRLEN
		if !strings.Contains(s, ":") {
			if a, err := netip.ParseAddr(s); err == nil && a.Is4() {
				b := a.As4()
				it.w, it.fmt = w128{uint64(binary.BigEndian.Uint32(b[:]))}, IPv4
				return it, true
			}
		} else if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
			b := a.As16()
			it.w, it.fmt = w128{binary.BigEndian.Uint64(b[8:]), binary.BigEndian.Uint64(b[:8])}, IPv6
			return it, true
		}
	}
	return fail("Invalid numeric constant.")
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseMAC accepts what OVS's ovs_scan(ETH_ADDR_SCAN_FMT) accepts in a
// 17-byte token: six colon-separated %hhx conversions, each an optional 0x
// and one or more hex digits, truncated to 8 bits (so "0:00:00:00:00:001"
// is a MAC). It returns the 48-bit address.
func parseMAC(s string) (uint64, bool) {
	if len(s) != 17 || strings.Count(s, ":") != 5 {
		return 0, false
	}
	var n uint64
	for range 6 {
		p, rest, _ := strings.Cut(s, ":")
		s = rest
		if len(p) > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') {
			p = p[2:]
		}
		if p == "" {
			return 0, false
		}
		var v uint64
		for i := 0; i < len(p); i++ {
			if !isHex(p[i]) {
				return 0, false
			}
			v = v*16 + uint64(hexVal(p[i]))
		}
		n = n<<8 | v&0xff
	}
	return n, true
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	default:
		return int(c-'A') + 10
	}
}

// applyMask is OVN's lex_parse_mask after the mask integer was scanned.
func applyMask(v, m *item) bool {
	prefix := uint32(m.w[0]) // OVN truncates the prefix to 32 bits
	if m.num != nil {
		prefix = uint32(m.num.Uint64())
	}
	decimal := m.fmt == Decimal && (m.num == nil || m.num.IsUint64())
	switch {
	case v.fmt == m.fmt:
		v.wm, v.mask = m.w, m.num
	case v.fmt == IPv4 && decimal && prefix <= 32:
		v.wm, v.mask = ones128(32).andNot(ones128(32-int(prefix))), prefixMasks()[0][prefix]
	case v.fmt == IPv6 && decimal && prefix <= 128:
		v.wm, v.mask = ones128(128).andNot(ones128(128-int(prefix))), prefixMasks()[1][prefix]
	case v.fmt == Decimal && m.fmt == Hexadecimal && v.num == nil && v.w == (w128{}):
		v.fmt = Hexadecimal
		v.wm, v.mask = m.w, m.num
	default:
		return false
	}
	if v.num == nil && (v.mask == nil || v.mask.BitLen() <= 128) {
		masked := v.w.and(v.wm)
		v.hostb = masked != v.w
		v.w = masked
		return true
	}
	num, mask := v.num, v.mask
	if num == nil {
		num = v.w.big()
	}
	if mask == nil {
		mask = v.wm.big()
	}
	masked := new(big.Int).And(num, mask)
	v.hostb = masked.Cmp(num) != 0
	v.num, v.mask = masked, mask
	if masked.BitLen() <= 128 {
		v.w, v.num = words(masked), nil
	}
	return true
}

// prefixMasks are the masks of the IPv4 (0) and IPv6 (1) prefix lengths,
// shared by the constants that use them (read only).
var prefixMasks = sync.OnceValue(func() (m [2][]*big.Int) {
	for i, width := range []int{32, 128} {
		for n := 0; n <= width; n++ {
			m[i] = append(m[i], prefixMask(n, width))
		}
	}
	return m
})

// prefixMask returns a width-bit mask with its n high bits set.
func prefixMask(n, width int) *big.Int {
	all := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(width)), big.NewInt(1))
	low := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), uint(width-n)), big.NewInt(1))
	return all.Xor(all, low)
}
