package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aclc/aclc/reach"
)

var updateReach = flag.Bool("update-reach", false, "rewrite testdata/reach/* from a run of aclc reach")

// reachPairsFixture has two switches joined by a router and one alone.
const reachPairsFixture = "../../reach/testdata/pairs.yaml"

// TestReachGolden runs aclc reach on every pair of reachPairsFixture in
// each format and compares the output with testdata/reach/pairs.FORMAT,
// written by a run of aclc reach with -update-reach (and reviewed): a
// change to any format shows as a diff. The exit status is 3 (routed
// pairs and ARP/ND parts are not exact).
func TestReachGolden(t *testing.T) {
	for _, format := range reachFormats {
		r := aclc(t, "", "reach", reachPairsFixture, "--format", format)
		if r.code != 3 || r.stderr != "" {
			t.Errorf("%s: exit %d, want 3; stderr %q", format, r.code, r.stderr)
		}
		golden := filepath.Join("testdata", "reach", "pairs."+format)
		if *updateReach {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, []byte(r.stdout), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test ./cmd/aclc -run TestReachGolden -args -update-reach writes it)", err)
		}
		if r.stdout != string(want) {
			t.Errorf("%s: output differs from %s:\n%s", format, golden, r.stdout)
		}
	}
}

// reachJSON runs aclc reach --format json with args and parses its lines.
func reachJSON(t *testing.T, args ...string) ([]reachLine, []map[string]any) {
	t.Helper()
	r := aclc(t, "", append([]string{"reach", reachPairsFixture, "--format", "json"}, args...)...)
	if r.code != 0 && r.code != 3 {
		t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
	}
	var lines []reachLine
	var raw []map[string]any
	for _, s := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var l reachLine
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &l); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		lines, raw = append(lines, l), append(raw, m)
	}
	return lines, raw
}

// TestReachCSV checks that the CSV parses, has the JSON's fields as
// columns (nested ones flattened) and one row per JSON line with the same
// values.
func TestReachCSV(t *testing.T) {
	r := aclc(t, "", "reach", reachPairsFixture, "--from", "@pg_a", "--format", "csv")
	rows, err := csv.NewReader(strings.NewReader(r.stdout)).ReadAll()
	if err != nil || r.code != 3 {
		t.Fatalf("exit %d, csv %v:\n%s", r.code, err, r.stdout)
	}
	lines, raw := reachJSON(t, "--from", "@pg_a")
	if len(rows) != len(lines)+1 {
		t.Fatalf("%d rows, want a header and %d", len(rows), len(lines))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for i, m := range raw {
		row := rows[i+1]
		for k, v := range m {
			if w, ok := v.(map[string]any); ok {
				for k2, v2 := range w {
					checkCell(t, row, col, k+"_"+k2, v2)
				}
				continue
			}
			checkCell(t, row, col, k, v)
		}
	}
}

func checkCell(t *testing.T, row []string, col map[string]int, name string, v any) {
	t.Helper()
	i, ok := col[name]
	if !ok {
		t.Errorf("no column %s", name)
		return
	}
	var want string
	switch v := v.(type) {
	case string:
		want = v
	case bool:
		want = map[bool]string{true: "true", false: "false"}[v]
	case []any:
		var s []string
		for _, e := range v {
			switch e := e.(type) {
			case string:
				s = append(s, e)
			default: // a deciding ACL's object: its text name
				var a reach.ACL
				b, _ := json.Marshal(e)
				if err := json.Unmarshal(b, &a); err != nil {
					t.Fatal(err)
				}
				s = append(s, a.String())
			}
		}
		want = strings.Join(s, ";")
	}
	if row[i] != want {
		t.Errorf("column %s: %q, want %q (row %v)", name, row[i], want, row)
	}
}

// TestReachMatrixAgrees checks every cell of the matrix (and every edge
// of the dot graph) against a run of aclc reach for that pair alone: -
// when it has no path, n/e when it is not exact as a whole, else none
// when no part is allowed, all when no exact part is dropped or rejected,
// part otherwise, and * when some part is not exact.
func TestReachMatrixAgrees(t *testing.T) {
	r := aclc(t, "", "reach", reachPairsFixture, "--format", "matrix")
	d := aclc(t, "", "reach", reachPairsFixture, "--format", "dot")
	var cols []string
	cells := 0
	edge := regexp.MustCompile(`^  "([^"]+)" -> "([^"]+)" \[label="([^"]+)"`)
	edges := map[[2]string]string{}
	for _, l := range strings.Split(d.stdout, "\n") {
		if m := edge.FindStringSubmatch(l); m != nil {
			edges[[2]string{m[1], m[2]}] = m[3]
		}
	}
	for _, line := range strings.Split(r.stdout, "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		f := strings.Split(strings.Trim(line, "| "), " | ")
		for i := range f {
			f[i] = strings.NewReplacer(`\*`, "*", `\_`, "_").Replace(f[i])
		}
		if cols == nil {
			cols = f[1:]
			continue
		}
		from := f[0]
		for i, cell := range f[1:] {
			to := cols[i]
			if from == to {
				if cell != "·" {
					t.Errorf("%s -> itself: %q", from, cell)
				}
				continue
			}
			cells++
			lines, _ := reachJSON(t, "--from", from, "--to", to)
			want := cellOf(lines)
			if cell != want {
				t.Errorf("%s -> %s: cell %q, alone %q", from, to, cell, want)
			}
			base := strings.TrimSuffix(want, "*")
			if e, ok := edges[[2]string{from, to}]; ok != (base != "none" && base != "-") || ok && e != want {
				t.Errorf("%s -> %s: dot edge %q (%v), cell %q", from, to, e, ok, want)
			}
		}
	}
	if cells != 20 {
		t.Errorf("%d cells, want 20:\n%s", cells, r.stdout)
	}
}

// cellOf is the matrix cell of a pair's JSON lines.
func cellOf(lines []reachLine) string {
	if len(lines) == 1 && lines[0].Verdict == noPathVerdict {
		return "-"
	}
	if len(lines) == 1 && lines[0].Verdict == "not-exact" && lines[0].Witness == nil {
		return "n/e"
	}
	var allow, denied, inexact bool
	for _, l := range lines {
		switch l.Verdict {
		case "allow":
			allow = true
		case "drop", "reject":
			denied = true
		default:
			inexact = true
		}
	}
	s := "part"
	switch {
	case !allow:
		s = "none"
	case !denied:
		s = "all"
	}
	if inexact {
		s += "*"
	}
	return s
}

// TestReachEndpointsCLI checks the selectors through the CLI (the pairs
// each makes) and the errors: exit 2 naming the flag and the value.
func TestReachEndpointsCLI(t *testing.T) {
	pairs := func(lines []reachLine) []string {
		var out []string
		for _, l := range lines {
			if p := l.From + ">" + l.To; !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
		return out
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--from", "@pg_a", "--to", "$as_dyn"}, []string{"a1>a2", "a3>a2"}},
		{[]string{"--from", "$as_web", "--to", "@pg_a"}, []string{"a1>a3"}},
		{[]string{"--from", "c1"}, []string{"c1>a1", "c1>a2", "c1>a3", "c1>b1"}},
		{[]string{"--to", "b1"}, []string{"a1>b1", "a2>b1", "a3>b1", "c1>b1"}},
	} {
		lines, _ := reachJSON(t, tc.args...)
		if got := pairs(lines); !slices.Equal(got, tc.want) {
			t.Errorf("%v: pairs %v, want %v", tc.args, got, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--from", "nope"}, `--from nope: no port "nope"`},
		{[]string{"--to", "@nope"}, `--to @nope: no port group "nope"`},
		{[]string{"--from", "$nope"}, `--from $nope: no address set "nope"`},
		{[]string{"--to", "$as_outside"}, `--to $as_outside: address set "as_outside" holds no address of a port`},
		{[]string{"--from", "@pg_empty"}, `--from @pg_empty: port group "pg_empty" has no port on a switch`},
		{[]string{"--from", "a1", "--to", "a1"}, "same port"},
		{[]string{"--format", "matrix-md"}, "--format"},
	} {
		r := aclc(t, "", append([]string{"reach", reachPairsFixture}, tc.args...)...)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, r.code, r.stdout, r.stderr, tc.msg)
		}
	}
	// Exit status: no path alone is exact (0), a routed pair is not (3).
	if r := aclc(t, "", "reach", reachPairsFixture, "--from", "a1", "--to", "c1"); r.code != 0 {
		t.Errorf("no path: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	if r := aclc(t, "", "reach", reachPairsFixture, "--from", "a1", "--to", "b1"); r.code != 3 || !strings.Contains(r.stdout, "a1 -> b1: not-exact (the ports are on switches joined by logical routers") {
		t.Errorf("routed: exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
}

// TestReachProgress checks the progress line: on stderr when it is a
// terminal (script(1) gives it one) and there are many pairs, never when
// stderr is a pipe.
func TestReachProgress(t *testing.T) {
	scriptBin, err := exec.LookPath("script")
	if err != nil {
		t.Skip("no script(1) to give aclc a terminal")
	}
	nb := filepath.Join(t.TempDir(), "nb.yaml")
	if r := aclc(t, "", "nb", "generate", "--switches", "40", "--ports", "2", "--acls", "0", "--port-groups", "0", "--address-sets", "0", "-o", nb); r.code != 0 {
		t.Fatalf("generate: exit %d: %s", r.code, r.stderr)
	}
	if r := aclc(t, "", "reach", nb, "--format", "matrix"); r.stderr != "" || r.code != 3 {
		t.Errorf("piped: exit %d, stderr %q", r.code, r.stderr)
	}
	out, err := exec.Command(scriptBin, "-qec", aclcBin+" reach "+nb+" --format matrix >/dev/null", "/dev/null").Output()
	if !strings.Contains(string(out), "\raclc reach: 6320/6320 pairs (100%)") {
		t.Errorf("terminal: %v, output %q", err, out)
	}
}
