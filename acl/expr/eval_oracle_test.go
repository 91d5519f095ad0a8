package expr

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const evalPath = "testdata/eval.txt"

// evalResolver is corpusResolver plus ovn-trace's is_chassis_resident: true
// for every port that exists (the oracle SB has lsp1..lsp3).
type evalResolver struct{ corpusResolver }

func (evalResolver) IsChassisResident(port string) bool {
	return port == "" || port == "lsp1" || port == "lsp2" || port == "lsp3"
}

func (evalResolver) PortExists(port string) bool {
	return port == "lsp1" || port == "lsp2" || port == "lsp3"
}

type evalData struct {
	header     []string
	microflows []string
	exprs      []string
	results    []string // per expr: one '0', '1' or '?' per microflow
}

func readEvalData(t *testing.T) *evalData {
	t.Helper()
	f, err := os.Open(evalPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := &evalData{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		parts := strings.Split(line, "\t")
		switch {
		case strings.HasPrefix(line, "#") || line == "":
			d.header = append(d.header, line)
		case parts[0] == "microflow" && len(parts) == 2:
			d.microflows = append(d.microflows, parts[1])
		case parts[0] == "expr" && len(parts) == 3:
			d.exprs = append(d.exprs, parts[1])
			d.results = append(d.results, parts[2])
		default:
			t.Fatalf("%s: bad line %q", evalPath, line)
		}
	}
	return d
}

func (d *evalData) write(t *testing.T) {
	var b bytes.Buffer
	for _, h := range d.header {
		b.WriteString(h + "\n")
	}
	for _, m := range d.microflows {
		fmt.Fprintf(&b, "microflow\t%s\n", m)
	}
	for i, e := range d.exprs {
		fmt.Fprintf(&b, "expr\t%s\t%s\n", e, d.results[i])
	}
	if err := os.WriteFile(evalPath, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEvalData checks offline that ParseMicroflow + Eval agree with what
// ovn-trace decided for every (expression, microflow) pair in testdata.
func TestEvalData(t *testing.T) {
	d := readEvalData(t)
	r := evalResolver{}
	var mfs []*Microflow
	for _, s := range d.microflows {
		m, err := ParseMicroflow(s, r)
		if err != nil {
			t.Fatalf("ParseMicroflow(%q): %v", s, err)
		}
		mfs = append(mfs, m)
	}
	pairs := 0
	for i, s := range d.exprs {
		e, err := Parse(s, r)
		if err != nil {
			t.Errorf("Parse(%q): %v", s, err)
			continue
		}
		for j, m := range mfs {
			want := d.results[i][j]
			if want == '?' {
				t.Errorf("%q on microflow %d is not labelled; run TestEvalOracle -update", s, j)
				continue
			}
			got, err := Eval(e, m, r)
			if err != nil {
				t.Errorf("Eval(%q): %v", s, err)
				break
			}
			pairs++
			if got != (want == '1') {
				t.Errorf("Eval(%q) on microflow %d (%s) = %v, ovn-trace says %c", s, j, m, got, want)
			}
		}
	}
	t.Logf("%d (expression, microflow) pairs checked", pairs)
}

var tracedFlow = regexp.MustCompile(`(?m)^\s*(\d+)\. .*, priority 100, uuid`)

// TestEvalOracle puts each expression in its own ingress table of an SB
// datapath (priority 100, beside a priority-0 catch-all) and runs ovn-trace
// on every microflow: a traced line for the priority-100 flow of table k
// means expression k matched. The checked-in results must equal the
// oracle's; with -update they are rewritten.
func TestEvalOracle(t *testing.T) {
	if testing.Short() && !*update {
		t.Skip("runs ovn-trace")
	}
	o := startOracle(t, "lsp1", "lsp2", "lsp3")
	sb, ctx, sbctl, dp := o.sb, o.ctx, o.sbctl, o.dp

	d := readEvalData(t)
	got := make([][]byte, len(d.exprs))
	for i := range got {
		got[i] = bytes.Repeat([]byte{'0'}, len(d.microflows))
	}
	const batch = 25 // tables 0..24; `next;' may not go past the last one
	for start := 0; start < len(d.exprs); start += batch {
		end := min(start+batch, len(d.exprs))
		args := []string{"--all", "destroy", "Logical_Flow"}
		for i := start; i < end; i++ {
			table := strconv.Itoa(i - start)
			args = append(args,
				"--", "create", "Logical_Flow", "logical_datapath="+dp, "pipeline=ingress",
				"table_id="+table, "priority=100", "match="+ovsdbString(d.exprs[i]),
				// Not a bare `next;': ovn-trace hides such stages when
				// their match is constant true.
				`actions="reg9[31] = 1; next;"`,
				"--", "create", "Logical_Flow", "logical_datapath="+dp, "pipeline=ingress",
				"table_id="+table, "priority=0", `match="1"`, `actions="next;"`)
		}
		sbctl(args...)
		for j, mf := range d.microflows {
			cmd := exec.CommandContext(ctx, "ovn-trace", "--db="+sb.SB, "sw0", mf)
			cmd.Env = sb.Env()
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("ovn-trace %q: %v\n%s", mf, err, stderr.String())
			}
			if strings.Contains(stderr.String(), "parsing expression failed") {
				t.Fatalf("ovn-trace could not parse a flow: %s", stderr.String())
			}
			for _, m := range tracedFlow.FindAllStringSubmatch(stdout.String(), -1) {
				k, _ := strconv.Atoi(m[1])
				got[start+k][j] = '1'
			}
		}
	}
	changed := 0
	for i := range d.exprs {
		if string(got[i]) != d.results[i] {
			if !*update {
				t.Errorf("%q: testdata says %s, ovn-trace says %s", d.exprs[i], d.results[i], got[i])
			}
			d.results[i] = string(got[i])
			changed++
		}
	}
	t.Logf("oracle: %d expressions x %d microflows, %d rows differ from testdata", len(d.exprs), len(d.microflows), changed)
	if *update && changed > 0 {
		d.write(t)
	}
}
