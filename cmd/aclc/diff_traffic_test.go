package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
)

const seedFixture = "../../testdata/fixtures/seed-stateless.yaml"

// edited writes the fixture path with every old replaced by new.
func edited(t *testing.T, path, old, new string) string {
	t.Helper()
	b := mustRead(t, path)
	if !strings.Contains(b, old) {
		t.Fatalf("%s has no %q", path, old)
	}
	return writeFile(t, "b.yaml", strings.ReplaceAll(b, old, new))
}

// Edits of the seed: udp allowed in both directions becomes dropped on
// the way in (tighten), ip dropped in both directions becomes allowed
// (loosen).
const (
	seedUDPIn = `{direction: from-lport, priority: 2, match: "udp", action: allow-related}`
	seedIP    = `match: "ip", action: drop}`
)

// TestDiffTrafficCLI checks aclc diff --traffic's output, exit statuses
// and --fail-on on fixtures.
func TestDiffTrafficCLI(t *testing.T) {
	// Identical NBs: exit 0, no output at all.
	if r := aclc(t, "", "diff", "--traffic", seedFixture, seedFixture); r.code != 0 || r.stdout != "" {
		t.Errorf("identical: exit %d, output %q %s", r.code, r.stdout, r.stderr)
	}
	tighten := edited(t, seedFixture, seedUDPIn, strings.Replace(seedUDPIn, "allow-related", "drop", 1))
	loosen := edited(t, seedFixture, seedIP, `match: "ip", action: allow-related}`)

	r := aclc(t, "", "diff", "--traffic", seedFixture, tighten, "--format", "json")
	if r.code != 1 {
		t.Fatalf("tighten: exit %d, want 1; %s", r.code, r.stderr)
	}
	kinds := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var l trafficLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		kinds[l.Kind]++
		if l.Switch != "ls" || l.From == "" || l.To == "" || l.Before == nil || l.After == nil || l.Witness == nil ||
			!strings.Contains(l.Witness.Microflow, "inport == \""+l.From+"\"") || len(l.Before.ACLs) == 0 || l.Before.ACLs[0].UUID == "" {
			t.Errorf("bad line %s", line)
		}
		if l.Kind == "newly-denied" && (l.Before.Verdict != "allow" || l.After.Verdict != "drop" || !strings.Contains(l.Witness.Microflow, "ip.proto == 0x11")) {
			t.Errorf("newly-denied line %s: want udp allowed before, dropped after", line)
		}
	}
	if kinds["newly-denied"] == 0 || kinds["newly-allowed"] != 0 {
		t.Errorf("tighten: kinds %v", kinds)
	}
	r = aclc(t, "", "diff", "--traffic", seedFixture, tighten)
	if r.code != 1 || !strings.Contains(r.stdout, "ls: lsp1 -> lsp2\n  newly-denied: allow (stateless) -> drop") || !strings.Contains(r.stdout, "changes: ") {
		t.Errorf("text: exit %d, output %s", r.code, r.stdout)
	}

	// --fail-on: a change that only tightens passes the tighten-only gate.
	for _, tc := range []struct {
		b, failOn string
		code      int
	}{
		{tighten, "newly-allowed", 0}, {tighten, "newly-denied", 1}, {tighten, "any", 1},
		{loosen, "newly-allowed", 1}, {loosen, "newly-denied", 0}, {loosen, "any", 1},
		{seedFixture, "newly-allowed", 0},
	} {
		r := aclc(t, "", "diff", "--traffic", "--fail-on", tc.failOn, seedFixture, tc.b)
		if r.code != tc.code {
			t.Errorf("--fail-on %s, B %s: exit %d, want %d; %s", tc.failOn, tc.b, r.code, tc.code, r.stderr)
		}
	}
	// The reverse of a loosening is a tightening.
	if r := aclc(t, "", "diff", "--traffic", "--fail-on", "newly-allowed", loosen, seedFixture); r.code != 0 || !strings.Contains(r.stdout, "newly-denied") {
		t.Errorf("reversed: exit %d, output %s", r.code, r.stdout)
	}

	// Not exact (a switch with a load balancer), nothing certain: exit 3.
	lb := writeFile(t, "lb.yaml", strings.Replace(mustRead(t, seedFixture), "    acls:\n", "    load_balancers: [lb0]\n    acls:\n", 1)+
		"load_balancers:\n  - name: lb0\n    vips: {\"10.0.0.100:80\": \"10.0.0.2:80\"}\n")
	lbEdited := edited(t, lb, seedUDPIn, strings.Replace(seedUDPIn, "allow-related", "drop", 1))
	if r := aclc(t, "", "diff", "--traffic", lb, lbEdited); r.code != 3 || !strings.Contains(r.stdout, "not-exact: ") || !strings.Contains(r.stdout, "load balancers") {
		t.Errorf("lb: exit %d, want 3; output %s %s", r.code, r.stdout, r.stderr)
	}
	if r := aclc(t, "", "diff", "--traffic", lb, lb); r.code != 0 || r.stdout != "" {
		t.Errorf("lb identical: exit %d, output %s", r.code, r.stdout)
	}
}

// TestDiffTrafficErrors: bad input exits 2 with a message naming it.
func TestDiffTrafficErrors(t *testing.T) {
	other := writeFile(t, "other.yaml", "ovn: 24.03.9\n"+mustRead(t, seedFixture))
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--traffic", seedFixture, other}, "different OVN releases"},
		{[]string{"--traffic", seedFixture, "nope.yaml"}, "nope.yaml"},
		{[]string{"--traffic", seedFixture, "-"}, "not -"},
		{[]string{"--traffic", "--fail-on", "loosen", seedFixture, seedFixture}, "--fail-on"},
		{[]string{"--traffic", "--format", "csv", seedFixture, seedFixture}, "--format"},
		{[]string{"--traffic", "--ovn-version", "1.2.3", seedFixture, seedFixture}, "--ovn-version"},
		{[]string{"--traffic", seedFixture}, ""},
		{[]string{"--fail-on", "any", seedFixture, seedFixture}, "needs --traffic"},
		{[]string{"--traffic", "--timeout", "1s", seedFixture, "tcp:127.0.0.1:1"}, "tcp:127.0.0.1:1"},
	} {
		r := aclc(t, "", append([]string{"diff"}, tc.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.msg)
		}
	}
	// --ovn-version reads both as one release.
	if r := aclc(t, "", "diff", "--traffic", "--ovn-version", "24.03.9", seedFixture, other); r.code != 0 {
		t.Errorf("--ovn-version: exit %d, %s", r.code, r.stderr)
	}
}

// TestDiffTrafficLive: a live NB against the fixture it was loaded from
// (read as the live NB's release) differs in nothing; against an edited
// fixture it reports the change; two releases are refused.
func TestDiffTrafficLive(t *testing.T) {
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovn-northd", "ovn-nbctl")
	sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if r := aclc(t, "", "nb", "load", "--nb", sb.NB, seedFixture); r.code != 0 {
		t.Fatalf("nb load: %s", r.stderr)
	}
	if err := sb.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	// The baseline is the live NB's own dump: the seed fixture has no
	// NB_Global, and northd's svc_monitor_mac lets packets to it bypass
	// the ACLs (diff reports that as traffic changes, rightly).
	dump := aclc(t, "", "nb", "dump", "--nb", sb.NB).stdout
	base := writeFile(t, "base.yaml", dump)
	var rel string
	for _, line := range strings.Split(dump, "\n") {
		if v, ok := strings.CutPrefix(line, "ovn: "); ok {
			rel = strings.Trim(v, `"`)
		}
	}
	if rel == "" {
		t.Fatalf("nb dump names no release:\n%s", dump)
	}
	if r := aclc(t, "", "diff", "--traffic", sb.NB, base); r.code != 0 || r.stdout != "" {
		t.Errorf("live vs its dump: exit %d, output %s %s", r.code, r.stdout, r.stderr)
	}
	tighten := edited(t, base, "match: udp, action: allow-related}", "match: udp, action: drop}")
	if r := aclc(t, "", "diff", "--traffic", sb.NB, tighten, "--ovn-version", rel); r.code != 1 || !strings.Contains(r.stdout, "newly-denied") {
		t.Errorf("live vs edited: exit %d, output %s %s", r.code, r.stdout, r.stderr)
	}
	if rel != "26.03.2" {
		if r := aclc(t, "", "diff", "--traffic", sb.NB, seedFixture); r.code != 2 || !strings.Contains(r.stderr, "different OVN releases") {
			t.Errorf("live %s vs a 26.03.2 fixture: exit %d, %s", rel, r.code, r.stderr)
		}
	}
}
