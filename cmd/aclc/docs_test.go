package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// consolePages are the docs pages whose ```console examples
// TestDocsConsoleExamples runs.
var consolePages = []string{"docs/reach.md", "docs/trace.md"}

// docPrograms are the programs a console example may start with: the
// aclc under test and the shell tools an operator's session uses around
// it (making an NB variant, reading an exit status).
var docPrograms = map[string]bool{"aclc": true, "sed": true, "echo": true}

// TestDocsConsoleExamples keeps the docs' console examples true: every
// `$ ` command of every ```console block of consolePages runs, a page
// being one session read from the top: in the page's own temporary
// directory whose entries link to the repository root's (so the pages'
// repository-relative paths resolve, and the files a session writes stay
// out of the tree and are there for the page's later blocks), with the
// aclc built for the tests first on PATH, through sh (so `> after.yaml`,
// `; echo $?` and a `\` continuation are the shell's, and a command's
// `$?` is the exit status of the previous command); its output, stdout and stderr
// together, must match the lines the page shows under it, where a line
// `...` stands for any run of lines and `...` inside a line for any text.
// A mismatch names the page's line.
func TestDocsConsoleExamples(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range consolePages {
		t.Run(filepath.Base(page), func(t *testing.T) {
			blocks, err := readConsoleBlocks(filepath.Join(root, page))
			if err != nil {
				t.Fatal(err)
			}
			if len(blocks) == 0 {
				t.Fatalf("%s has no console example", page)
			}
			s := newDocSession(t, root)
			for _, b := range blocks {
				if len(b.commands) == 0 {
					t.Errorf("%s:%d: a console block without a `$ ` command", page, b.line)
					continue
				}
				s.run(t, page, b)
			}
		})
	}
}

// docSession is a page's shell session: its directory, environment and
// the exit status of its last command.
type docSession struct {
	dir    string
	env    []string
	status int
}

// newDocSession makes a session directory linking to root's entries.
func newDocSession(t *testing.T, root string) *docSession {
	dir := t.TempDir()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "OVN_NB_DB=", "PATH="+filepath.Dir(aclcBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	return &docSession{dir: dir, env: env}
}

// run runs block b of page in the session and checks each command's
// output.
func (s *docSession) run(t *testing.T, page string, b docBlock) {
	for _, c := range b.commands {
		if prog := strings.Fields(c.text); len(prog) == 0 || !docPrograms[prog[0]] {
			t.Errorf("%s:%d: %q: a console example runs aclc, sed or echo", page, c.line, c.text)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		// `(exit N)` gives the command the previous one's $?.
		cmd := exec.CommandContext(ctx, "sh", "-c", "(exit "+strconv.Itoa(s.status)+"); "+c.text)
		cmd.Dir, cmd.Env = s.dir, s.env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		cancel()
		s.status = 0
		if ee, ok := err.(*exec.ExitError); ok {
			s.status = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s:%d: %v", page, c.line, err)
		}
		if line, why := outputMismatch(c.want, c.line, out.String()); why != "" {
			t.Errorf("%s:%d: %s\n(the command at line %d: $ %s)\nits output (exit %d):\n%s", page, line, why, c.line, c.text, s.status, out.String())
		}
	}
}

// TestOutputMismatch pins the examples' matching rules: `...` alone is
// any run of lines (none too), inside a line any text, and every output
// line must be accounted for.
func TestOutputMismatch(t *testing.T) {
	lines := func(texts ...string) []docLine {
		var out []docLine
		for i, s := range texts {
			out = append(out, docLine{line: 10 + i, text: s})
		}
		return out
	}
	for _, c := range []struct {
		want []docLine
		got  string
		line int // 0: a match
	}{
		{lines("a", "...", "c"), "a\nb\nb\nc\n", 0},
		{lines("a", "...", "c"), "a\nc\n", 0},
		{lines("a", "..."), "a\n", 0},
		{lines("    ...", "c"), "x\ny\nc\n", 0},
		{lines("x: ... y ..."), "x: 1 2 y 3\n", 0},
		{lines("x: ... y"), "x: 1 2 z\n", 10},
		{lines("a", "...", "c", "d"), "a\nc\nx\n", 13},
		{lines("a"), "a\nb\n", 10},
		{lines("a", "b"), "a\n", 11},
		{nil, "", 0},
		{nil, "x\n", 6},
		{lines("a.b"), "axb\n", 10}, // the rest is literal
	} {
		line, why := outputMismatch(c.want, 5, c.got)
		if line != c.line || (why == "") != (c.line == 0) {
			t.Errorf("want %v, output %q: line %d (%s), want line %d", c.want, c.got, line, why, c.line)
		}
	}
}
