package expr

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
)

var update = flag.Bool("update", false, "regenerate testdata/corpus.txt labels from the OVN oracle (ovn-trace)")

const corpusPath = "testdata/corpus.txt"

type corpusEntry struct {
	label string // "valid", "invalid" or "?" (not yet labelled)
	expr  string
	msg   string // OVN's error message for invalid entries
}

func readCorpus(t *testing.T) (header []string, entries []corpusEntry) {
	t.Helper()
	f, err := os.Open(corpusPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			header = append(header, line)
			continue
		}
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) < 2 {
			t.Fatalf("corpus line %q: want label<TAB>expr<TAB>message", line)
		}
		e := corpusEntry{label: parts[0], expr: parts[1]}
		if len(parts) == 3 {
			e.msg = parts[2]
		}
		if rest, ok := strings.CutPrefix(e.expr, "go:"); ok {
			if e.expr, err = strconv.Unquote(rest); err != nil {
				t.Fatalf("corpus line %q: %v", line, err)
			}
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return header, entries
}

func writeCorpus(t *testing.T, header []string, entries []corpusEntry) {
	t.Helper()
	var b bytes.Buffer
	for _, h := range header {
		b.WriteString(h + "\n")
	}
	for _, e := range entries {
		x := e.expr
		if strings.ContainsAny(x, "\t\n") || strings.HasPrefix(x, "go:") {
			x = "go:" + strconv.Quote(x)
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\n", e.label, x, e.msg)
	}
	if err := os.WriteFile(corpusPath, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// corpusResolver mirrors the Southbound contents the oracle loads: the
// datapath under test is sw0; port group pg_other has ports only on sw1.
type corpusResolver struct{}

var corpusAddressSets = map[string][]string{
	"as1":          {"10.0.0.1", "10.0.0.0/8", "192.168.1.0/24"},
	"as_empty":     {},
	"as_mac":       {"00:00:00:00:00:01"},
	"as_one":       {"1"},
	"as_v6":        {"fe80::1", "2001:db8::/32"},
	"pg1_ip4":      {"10.0.0.5"},
	"pg1_ip6":      {},
	"pg_other_ip4": {},
	"pg_other_ip6": {},
}

var corpusPortGroups = map[string][]string{ // on sw0 (tunnel key 1)
	"pg1": {"lsp1", "lsp2"},
}

func (corpusResolver) AddressSet(name string) ([]string, bool) {
	a, ok := corpusAddressSets[name]
	return a, ok
}

func (corpusResolver) PortGroup(name string) ([]string, bool) {
	p, ok := corpusPortGroups[name]
	return p, ok
}

// TestCorpus checks, offline, that aclc accepts exactly the corpus
// expressions OVN 23.03 accepts, with OVN's error messages, and that every
// accepted expression round-trips through String.
func TestCorpus(t *testing.T) {
	_, entries := readCorpus(t)
	if len(entries) < 150 {
		t.Errorf("corpus has %d entries, want at least 150", len(entries))
	}
	agree, msgAgree, invalid := 0, 0, 0
	for _, e := range entries {
		if e.label == "?" {
			t.Errorf("%q is not labelled yet; run go test -run TestCorpusOracle -update", e.expr)
			continue
		}
		x, err := Parse(e.expr, corpusResolver{})
		got := "valid"
		if err != nil {
			got = "invalid"
		}
		if got != e.label {
			t.Errorf("%q: aclc says %s (%v), OVN says %s (%s)", e.expr, got, err, e.label, e.msg)
			continue
		}
		agree++
		if err != nil {
			invalid++
			if msg := err.(*Error).Msg; msg != e.msg {
				t.Errorf("%q: message\n got: %s\nwant: %s", e.expr, msg, e.msg)
			} else {
				msgAgree++
			}
			continue
		}
		s := x.String()
		y, err := Parse(s, corpusResolver{})
		if err != nil {
			t.Errorf("%q printed as %q which does not parse: %v", e.expr, s, err)
		} else if y.String() != s {
			t.Errorf("%q: print is not a fixed point: %q then %q", e.expr, s, y.String())
		}
	}
	t.Logf("corpus: %d entries, %d agree on validity; %d/%d OVN error messages matched exactly", len(entries), agree, msgAgree, invalid)
}

// TestCorpusOracle asks real OVN 23.03 about every corpus expression: each
// one becomes the match of a Southbound Logical_Flow on datapath sw0 and
// ovn-trace, which parses every flow when it loads the SB, reports the ones
// it cannot parse (see parseFailures). The checked-in labels must equal the oracle's; with
// -update they are rewritten from it.
func TestCorpusOracle(t *testing.T) {
	if testing.Short() && !*update {
		t.Skip("runs ovn-trace")
	}
	o := startOracle(t, "lsp1")
	o.sbctl("create", "Datapath_Binding", "tunnel_key=2", "external_ids:name=sw1")
	o.sbctl("create", "Port_Group", "name=2_pg_other", "ports="+ovsdbSet([]string{"lsp3"}))

	header, entries := readCorpus(t)
	var exprs []string
	for _, e := range entries {
		exprs = append(exprs, e.expr)
	}
	failures := o.parseFailures(t, exprs)
	changed := 0
	for i, e := range entries {
		label, msg := "valid", ""
		if m, bad := failures[e.expr]; bad {
			label, msg = "invalid", m
		}
		if label != e.label || msg != e.msg {
			if !*update {
				t.Errorf("%q: corpus says %s %q, OVN says %s %q", e.expr, e.label, e.msg, label, msg)
			}
			changed++
			entries[i].label, entries[i].msg = label, msg
		}
	}
	t.Logf("oracle: %d entries checked, %d differ from testdata", len(entries), changed)
	if *update && changed > 0 {
		writeCorpus(t, header, entries)
	}
}

// logTail matches the start of the next log entry that follows a message.
var logTail = regexp.MustCompile(`(?s)\n\d{4}-\d\d-\d\dT[^|\n]*\|\d+$|\n[^\n]*Segmentation fault.*$`)

// oracle is a Southbound (no northd) holding datapath sw0 (tunnel key 1)
// with the given ports, the corpus address sets and port group pg1.
type oracle struct {
	sb    *ovnsandbox.Sandbox
	ctx   context.Context
	sbctl func(args ...string) string
	dp    string // sw0's Datapath_Binding UUID
}

func startOracle(t *testing.T, ports ...string) *oracle {
	t.Helper()
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovn-northd", "ovn-sbctl", "ovn-trace")
	sb, err := ovnsandbox.Start(filepath.Join(t.TempDir(), "sb"), ovnsandbox.Options{NoNorthd: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	o := &oracle{sb: sb, ctx: ctx}
	o.sbctl = func(args ...string) string {
		t.Helper()
		out, err := sb.SBCtl(ctx, args...)
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(out)
	}
	o.dp = o.sbctl("create", "Datapath_Binding", "tunnel_key=1", "external_ids:name=sw0")
	for i, p := range ports {
		o.sbctl("create", "Port_Binding", "logical_port="+p, "datapath="+o.dp, "tunnel_key="+strconv.Itoa(i+1))
	}
	for name, addrs := range corpusAddressSets {
		args := []string{"create", "Address_Set", "name=" + name}
		if len(addrs) > 0 {
			args = append(args, "addresses="+ovsdbSet(addrs))
		}
		o.sbctl(args...)
	}
	o.sbctl("create", "Port_Group", "name=1_pg1", "ports="+ovsdbSet(corpusPortGroups["pg1"]))
	return o
}

// parseFailures loads every expression as a Logical_Flow match on sw0, in
// batches, plus a known-bad control flow, runs ovn-trace (which parses every
// flow when it loads the SB and logs "MATCH: parsing expression failed
// (MESSAGE)") and returns OVN's message for each expression it rejected.
// Expressions must be distinct.
func (o *oracle) parseFailures(t *testing.T, exprs []string) map[string]string {
	t.Helper()
	const control = "aclc_oracle_control == 1"
	const marker = ": parsing expression failed ("
	failures := map[string]string{}
	const batch = 300
	for start := 0; start < len(exprs); start += batch {
		args := []string{"--all", "destroy", "Logical_Flow",
			"--", "create", "Logical_Flow", "logical_datapath=" + o.dp, "pipeline=ingress",
			"table_id=0", "priority=1", "match=" + ovsdbString(control), `actions="next;"`}
		for _, s := range exprs[start:min(start+batch, len(exprs))] {
			args = append(args, "--", "create", "Logical_Flow", "logical_datapath="+o.dp, "pipeline=ingress",
				"table_id=0", "priority=100", "match="+ovsdbString(s), `actions="next;"`)
		}
		o.sbctl(args...)
		cmd := exec.CommandContext(o.ctx, "ovn-trace", "--db="+o.sb.SB, "sw0", `inport == "lsp1"`)
		cmd.Env = o.sb.Env()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		_ = cmd.Run() // ovn-trace's exit status says nothing about flow parsing
		out := stderr.String()
		if !strings.Contains(out, control+marker) {
			t.Fatalf("oracle: ovn-trace did not report the control flow; stderr:\n%s", out)
		}
		for _, chunk := range strings.Split(out, "|ovntrace|WARN|")[1:] {
			if j := strings.LastIndex(chunk, marker); j >= 0 && chunk[:j] != control {
				msg := logTail.ReplaceAllString(chunk[j+len(marker):], "")
				failures[chunk[:j]] = strings.TrimSuffix(strings.TrimSpace(msg), ")")
			}
		}
	}
	return failures
}

// ovsdbString quotes s for an ovn-sbctl column value.
func ovsdbString(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		panic(err)
	}
	return strings.TrimSpace(b.String())
}

func ovsdbSet(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = ovsdbString(v)
	}
	return "[" + strings.Join(q, ",") + "]"
}
