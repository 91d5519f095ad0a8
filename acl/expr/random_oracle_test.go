package expr

import (
	"bytes"
	"fmt"
	"math/rand"
	"os/exec"
	"strings"
	"testing"

	"github.com/aclc/aclc/internal/ovnroot"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/release"
)

// randExpr generates match expressions from OVN's grammar with random
// fields, operators, constants and structure, plus character-level damage,
// so that the oracle sees inputs nobody wrote by hand.
type randExpr struct {
	r     *rand.Rand
	syms  Symtab // the fields to use; nil: DefaultSymtab
	names []string
}

// allReleasesSymtab is every symbol of every supported release (a symbol
// two releases define differently: the newer one's), so that random
// expressions also use fields a release lacks.
func allReleasesSymtab(t testing.TB) Symtab {
	all := Symtab{}
	for _, r := range release.All() {
		for n, s := range dialectOf(t, r).Symtab() {
			all[n] = s
		}
	}
	return all
}

func (g *randExpr) pick(xs ...string) string { return xs[g.r.Intn(len(xs))] }

func (g *randExpr) field() string {
	name := g.names[g.r.Intn(len(g.names))]
	switch g.r.Intn(12) {
	case 0:
		name = g.pick("reg10", "xreg5", "xxreg2", "foo", "ct.foo", "tcp.dst.x")
	case 1, 2:
		lo := g.r.Intn(40)
		if g.r.Intn(2) == 0 {
			return fmt.Sprintf("%s[%d]", name, lo)
		}
		return fmt.Sprintf("%s[%d..%d]", name, lo, lo+g.r.Intn(40)-5)
	}
	return name
}

func (g *randExpr) constant() string {
	switch g.r.Intn(22) {
	case 0:
		return fmt.Sprint(g.r.Intn(3))
	case 1:
		return fmt.Sprint(g.r.Intn(70000))
	case 2:
		return fmt.Sprintf("0x%x", g.r.Uint64()>>uint(g.r.Intn(64)))
	case 3:
		return fmt.Sprintf("%d.%d.%d.%d", g.r.Intn(260), g.r.Intn(256), g.r.Intn(256), g.r.Intn(256))
	case 4:
		return fmt.Sprintf("10.%d.0.%d/%d", g.r.Intn(256), g.r.Intn(256), g.r.Intn(40))
	case 5:
		return g.pick("fe80::1", "::", "ff02::1:ff00:0/104", "2001:db8::/"+fmt.Sprint(g.r.Intn(140)), "::ffff:1.2.3.4", "1::2::3", "fe80::g")
	case 6:
		return fmt.Sprintf("%02x:%02x:00:00:00:%02x", g.r.Intn(256), g.r.Intn(256), g.r.Intn(256))
	case 7:
		return g.pick("00:00:00:00:00:01/ff:ff:ff:00:00:00", "0x8/0xc", "0/0xff00", "5/0xf", "80/255", "1.2.3.4/255.255.0.0", "1.2.3.4/0xff")
	case 8:
		return g.pick(`"lsp1"`, `"lsp2"`, `"a\"b"`, `"\u0041"`, `"bad\q"`, `""`)
	case 9:
		return g.pick("$as1", "$as_empty", "$as_one", "$as_mac", "$as_v6", "$nope", "$pg1_ip4", "$pg_other_ip6")
	case 10:
		return g.pick("@pg1", "@pg_other", "@nope")
	case 11, 12:
		n := g.r.Intn(4)
		var parts []string
		for i := 0; i < n; i++ {
			parts = append(parts, g.constant())
		}
		sep := g.pick(", ", " ", ",")
		tail := g.pick("", ",")
		return "{" + strings.Join(parts, sep) + tail + "}"
	}
	return fmt.Sprint(g.r.Intn(256))
}

func (g *randExpr) relop() string { return g.pick("==", "!=", "<", "<=", ">", ">=", "==", "==", "=") }

// typed returns a comparison that is usually well-typed for its field.
func (g *randExpr) typed() string {
	syms := g.syms
	if syms == nil {
		syms = DefaultSymtab()
	}
	sym := syms[g.names[g.r.Intn(len(g.names))]]
	switch {
	case sym.IsPredicate():
		return g.pick(sym.Name, sym.Name, "!"+sym.Name, sym.Name+" == 1", "!("+sym.Name+")")
	case sym.IsString():
		return sym.Name + " == " + g.pick(`"lsp1"`, "@pg1", `{"lsp1", "lsp2"}`, "{@pg1, \"x\"}")
	}
	op := g.pick("==", "!=", "==")
	if sym.Level == Ordinal {
		op = g.relop()
	} else if g.r.Intn(4) == 0 {
		return "!(" + sym.Name + " != " + fmt.Sprint(g.r.Int63n(1<<min(sym.Width, 62))) + ")"
	}
	v := g.r.Int63n(1 << min(sym.Width, 62))
	var c string
	switch {
	case sym.Width == 32 && strings.Contains(sym.Name, "ip4"):
		c = fmt.Sprintf("%d.%d.%d.%d", v>>24&255, v>>16&255, v>>8&255, v&255)
		if g.r.Intn(3) == 0 {
			c += fmt.Sprintf("/%d", g.r.Intn(33))
		}
	case sym.Width == 48:
		c = fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", v>>40&255, v>>32&255, v>>24&255, v>>16&255, v>>8&255, v&255)
	case sym.Width == 128:
		c = g.pick("fe80::1", "::1", "2001:db8::/32", "ff02::1:ff00:0/104")
	case g.r.Intn(2) == 0:
		c = fmt.Sprintf("0x%x", v)
	default:
		c = fmt.Sprint(v)
	}
	if sym.Width > 1 && g.r.Intn(5) == 0 {
		lo := g.r.Intn(sym.Width)
		return fmt.Sprintf("%s[%d..%d] %s %d", sym.Name, lo, lo+g.r.Intn(sym.Width-lo), op, g.r.Intn(4))
	}
	return sym.Name + " " + op + " " + c
}

func (g *randExpr) primary(depth int) string {
	if g.r.Intn(10) < 7 {
		return g.typed()
	}
	switch g.r.Intn(14) {
	case 0, 1:
		return g.field()
	case 2:
		return "!" + g.primary(depth+1)
	case 3:
		if depth < 3 {
			return "(" + g.expr(depth+1) + ")"
		}
	case 4:
		return g.constant() + " " + g.relop() + " " + g.field()
	case 5:
		return g.constant() + " " + g.pick("<", "<=", ">", ">=") + " " + g.field() + " " + g.pick("<", "<=", ">", ">=") + " " + g.constant()
	case 6:
		return g.pick("0", "1", `is_chassis_resident("lsp1")`, "!("+g.field()+")")
	}
	return g.field() + " " + g.relop() + " " + g.constant()
}

func (g *randExpr) expr(depth int) string {
	e := g.primary(depth)
	if depth > 2 || g.r.Intn(3) == 0 {
		return e
	}
	op := g.pick(" && ", " || ")
	for n := g.r.Intn(3) + 1; n > 0; n-- {
		if g.r.Intn(12) == 0 {
			op = g.pick(" && ", " || ") // sometimes mix them
		}
		e += op + g.primary(depth)
	}
	return e
}

// damage deletes, duplicates or inserts a character now and then.
func (g *randExpr) damage(s string) string {
	if g.r.Intn(10) != 0 || s == "" {
		return s
	}
	i := g.r.Intn(len(s))
	switch g.r.Intn(3) {
	case 0:
		return s[:i] + s[i+1:]
	case 1:
		return s[:i] + s[i:i+1] + s[i:]
	}
	return s[:i] + g.pick("(", ")", "!", "{", "}", "[", "]", ".", ":", "/", "&", "|", "=", "$", "@", "\"", ",", "x", "0") + s[i:]
}

// TestRandomOracle compares aclc with each supported release's OVN
// (validity and message) on randomly generated expressions over the fields
// of all releases, live: hundreds of flows are loaded per ovn-trace run and
// its parse warnings are matched back by match text.
func TestRandomOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ovn-trace")
	}
	syms := allReleasesSymtab(t)
	g := &randExpr{r: rand.New(rand.NewSource(2303)), syms: syms, names: syms.Names()}
	seen := map[string]bool{}
	var exprs []string
	for len(exprs) < 5000 {
		s := g.damage(g.expr(0))
		if seen[s] || strings.ContainsAny(s, "\n\x00") || s == "aclc_oracle_control == 1" {
			continue
		}
		seen[s] = true
		exprs = append(exprs, s)
	}
	for _, rel := range testenv.LiveReleases(t) {
		t.Run(rel.Name(), func(t *testing.T) {
			d := dialectOf(t, rel)
			o := startOracleRelease(t, rel, "lsp1")
			ovn, reasonless := o.parseFailures(t, exprs)
			for s := range reasonless {
				ovn[s] = ""
			}
			agree, bad, invalids := 0, 0, 0
			for _, s := range exprs {
				want, invalid := ovn[s]
				if invalid {
					invalids++
				}
				_, err := d.Parse(s, corpusResolver{})
				got := ""
				if err != nil {
					got = err.(*Error).Msg
				}
				if (err != nil) != invalid || got != want {
					bad++
					t.Errorf("%q:\n aclc: %q\n  OVN %s: %q (invalid=%v)", s, got, rel, want, invalid)
					continue
				}
				agree++
			}
			t.Logf("random differential %s: %d expressions (%d invalid per OVN), %d agree with OVN (validity and message), %d differ", rel, len(exprs), invalids, agree, bad)
		})
	}
}

// TestRandomEvalOracle compares Eval with each release's ovn-trace on
// randomly generated expressions valid in that release over the
// testdata/eval microflows, live, with the same one-expression-per-table
// layout as TestEvalOracle.
func TestRandomEvalOracle(t *testing.T) {
	if testing.Short() {
		t.Skip("runs ovn-trace")
	}
	for _, rel := range testenv.LiveReleases(t) {
		t.Run(rel.Name(), func(t *testing.T) { randomEvalOracle(t, rel) })
	}
}

func randomEvalOracle(t *testing.T, rel *release.Release) {
	dl := dialectOf(t, rel)
	o := startOracleRelease(t, rel, "lsp1", "lsp2", "lsp3")
	d := readEvalData(t, rel)
	r := evalResolver{}
	var mfs []*Microflow
	for _, s := range d.microflows {
		m, err := dl.ParseMicroflow(s, r)
		if err != nil {
			t.Fatal(err)
		}
		mfs = append(mfs, m)
	}
	g := &randExpr{r: rand.New(rand.NewSource(2303)), syms: dl.Symtab(), names: dl.Symtab().Names()}
	seen := map[string]bool{}
	var exprs []*Expr
	for len(exprs) < 250 {
		s := g.expr(0)
		// The flows' action writes reg9[31]; keep expressions off it. And
		// ovn-trace 23.03 segfaults evaluating icmp4/6.frag_mtu (OVN-only
		// fields without an OpenFlow field behind them).
		if seen[s] || strings.Contains(s, "reg9") || strings.Contains(s, "xreg4") || strings.Contains(s, "frag_mtu") {
			continue
		}
		seen[s] = true
		if e, err := dl.Parse(s, r); err == nil {
			exprs = append(exprs, e)
		}
	}
	pairs, bad, crashes := 0, 0, 0
	check := func(idx []int, matched map[int]bool, j int) {
		for k, i := range idx {
			got, err := Eval(exprs[i], mfs[j], r)
			if err != nil {
				t.Fatalf("Eval(%q): %v", exprs[i].Text, err)
			}
			pairs++
			if got != matched[k] {
				bad++
				t.Errorf("%q on microflow %d (%s): aclc %v, ovn-trace %s %v", exprs[i].Text, j, mfs[j], got, rel, matched[k])
			}
		}
	}
	const batch = 25
	for start := 0; start < len(exprs); start += batch {
		var idx []int
		for i := start; i < min(start+batch, len(exprs)); i++ {
			idx = append(idx, i)
		}
		for j, mf := range d.microflows {
			matched, err := o.traceTables(exprsText(exprs, idx), mf)
			if err == nil {
				check(idx, matched, j)
				continue
			}
			// ovn-trace crashed on something in the batch: one by one.
			for _, i := range idx {
				matched, err := o.traceTables(exprsText(exprs, []int{i}), mf)
				if err != nil {
					crashes++
					t.Logf("ovn-trace crashes on %q with microflow %d: %v", exprs[i].Text, j, err)
					continue
				}
				check([]int{i}, matched, j)
			}
		}
	}
	t.Logf("random eval differential %s: %d expressions x %d microflows: %d pairs compared, %d differ, %d skipped (ovn-trace crashed)", rel, len(exprs), len(mfs), pairs, bad, crashes)
}

func exprsText(exprs []*Expr, idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, exprs[i].Text)
	}
	return out
}

// traceTables installs exprs[k] in ingress table k (priority 100, action
// writing reg9[31] so ovn-trace never hides the stage) beside a catch-all,
// traces mf and reports which tables' expression matched.
func (o *oracle) traceTables(exprs []string, mf string) (map[int]bool, error) {
	args := []string{"--all", "destroy", "Logical_Flow"}
	for k, e := range exprs {
		table := fmt.Sprint(k)
		args = append(args,
			"--", "create", "Logical_Flow", "logical_datapath="+o.dp, "pipeline=ingress",
			"table_id="+table, "priority=100", "match="+ovsdbString(e),
			`actions="reg9[31] = 1; next;"`,
			"--", "create", "Logical_Flow", "logical_datapath="+o.dp, "pipeline=ingress",
			"table_id="+table, "priority=0", `match="1"`, `actions="next;"`)
	}
	o.sbctl(args...)
	cmd := o.traceCommand("sw0", mf)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%v: %s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "parsing expression failed") {
		return nil, fmt.Errorf("flow parse failure: %s", stderr.String())
	}
	matched := map[int]bool{}
	for _, m := range tracedFlow.FindAllStringSubmatch(stdout.String(), -1) {
		var k int
		fmt.Sscan(m[1], &k)
		matched[k] = true
	}
	return matched, nil
}

// traceCommand is the release's ovn-trace on the oracle's SB (its stderr
// is the caller's to read: Sandbox.Trace would drop it).
func (o *oracle) traceCommand(args ...string) *exec.Cmd {
	r := o.sb.Release
	if ovnroot.OnHost(r) {
		return exec.CommandContext(o.ctx, "ovn-trace", append([]string{"--db=" + o.sb.SB}, args...)...)
	}
	root := ovnroot.Dir(r)
	db := "--db=unix:" + strings.TrimPrefix(strings.TrimPrefix(o.sb.SB, "unix:"), root)
	return exec.CommandContext(o.ctx, "chroot", append([]string{root, "ovn-trace", db}, args...)...)
}
