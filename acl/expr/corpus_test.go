package expr

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnroot"
	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/release"
)

var update = flag.Bool("update", false, "regenerate testdata labels from the OVN oracle (each release's ovn-trace)")

// corpusDir holds one file per supported OVN release, RELEASE.txt, with the
// same expressions in the same order, each labelled by that release's own
// parser.
const corpusDir = "testdata/corpus"

func corpusFile(r *release.Release) string { return filepath.Join(corpusDir, r.Name()+".txt") }

// dialectOf is the match language of release r, as compile.Dialect maps it
// (this package's tests cannot import compile).
func dialectOf(t testing.TB, r *release.Release) *Dialect {
	return NewDialect(r.Name(), func(c Change) bool {
		f := release.DialectFact(string(c))
		return f != nil && r.Has(f)
	})
}

type corpusEntry struct {
	label string // "valid", "invalid" or "?" (not yet labelled)
	expr  string
	msg   string // OVN's error message for invalid entries ("" when OVN gives none)
}

func readCorpus(t *testing.T, path string) (entries []corpusEntry) {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) && *update {
		return nil // a new release's file, written by the oracle
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		parts := strings.SplitN(line, "\t", 3)
		if len(parts) < 2 {
			t.Fatalf("%s: corpus line %q: want label<TAB>expr<TAB>message", path, line)
		}
		e := corpusEntry{label: parts[0], expr: parts[1]}
		if len(parts) == 3 {
			e.msg = parts[2]
		}
		if rest, ok := strings.CutPrefix(e.expr, "go:"); ok {
			if e.expr, err = strconv.Unquote(rest); err != nil {
				t.Fatalf("%s: corpus line %q: %v", path, line, err)
			}
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return entries
}

func writeCorpus(t *testing.T, r *release.Release, entries []corpusEntry) {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, `# Match expressions labelled by OVN %s's own parser (the ovn-trace of
# %s, loading each one as a Southbound Logical_Flow match).
# Columns: label<TAB>expr<TAB>OVN's error message (empty when OVN rejects
# the match without a reason). An expr starting with go: is a Go-quoted
# string. Every release's file lists the same expressions; add new ones
# to any file with label ? and regenerate all labels from the oracles:
#   go test ./acl/expr -run TestCorpusOracle -args -update
`, r.Name(), r.Oracle)
	for _, e := range entries {
		x := e.expr
		if strings.ContainsAny(x, "\t\n") || strings.HasPrefix(x, "go:") {
			x = "go:" + strconv.Quote(x)
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\n", e.label, x, e.msg)
	}
	if err := os.WriteFile(corpusFile(r), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// corpusExprs is every expression of every release's file: the oldest
// release's order, then the expressions only newer files have.
func corpusExprs(t *testing.T) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range release.All() {
		for _, e := range readCorpus(t, corpusFile(r)) {
			if !seen[e.expr] {
				seen[e.expr] = true
				out = append(out, e.expr)
			}
		}
	}
	return out
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

// TestCorpus checks, offline, that for every supported release aclc
// accepts exactly the corpus expressions that release's OVN accepts, with
// its error messages, and that every accepted expression round-trips
// through String.
func TestCorpus(t *testing.T) {
	all := corpusExprs(t)
	for _, r := range release.All() {
		t.Run(r.Name(), func(t *testing.T) {
			d := dialectOf(t, r)
			entries := readCorpus(t, corpusFile(r))
			if len(entries) != len(all) {
				t.Errorf("%s has %d expressions, the corpus %d; run go test -run TestCorpusOracle -update", corpusFile(r), len(entries), len(all))
			}
			if len(entries) < 150 {
				t.Errorf("corpus has %d entries, want at least 150", len(entries))
			}
			agree, msgAgree, invalid := 0, 0, 0
			for _, e := range entries {
				if e.label == "?" {
					t.Errorf("%q is not labelled yet; run go test -run TestCorpusOracle -update", e.expr)
					continue
				}
				x, err := d.Parse(e.expr, corpusResolver{})
				got := "valid"
				if err != nil {
					got = "invalid"
				}
				if got != e.label {
					t.Errorf("%q: aclc says %s (%v), OVN %s says %s (%s)", e.expr, got, err, r, e.label, e.msg)
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
				y, err := d.Parse(s, corpusResolver{})
				if err != nil {
					t.Errorf("%q printed as %q which does not parse: %v", e.expr, s, err)
				} else if y.String() != s {
					t.Errorf("%q: print is not a fixed point: %q then %q", e.expr, s, y.String())
				}
			}
			t.Logf("corpus %s: %d entries, %d agree on validity; %d/%d OVN error messages matched exactly", r, len(entries), agree, msgAgree, invalid)
		})
	}
}

// TestCorpusDiffers checks that the corpus exercises every difference
// between the releases: each symbol that one supported release has and
// another lacks appears in an expression labelled differently by the two.
func TestCorpusDiffers(t *testing.T) {
	rels := release.All()
	labels := map[string][]string{} // expr -> label per release
	for i, r := range rels {
		for _, e := range readCorpus(t, corpusFile(r)) {
			if labels[e.expr] == nil {
				labels[e.expr] = make([]string, len(rels))
			}
			labels[e.expr][i] = e.label + "\t" + e.msg
		}
	}
	for i := range rels {
		for j := range rels {
			if i == j {
				continue
			}
			a, b := dialectOf(t, rels[i]).Symtab(), dialectOf(t, rels[j]).Symtab()
			for _, name := range a.Names() {
				if b[name] != nil {
					continue
				}
				found := false
				for x, l := range labels {
					if l[i] != l[j] && regexp.MustCompile(`(^|[^\w.])`+regexp.QuoteMeta(name)+`($|[^\w.])`).MatchString(x) {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("%s is a symbol of OVN %s but not of %s, and no corpus expression using it is labelled differently by the two", name, rels[i], rels[j])
				}
			}
		}
	}
}

// TestCorpusOracle asks each supported release's real OVN about every
// corpus expression: each one becomes the match of a Southbound
// Logical_Flow on datapath sw0 and the release's ovn-trace, which parses
// every flow when it loads the SB, reports the ones it cannot parse (see
// parseFailures). The checked-in labels must equal the oracle's; with
// -update they are rewritten from it.
func TestCorpusOracle(t *testing.T) {
	if testing.Short() && !*update {
		t.Skip("runs ovn-trace")
	}
	exprs := corpusExprs(t)
	for _, r := range testenv.LiveReleases(t) {
		t.Run(r.Name(), func(t *testing.T) {
			o := startOracleRelease(t, r, "lsp1")
			o.sbctl("create", "Datapath_Binding", "tunnel_key=2", "external_ids:name=sw1")
			o.sbctl("create", "Port_Group", "name=2_pg_other", "ports="+ovsdbSet([]string{"lsp3"}))

			old := map[string]corpusEntry{}
			for _, e := range readCorpus(t, corpusFile(r)) {
				old[e.expr] = e
			}
			failures, reasonless := o.parseFailures(t, exprs)
			var entries []corpusEntry
			changed := 0
			for _, x := range exprs {
				e := corpusEntry{label: "valid", expr: x}
				if m, bad := failures[x]; bad {
					e.label, e.msg = "invalid", m
				}
				if reasonless[x] {
					e.label, e.msg = "invalid", ""
				}
				if o, ok := old[x]; !ok || o != e {
					if !*update {
						t.Errorf("%q: corpus says %s %q, OVN %s says %s %q", x, o.label, o.msg, r, e.label, e.msg)
					}
					changed++
				}
				entries = append(entries, e)
			}
			t.Logf("oracle %s: %d entries checked, %d differ from testdata", r, len(entries), changed)
			if *update { // (also rewrites the header)
				writeCorpus(t, r, entries)
			}
		})
	}
}

// logTail matches the start of the next log entry that follows a message.
var logTail = regexp.MustCompile(`(?s)\n\d{4}-\d\d-\d\dT[^|\n]*\|\d+$|\n[^\n]*Segmentation fault.*$`)

// oracle is a Southbound (no northd) of one OVN release holding datapath
// sw0 (tunnel key 1) with the given ports, the corpus address sets and
// port group pg1.
type oracle struct {
	sb    *ovnsandbox.Sandbox
	ctx   context.Context
	sbctl func(args ...string) string
	dp    string // sw0's Datapath_Binding UUID
	runs  int    // ovn-trace daemons started, for unique file names
}

// startOracle is startOracleRelease for the host release, 23.03.1.
func startOracle(t *testing.T, ports ...string) *oracle {
	return startOracleRelease(t, release.MustLookup("23.03.1"), ports...)
}

func startOracleRelease(t *testing.T, r *release.Release, ports ...string) *oracle {
	t.Helper()
	testenv.NeedRelease(t, r)
	if ovnroot.OnHost(r) {
		testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovn-sbctl", "ovn-trace", "ovs-appctl")
	}
	sb, err := ovnsandbox.Start(filepath.Join(t.TempDir(), "sb"), ovnsandbox.Options{NoNorthd: true, Release: r})
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
// batches, plus a known-bad control flow, lets the release's ovn-trace load
// them (which parses every flow and logs "MATCH: parsing expression failed
// (MESSAGE)") and returns OVN's message for each expression it rejected;
// reasonless holds those it rejected without a message (`MATCH: parsing
// expression failed', an undefined template on 25.03+). Expressions must
// be distinct.
func (o *oracle) parseFailures(t *testing.T, exprs []string) (failures map[string]string, reasonless map[string]bool) {
	t.Helper()
	const control = "aclc_oracle_control == 1"
	const marker = ": parsing expression failed"
	failures, reasonless = map[string]string{}, map[string]bool{}
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
		out := o.loadLog(t)
		if !strings.Contains(out, control+marker+" (") {
			t.Fatalf("oracle: ovn-trace did not report the control flow; log:\n%s", out)
		}
		for _, chunk := range strings.Split(out, "|ovntrace|WARN|")[1:] {
			chunk = strings.TrimRight(logTail.ReplaceAllString(chunk, ""), " \t\r\n")
			if m, ok := strings.CutSuffix(chunk, marker); ok {
				reasonless[m] = true
				continue
			}
			if j := strings.LastIndex(chunk, marker+" ("); j >= 0 && chunk[:j] != control {
				failures[chunk[:j]] = strings.TrimSuffix(chunk[j+len(marker)+2:], ")")
			}
		}
	}
	return failures, reasonless
}

// loadLog runs the release's ovn-trace as a daemon on the SB with log rate
// limits off and returns its log once it has loaded (and so parsed) every
// Logical_Flow. 26.03's ovn-trace rate-limits its parse warnings to one a
// minute, and a daemon reads the SB once, on connecting; so it connects to
// a proxy that forwards to the SB only after `vlog/disable-rate-limit'.
func (o *oracle) loadLog(t *testing.T) string {
	t.Helper()
	o.runs++
	dir := o.sb.Dir
	name := func(ext string) string { return filepath.Join(dir, fmt.Sprintf("trace%d.%s", o.runs, ext)) }
	proxy, ctl, logf, pidf := name("sock"), name("ctl"), name("log"), name("pid")
	ln, err := net.Listen("unix", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	open := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		<-open
		sb, err := net.Dial("unix", strings.TrimPrefix(o.sb.SB, "unix:"))
		if err != nil {
			return
		}
		defer sb.Close()
		go io.Copy(sb, c) //nolint:errcheck // ends when either side closes
		io.Copy(c, sb)    //nolint:errcheck
	}()
	started := make(chan error, 1)
	go func() {
		_, err := o.sb.Run(o.ctx, "ovn-trace", "--detach", "--no-chdir", "--pidfile="+pidf,
			"--unixctl="+ctl, "--log-file="+logf, "--db=unix:"+proxy)
		started <- err
	}()
	t.Cleanup(func() { killPidfile(pidf) })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(ctl); err == nil {
			break
		}
		select {
		case err := <-started:
			t.Fatalf("oracle: ovn-trace --detach exited before connecting: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("oracle: %s did not appear", ctl)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The socket is bound before it listens: retry a refused connection.
	for {
		_, err := o.sb.Run(o.ctx, "ovs-appctl", "-t", ctl, "vlog/disable-rate-limit")
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	close(open)
	if err := <-started; err != nil { // the parent returns once the daemon has read the SB
		t.Fatal(err)
	}
	if _, err := o.sb.Run(o.ctx, "ovs-appctl", "-t", ctl, "exit"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(pidf); err != nil {
			break
		}
	}
	b, err := os.ReadFile(logf)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// killPidfile stops the ovn-trace daemon a test started, if it still runs.
func killPidfile(path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		return
	}
	if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pid > 1 {
		syscall.Kill(pid, syscall.SIGTERM)
	}
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
