package main

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// This file reads the ```console examples of a docs page so that a test
// can run them (docs_test.go): each block is a session of `$ COMMAND`
// lines, a command continued on the next line when it ends in `\`, each
// followed by the output it prints.

// docCommand is one `$ ` command of a console block and the output the
// page shows for it.
type docCommand struct {
	line int    // the page's line of the `$ `
	text string // the command, continuation lines joined with "\n"
	want []docLine
}

// docLine is an expected output line: `...` alone matches any run of
// lines (none too), `...` inside a line any text.
type docLine struct {
	line int // the page's line
	text string
}

// docBlock is one ```console block.
type docBlock struct {
	line     int // the page's line of the opening fence
	commands []docCommand
}

// readConsoleBlocks returns the ```console blocks of the page at path;
// a block indented (in a list item) loses its fence's indentation.
// Output before a block's first command is an error: it would be checked
// against nothing.
func readConsoleBlocks(path string) ([]docBlock, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var blocks []docBlock
	var cur *docBlock
	continued := false
	indent := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if cur != nil {
			l = strings.TrimPrefix(l, indent)
		}
		switch {
		case cur == nil:
			if strings.TrimSpace(l) == "```console" {
				indent = l[:len(l)-len(strings.TrimLeft(l, " "))]
				blocks = append(blocks, docBlock{line: n})
				cur = &blocks[len(blocks)-1]
			}
		case strings.TrimSpace(l) == "```":
			if continued {
				return nil, fmt.Errorf("%s:%d: the block ends inside a command continued with \\", path, n)
			}
			cur = nil
		case continued:
			c := &cur.commands[len(cur.commands)-1]
			c.text += "\n" + l
			continued = strings.HasSuffix(l, `\`)
		case strings.HasPrefix(l, "$ "):
			cur.commands = append(cur.commands, docCommand{line: n, text: strings.TrimPrefix(l, "$ ")})
			continued = strings.HasSuffix(l, `\`)
		case len(cur.commands) == 0:
			return nil, fmt.Errorf("%s:%d: output before the block's first `$ ` command", path, n)
		default:
			c := &cur.commands[len(cur.commands)-1]
			c.want = append(c.want, docLine{line: n, text: l})
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: the console block is not closed", path, cur.line)
	}
	return blocks, nil
}

// isEllipsis reports whether an expected line stands for any run of lines.
func isEllipsis(l docLine) bool { return strings.TrimSpace(l.text) == "..." }

// linePattern compiles an expected line: `...` inside it matches any
// text, the rest literally; trailing blanks do not count.
func linePattern(text string) *regexp.Regexp {
	parts := strings.Split(strings.TrimRight(text, " \t"), "...")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}

// outputMismatch compares got (a command's output) with want. It returns
// "" when they match, else where they part: the page's line that matches
// no output (or, past the last line, the output no line accounts for;
// line is then the last one's, or after the command's), with the output
// line found there.
func outputMismatch(want []docLine, cmdLine int, got string) (line int, why string) {
	out := strings.Split(strings.TrimRight(got, "\n"), "\n")
	if got == "" {
		out = nil
	}
	pats := make([]*regexp.Regexp, len(want))
	for i, w := range want {
		if !isEllipsis(w) {
			pats[i] = linePattern(w.text)
		}
	}
	// match(i, j): want[i:] matches out[j:]; the failure reached furthest
	// into want (at its first output line) is the one reported.
	seen := map[[2]int]bool{}
	failI, failJ := -1, -1
	var match func(i, j int) bool
	match = func(i, j int) bool {
		k := [2]int{i, j}
		if v, ok := seen[k]; ok {
			return v
		}
		var ok bool
		switch {
		case i == len(want):
			ok = j == len(out)
		case pats[i] == nil:
			ok = match(i+1, j) || (j < len(out) && match(i, j+1))
		default:
			ok = j < len(out) && pats[i].MatchString(strings.TrimRight(out[j], " \t")) && match(i+1, j+1)
		}
		if !ok && (i == len(want) || pats[i] != nil) && (i > failI || (i == failI && j < failJ)) {
			failI, failJ = i, j
		}
		seen[k] = ok
		return ok
	}
	if match(0, 0) {
		return 0, ""
	}
	gotLine := "the end of the output"
	if failJ >= 0 && failJ < len(out) {
		gotLine = fmt.Sprintf("output line %d: %q", failJ+1, out[failJ])
	}
	if failI < 0 || failI == len(want) {
		line = cmdLine + 1
		if len(want) > 0 {
			line = want[len(want)-1].line
		}
		return line, "output past the last line the page shows: " + gotLine
	}
	if failI > 0 && pats[failI-1] == nil {
		return want[failI].line, fmt.Sprintf("want %q after the `...`; no output line from %s on matches it", want[failI].text, gotLine)
	}
	return want[failI].line, fmt.Sprintf("want %q; got %s", want[failI].text, gotLine)
}
