package expr

import (
	"math/big"
	"strconv"
)

func newInt(v int64) *big.Int { return big.NewInt(v) }

// quote returns s as a string literal OVN's lexer reads back as s.
func quote(s string) string {
	b := []byte{'"'}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\t':
			b = append(b, '\\', 't')
		case '\r':
			b = append(b, '\\', 'r')
		case 0:
			b = append(b, []byte(`\u0000`)...)
		default:
			if c < 0x20 {
				b = append(b, []byte(`\u00`+strconv.FormatInt(int64(c)>>4, 16)+strconv.FormatInt(int64(c)&15, 16))...)
			} else {
				b = append(b, c)
			}
		}
	}
	return string(append(b, '"'))
}
