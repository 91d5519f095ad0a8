// Package jsonstr appends Go strings to a buffer as JSON strings, byte for
// byte as encoding/json writes them, without reflection: lint's and watch's
// hand-written JSON encoders (findings, delta lines) write thousands of
// strings per report, and encoding/json's reflection was most of their cost.
package jsonstr

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// Append appends s quoted as encoding/json quotes it. With html, `<', `>'
// and `&' are escaped as \u003c, \u003e, \u0026 (json.Marshal's default);
// without, they are written as is (an Encoder with SetEscapeHTML(false)).
// ASCII is handled here; a string with any other byte (where encoding/json
// escapes U+2028, U+2029 and replaces invalid UTF-8) goes through
// encoding/json itself.
func Append(b []byte, s string, html bool) []byte {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(html)
			enc.Encode(s) // a string always encodes
			return append(b, bytes.TrimRight(buf.Bytes(), "\n")...)
		}
	}
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && (!html || c != '<' && c != '>' && c != '&') {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default: // other control bytes, and <, >, & with html
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	return append(append(b, s[start:]...), '"')
}
