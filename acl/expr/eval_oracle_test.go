package expr

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/release"
)

// evalDir holds one file per supported release, RELEASE.txt, with the same
// microflows and expressions, the results from that release's ovn-trace.
const evalDir = "testdata/eval"

func evalFile(r *release.Release) string { return filepath.Join(evalDir, r.Name()+".txt") }

// evalResolver is corpusResolver plus ovn-trace's is_chassis_resident: true
// for every port that exists (the oracle SB has lsp1..lsp3).
type evalResolver struct{ corpusResolver }

func (evalResolver) IsChassisResident(port string) bool {
	return port == "" || port == "lsp1" || port == "lsp2" || port == "lsp3"
}

func (evalResolver) PortExists(port string) bool {
	return port == "lsp1" || port == "lsp2" || port == "lsp3"
}

// PortTunnelKey gives lsp1..lsp3 the tunnel keys 1..3, as the oracle's
// Port_Binding rows.
func (evalResolver) PortTunnelKey(port string) (uint32, bool) {
	switch port {
	case "lsp1", "lsp2", "lsp3":
		return uint32(port[3] - '0'), true
	}
	return 0, false
}

type evalData struct {
	header     []string
	microflows []string
	exprs      []string
	results    []string // per expr: one '0', '1' or '?' per microflow
}

func readEvalData(t *testing.T, r *release.Release) *evalData {
	t.Helper()
	evalPath := evalFile(r)
	f, err := os.Open(evalPath)
	if os.IsNotExist(err) && *update && r != release.MustLookup("23.03.1") {
		return &evalData{} // a new release's file, written by the oracle
	}
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

func (d *evalData) write(t *testing.T, r *release.Release) {
	var b bytes.Buffer
	fmt.Fprintf(&b, `# Evaluator differential data, results from OVN %s's ovn-trace (of
# %s).
# "microflow<TAB>EXPR" lines list ovn-trace microflows (numbered from 0);
# "expr<TAB>EXPR<TAB>RESULTS" lines give, per microflow, 1 if ovn-trace
# finds a Logical_Flow with match EXPR matching, 0 if not, ? if not yet
# labelled. Every release's file has the same microflows and expressions;
# add new ones to the oldest release's file (results ?) and regenerate
# every release's from its oracle:
#   go test ./acl/expr -run TestEvalOracle -args -update
`, r.Name(), r.Oracle)
	for _, m := range d.microflows {
		fmt.Fprintf(&b, "microflow\t%s\n", m)
	}
	for i, e := range d.exprs {
		fmt.Fprintf(&b, "expr\t%s\t%s\n", e, d.results[i])
	}
	if err := os.WriteFile(evalFile(r), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEvalData checks offline that, for every supported release,
// ParseMicroflow + Eval in the release's dialect agree with what its
// ovn-trace decided for every (expression, microflow) pair in testdata.
func TestEvalData(t *testing.T) {
	base := readEvalData(t, release.MustLookup("23.03.1"))
	for _, rel := range release.All() {
		t.Run(rel.Name(), func(t *testing.T) {
			d := readEvalData(t, rel)
			if !slices.Equal(d.exprs, base.exprs) || !slices.Equal(d.microflows, base.microflows) {
				t.Fatalf("%s does not list %s's microflows and expressions; run TestEvalOracle -update", evalFile(rel), evalFile(release.MustLookup("23.03.1")))
			}
			dl := dialectOf(t, rel)
			r := evalResolver{}
			var mfs []*Microflow
			for _, s := range d.microflows {
				m, err := dl.ParseMicroflow(s, r)
				if err != nil {
					t.Fatalf("ParseMicroflow(%q): %v", s, err)
				}
				mfs = append(mfs, m)
			}
			pairs := 0
			for i, s := range d.exprs {
				e, err := dl.Parse(s, r)
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
						t.Errorf("Eval(%q) on microflow %d (%s) = %v, ovn-trace %s says %c", s, j, m, got, rel, want)
					}
				}
			}
			t.Logf("%s: %d (expression, microflow) pairs checked", rel, pairs)
		})
	}
}

var tracedFlow = regexp.MustCompile(`(?m)^\s*(\d+)\. .*, priority 100, uuid`)

// TestEvalOracle puts each expression in its own ingress table of an SB
// datapath (priority 100, beside a priority-0 catch-all) and runs each
// release's ovn-trace on every microflow: a traced line for the
// priority-100 flow of table k means expression k matched. The checked-in
// results must equal the oracle's; with -update they are rewritten.
func TestEvalOracle(t *testing.T) {
	if testing.Short() && !*update {
		t.Skip("runs ovn-trace")
	}
	base := readEvalData(t, release.MustLookup("23.03.1"))
	for _, rel := range testenv.LiveReleases(t) {
		t.Run(rel.Name(), func(t *testing.T) {
			o := startOracleRelease(t, rel, "lsp1", "lsp2", "lsp3")
			d := readEvalData(t, rel)
			old := map[string]string{}
			if slices.Equal(d.microflows, base.microflows) {
				for i, x := range d.exprs {
					old[x] = d.results[i]
				}
			}
			d.microflows, d.exprs = base.microflows, base.exprs
			d.results = make([]string, len(d.exprs))
			got := make([][]byte, len(d.exprs))
			for i := range got {
				got[i] = bytes.Repeat([]byte{'0'}, len(d.microflows))
			}
			const batch = 25 // tables 0..24; `next;' may not go past the last one
			for start := 0; start < len(d.exprs); start += batch {
				end := min(start+batch, len(d.exprs))
				for j, mf := range d.microflows {
					matched, err := o.traceTables(d.exprs[start:end], mf)
					if err != nil {
						t.Fatalf("ovn-trace %q: %v", mf, err)
					}
					for k := range matched {
						got[start+k][j] = '1'
					}
				}
			}
			changed := 0
			for i := range d.exprs {
				if string(got[i]) != old[d.exprs[i]] {
					if !*update {
						t.Errorf("%q: testdata says %s, ovn-trace %s says %s", d.exprs[i], old[d.exprs[i]], rel, got[i])
					}
					changed++
				}
				d.results[i] = string(got[i])
			}
			t.Logf("oracle %s: %d expressions x %d microflows, %d rows differ from testdata", rel, len(d.exprs), len(d.microflows), changed)
			if *update { // (also rewrites the header)
				d.write(t, rel)
			}
		})
	}
}
