package lflow

import (
	"fmt"
	"strings"
)

// SplitActions splits a flow's actions s at top-level semicolons, keeping
// braces, parentheses and strings together and removing comments, as
// OVN's action lexer does ("/* drop */" is no action). Package trace
// executes the statements on one packet, package reach on sets of packets.
func SplitActions(s string) ([]string, error) {
	var (
		out   []string
		cur   strings.Builder
		depth int
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("unterminated comment in %q", s)
			}
			i += end + 3
			cur.WriteByte(' ')
			continue
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated string in %q", s)
			}
			cur.WriteString(s[i : j+1])
			i = j
			continue
		case c == '{' || c == '(':
			depth++
		case c == '}' || c == ')':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced %q in %q", c, s)
			}
		case c == ';' && depth == 0:
			if t := strings.TrimSpace(cur.String()); t != "" {
				out = append(out, t)
			}
			cur.Reset()
			continue
		}
		cur.WriteByte(c)
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced braces in %q", s)
	}
	if t := strings.TrimSpace(cur.String()); t != "" {
		out = append(out, t)
	}
	return out, nil
}
