package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
)

var aclcBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "aclc-cli")
	if err != nil {
		panic(err)
	}
	aclcBin = filepath.Join(dir, "aclc")
	if out, err := exec.Command("go", "build", "-o", aclcBin, ".").CombinedOutput(); err != nil {
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	testenv.RemoveAclcBinary() // built by the ct tests

	os.Exit(code)
}

type result struct {
	stdout, stderr string
	code           int
}

func aclc(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, aclcBin, args...)
	cmd.Env = append(os.Environ(), "OVN_NB_DB=")
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{out.String(), errb.String(), code}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReadmeCompile is the README's first command: compile the bundled
// seed fixture. Its output must be the northd golden, byte for byte.
func TestReadmeCompile(t *testing.T) {
	// The fixture names no release: the newest LTS, 26.03 (26.03.2).
	r := aclc(t, "", "compile", "../../testdata/fixtures/seed-stateless.yaml")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	golden, err := os.ReadFile("../../testdata/golden/26.03.2/seed-stateless.lflows")
	if err != nil {
		t.Fatal(err)
	}
	if r.stdout != string(golden) {
		t.Errorf("aclc compile output differs from the northd golden")
	}
	// The stateless bypass is there: tcp sets reg0[16] before conntrack.
	if !strings.Contains(r.stdout, "priority=1001 , match=(tcp), action=(reg0[16] = 1; next;)") {
		t.Errorf("no stateless pre-ACL flow in:\n%s", r.stdout)
	}
}

func TestCompileFiltersAndJSON(t *testing.T) {
	r := aclc(t, "", "compile", "--ovn-version", "23.03", "../../testdata/fixtures/mixed-switches.yaml", "--datapath", "bravo", "--stage", "ls_in_pre_acl,ls_out_acl")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		if strings.HasPrefix(line, "Datapath:") {
			if !strings.HasPrefix(line, `Datapath: "bravo"`) {
				t.Errorf("other datapath in output: %s", line)
			}
			continue
		}
		if !strings.Contains(line, "ls_in_pre_acl") && !strings.Contains(line, "ls_out_acl ") {
			t.Errorf("flow of another stage: %s", line)
		}
	}
	r = aclc(t, "", "compile", "../../testdata/fixtures/seed-stateless.yaml", "--format", "json")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "{") || !strings.Contains(r.stdout, `"stage": "ls_in_pre_acl"`) {
		t.Errorf("json output: exit %d, %.200s", r.code, r.stdout)
	}
	// diff of the JSON against the text golden: equal.
	js := writeFile(t, "flows.json", r.stdout)
	d := aclc(t, "", "diff", "../../testdata/golden/26.03.2/seed-stateless.lflows", js)
	if d.code != 0 {
		t.Errorf("diff golden vs json: exit %d\n%s%s", d.code, d.stdout, d.stderr)
	}
}

func TestDiffReportsDifference(t *testing.T) {
	golden, _ := os.ReadFile("../../testdata/golden/23.03.1/seed-stateless.lflows")
	changed := strings.Replace(string(golden), "match=(tcp), action=(reg0[16] = 1; next;)", "match=(udp), action=(reg0[16] = 1; next;)", 1)
	b := writeFile(t, "b.lflows", changed)
	r := aclc(t, "", "diff", "../../testdata/golden/23.03.1/seed-stateless.lflows", b)
	if r.code != 1 {
		t.Fatalf("diff exit %d, want 1; stderr %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "-  table=4 (ls_in_pre_acl      ), priority=1001 , match=(tcp)") ||
		!strings.Contains(r.stdout, "+  table=4 (ls_in_pre_acl      ), priority=1001 , match=(udp)") {
		t.Errorf("diff output:\n%s", r.stdout)
	}
	r = aclc(t, "", "diff", "../../testdata/golden/23.03.1/seed-stateless.lflows", "/nonexistent")
	if r.code != 2 || !strings.Contains(r.stderr, "/nonexistent") {
		t.Errorf("missing file: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestBadInput: each bad input gives a clear error naming where, a
// non-zero exit, and nothing on stdout.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, fixture string
		args          []string
		want          []string // substrings of stderr
		code          int
	}{
		{name: "malformed yaml", fixture: "switches:\n  - name: [sw0\n", want: []string{"bad.yaml:", "invalid YAML"}},
		{name: "unknown key", fixture: "switches:\n  - name: sw0\n    colour: blue\n", want: []string{"bad.yaml:3:5", "colour"}},
		{name: "unknown verb", fixture: "switches:\n  - name: sw0\n    acls:\n      - {direction: from-lport, priority: 1, match: ip, action: permit}\n", want: []string{"bad.yaml:4:", "permit"}},
		{name: "bad direction", fixture: "switches:\n  - name: sw0\n    acls:\n      - {direction: inbound, priority: 1, match: ip, action: drop}\n", want: []string{"bad.yaml:4:", "inbound"}},
		{name: "bad severity", fixture: "switches:\n  - name: sw0\n    acls:\n      - {direction: to-lport, priority: 1, match: ip, action: drop, log: true, severity: loud}\n", want: []string{"bad.yaml:4:", "loud"}},
		{name: "priority too high", fixture: "switches:\n  - name: sw0\n    acls:\n      - {direction: to-lport, priority: 32768, match: ip, action: drop}\n", want: []string{"bad.yaml:4:", "32768"}},
		{name: "priority negative", fixture: "switches:\n  - name: sw0\n    acls:\n      - {direction: to-lport, priority: -1, match: ip, action: drop}\n", want: []string{"bad.yaml:4:", "-1"}},
		{name: "acl on missing port group", fixture: "acls:\n  - {port_group: pg_nope, direction: to-lport, priority: 1, match: ip, action: drop}\n", want: []string{"bad.yaml:2:", "pg_nope"}},
		{name: "acl on missing switch", fixture: "acls:\n  - {switch: sw_nope, direction: to-lport, priority: 1, match: ip, action: drop}\n", want: []string{"bad.yaml:2:", "sw_nope"}},
		{name: "missing file", args: []string{"compile", "/nonexistent/x.yaml"}, want: []string{"/nonexistent/x.yaml"}},
		{name: "unreachable nb", args: []string{"compile", "--nb", "unix:/nonexistent/nb.sock", "--timeout", "2s"}, want: []string{"unix:/nonexistent/nb.sock"}},
		{name: "bad ssl files", args: []string{"compile", "--nb", "ssl:127.0.0.1:1", "-p", "/nonexistent/key.pem", "-c", "/nonexistent/cert.pem", "-C", "/nonexistent/ca.pem", "--timeout", "2s"}, want: []string{"/nonexistent/"}},
		{name: "fixture and nb", fixture: "{}\n", args: []string{"--nb", "unix:/x"}, want: []string{"either a FIXTURE or --nb"}, code: 2},
		{name: "bad format", fixture: "{}\n", args: []string{"--format", "xml"}, want: []string{"--format"}, code: 2},
		{name: "bad stage", fixture: "{}\n", args: []string{"--stage", "ls_in_l2_lkup"}, want: []string{"unknown stage"}, code: 2},
		{name: "unknown --ovn-version", fixture: "{}\n", args: []string{"--ovn-version", "24.09"}, want: []string{"--ovn-version", "OVN 24.09: aclc knows no version of series 24.09", "nearest supported: 24.03.9, 25.03.0"}, code: 2},
		{name: "tier on 23.03", fixture: "switches:\n  - name: sw0\n    acls:\n      - {direction: to-lport, priority: 1, match: ip, action: drop, tier: 1}\n",
			args: []string{"--ovn-version", "23.03"}, want: []string{"bad.yaml:4:75", "ACL column tier came in OVN 23.06; OVN 23.03.1 does not have it"}},
		{name: "pass in a 23.03 fixture", fixture: "ovn: \"23.03\"\nswitches:\n  - name: sw0\n    acls:\n      - {direction: to-lport, priority: 1, match: ip, action: pass}\n",
			want: []string{"bad.yaml:5:", `ACL action "pass" came in OVN 23.06`, "its ovn: key"}},
		{name: "other release's stage", fixture: "ovn: \"23.03\"\n", args: []string{"--stage", "ls_in_acl_eval"},
			want: []string{"OVN 23.03 has no stage \"ls_in_acl_eval\"", "OVN 24.03's name of ls_in_acl"}, code: 2},
		{name: "unknown datapath", fixture: "switches: [{name: sw0}]\n", args: []string{"--datapath", "sw9"}, want: []string{"sw9"}, code: 2},
		{name: "unknown flag", args: []string{"compile", "--frobnicate"}, want: []string{"frobnicate"}, code: 2},
		{name: "unknown command", args: []string{"frobnicate"}, want: []string{`unknown command "frobnicate"`}, code: 2},
		{name: "too many arguments", args: []string{"compile", "a.yaml", "b.yaml"}, want: []string{"accepts at most 1 arg"}, code: 2},
		{name: "strict with invalid match", fixture: "switches:\n  - name: s\n    acls:\n      - {direction: to-lport, priority: 1, match: \"ip4.src == 10.0.0.300\", action: drop}\n",
			args: []string{"--strict"}, want: []string{"bad.yaml:4:9", "invalid match", "offset 11", "Invalid numeric constant"}, code: 1},
		{name: "strict with reject wrapped into an invalid flow", args: []string{"compile", "--strict", "--ovn-version", "23.03", "../../testdata/fixtures/reject-or-match.yaml"},
			want: []string{"reject-or-match.yaml:9:9", `(reg0[10] == 1) && tcp.dst == 22 || tcp.dst == 23`, "parenthesize"}, code: 1},
		{name: "strict with dangling refs", args: []string{"compile", "--strict", "../../testdata/fixtures/dangling-refs.yaml"},
			want: []string{"$as_missing", "@pg_missing", "empty match", "dangling-refs.yaml:"}, code: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := tc.args
			if tc.fixture != "" {
				args = append([]string{"compile", writeFile(t, "bad.yaml", tc.fixture)}, tc.args...)
			}
			r := aclc(t, "", args...)
			want := tc.code
			if want == 0 {
				want = 1
			}
			if r.code != want {
				t.Errorf("exit %d, want %d (stderr %q)", r.code, want, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout not empty: %q", r.stdout)
			}
			for _, w := range tc.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q does not mention %q", r.stderr, w)
				}
			}
		})
	}
}

// TestDanglingWarnsByDefault: without --strict the flows are printed (as
// northd would write them) and the problems go to stderr.
func TestDanglingWarnsByDefault(t *testing.T) {
	r := aclc(t, "", "compile", "../../testdata/fixtures/dangling-refs.yaml")
	if r.code != 0 || r.stdout == "" {
		t.Fatalf("exit %d, stdout %d bytes", r.code, len(r.stdout))
	}
	for _, w := range []string{"warning:", "$as_missing", "@pg_missing", "@pg_other, which has no ports on this switch", "empty match"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr does not mention %q:\n%s", w, r.stderr)
		}
	}
}

// TestWrongSchemaNB points aclc compile --nb at a Southbound database.
func TestWrongSchemaNB(t *testing.T) {
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server")
	sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{NoNorthd: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Stop()
	r := aclc(t, "", "compile", "--nb", sb.SB, "--timeout", "5s")
	if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, "OVN_Southbound") {
		t.Errorf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	// And the right NB works, with OVN_NB_DB as the default remote.
	cmd := exec.Command(aclcBin, "nb", "load", "--nb", sb.NB, "../../testdata/fixtures/seed-stateless.yaml")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nb load: %v: %s", err, out)
	}
	cmd = exec.Command(aclcBin, "compile")
	cmd.Env = append(os.Environ(), "OVN_NB_DB="+sb.NB)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("compile via OVN_NB_DB: %v", err)
	}
	golden, _ := os.ReadFile("../../testdata/golden/23.03.1/seed-stateless.lflows")
	if string(out) != string(golden) {
		t.Errorf("compile --nb output differs from golden:\n%s", out)
	}
}
