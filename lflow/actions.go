package lflow

import (
	"fmt"
	"strconv"
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

// Next is what the arguments of a next action say: next(N),
// next(pipeline=P, table=N), or none (Table -1, no pipeline).
type Next struct {
	HasPipeline bool
	Pipeline    Pipeline
	Table       int // -1 when not given
	// Unknown are argument names other than pipeline and table, which
	// northd does not write: a caller decides whether they matter.
	Unknown []string
}

// ParseNext parses the argument list args of next(args) (the text
// between the parentheses); a table that is not a number is an error.
func ParseNext(args string) (Next, error) {
	n := Next{Table: -1}
	for _, kv := range strings.Split(args, ",") {
		k, v, has := strings.Cut(strings.TrimSpace(kv), "=")
		if !has {
			k, v = "table", k
		}
		switch k = strings.TrimSpace(k); k {
		case "pipeline":
			n.HasPipeline, n.Pipeline = true, Ingress
			if strings.TrimSpace(v) == "egress" {
				n.Pipeline = Egress
			}
		case "table":
			t, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return n, fmt.Errorf("bad next table %q", strings.TrimSpace(v))
			}
			n.Table = t
		default:
			n.Unknown = append(n.Unknown, k)
		}
	}
	return n, nil
}
