package jsonstr

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// want is encoding/json's encoding of s, with or without HTML escaping.
func want(t *testing.T, s string, html bool) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(html)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return string(bytes.TrimRight(buf.Bytes(), "\n"))
}

// TestAppendEveryByte checks every single byte, each in the middle of
// plain text, and random strings over a mix of ASCII, control bytes,
// HTML characters, U+2028 and invalid UTF-8, in both modes.
func TestAppendEveryByte(t *testing.T) {
	var cases []string
	for c := 0; c < 256; c++ {
		cases = append(cases, string([]byte{byte(c)}), "ab"+string([]byte{byte(c)})+"cd")
	}
	alphabet := []string{"a", "Z", " ", `"`, `\`, "<", ">", "&", "\n", "\t", "\b", "\f", "\r", "\x00", "\x1f", "\x7f", "é", "\u2028", "\xff", "/"}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		var s string
		for range r.IntN(12) {
			s += alphabet[r.IntN(len(alphabet))]
		}
		cases = append(cases, s)
	}
	for _, s := range cases {
		for _, html := range []bool{false, true} {
			if got, w := string(Append([]byte("x"), s, html)), "x"+want(t, s, html); got != w {
				t.Errorf("Append(%q, html=%v) = %s, encoding/json: %s", s, html, got, w)
			}
		}
	}
}
