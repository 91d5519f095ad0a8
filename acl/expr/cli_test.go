package expr

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/release"
	"github.com/google/go-cmp/cmp"
)

// TestCLIMatchCheck builds aclc and runs `aclc match check`, the command
// line face of this package (cmd/aclc/match.go).
func TestCLIMatchCheck(t *testing.T) {
	bin := testenv.AclcBinary(t)
	fixture := filepath.Join(t.TempDir(), "nb.yaml")
	writeFile(t, fixture, `
address_sets:
  - {name: as1, addresses: ["10.0.0.1"]}
switches:
  - name: sw0
    ports:
      - {name: p1, addresses: ["00:00:00:00:00:01 10.0.0.1"]}
  - name: sw1
port_groups:
  - {name: pg, ports: [p1]}
`)
	fixture23 := filepath.Join(t.TempDir(), "nb23.yaml")
	writeFile(t, fixture23, "ovn: \"23.03\"\nswitches:\n  - name: sw0\n")
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantOut    string
		wantErr    string // substring of stderr
		wantStatus int
	}{
		{name: "args", args: []string{"ip4 && tcp.dst == 80", "tcp && udp || ip4", "inport == @anything"},
			wantOut:    "ok\nerror: offset 11: && and || must be parenthesized when used together.\nok\n",
			wantStatus: 1},
		{name: "all ok", args: []string{"ip4", "!reg0"}, wantOut: "ok\nok\n"},
		{name: "stdin", stdin: "ip4.src == 10.0.0.0/8\nreg10 == 1\n\n",
			wantOut:    "ok\nerror: offset 0: Syntax error at `reg10' expecting field name.\nerror: offset 0: Syntax error at end of input expecting constant.\n",
			wantStatus: 1},
		{name: "warnings", args: []string{"-W", "ip4.src == 10.0.0.1/24"}, wantOut: "ok\n",
			wantErr: "warning: 1: offset 11: host-bits:"},
		{name: "fixture sw0", args: []string{fixture, "--datapath", "sw0", "outport == @pg", "ip4.src == $pg_ip4", "ip4.src == $nope"},
			wantOut:    "ok\nok\nerror: offset 11: Syntax error at `$nope' expecting address set name.\n",
			wantStatus: 1},
		{name: "fixture sw1", args: []string{fixture, "--datapath", "sw1", "outport == @pg"},
			wantOut:    "error: offset 11: Syntax error at `@pg' expecting port group name.\n",
			wantStatus: 1},
		{name: "23.03", args: []string{"--ovn-version", "23.03", "ct_label.blocked == 1", "ct_label.nf == 1", "^tmpl == 1"},
			wantOut: "ok\nerror: offset 0: Syntax error at `ct_label.nf' expecting field name.\n" +
				"error: offset 0: Syntax error at `tmpl' expecting field name.\n",
			wantStatus: 1},
		{name: "25.03", args: []string{"--ovn-version", "25.03.0", "ct_mark.allow_established == 1", "ct_label.nf == 1"},
			wantOut:    "ok\nerror: offset 0: Syntax error at `ct_label.nf' expecting field name.\n",
			wantStatus: 1},
		{name: "default 26.03", args: []string{"ct_label.blocked == 1", "ct_label.nf == 1", "ip4 && ^tmpl"},
			wantOut: "error: offset 0: Syntax error at `ct_label.blocked' expecting field name.\nok\n" +
				"error: offset 7: template variable ^tmpl is not defined; OVN drops the whole flow (it gives no message)\n",
			wantStatus: 1},
		{name: "fixture's ovn: key", args: []string{fixture23, "ct_label.blocked == 1", "ct_label.nf == 1"},
			wantOut:    "ok\nerror: offset 0: Syntax error at `ct_label.nf' expecting field name.\n",
			wantStatus: 1},
		{name: "--ovn-version over the ovn: key", args: []string{fixture23, "--ovn-version", "26.03", "ct_label.blocked == 1", "ct_label.nf == 1"},
			wantOut:    "error: offset 0: Syntax error at `ct_label.blocked' expecting field name.\nok\n",
			wantStatus: 1},
		{name: "unknown release", args: []string{"--ovn-version", "24.09", "ip4"}, wantErr: "aclc knows no version of series 24.09", wantStatus: 2},
		{name: "datapath without NB", args: []string{"--datapath", "sw0", "ip4"}, wantErr: "--datapath needs", wantStatus: 2},
		{name: "unknown datapath", args: []string{fixture, "--datapath", "nosuch", "ip4"}, wantErr: "no logical switch", wantStatus: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, append([]string{"match", "check"}, tc.args...)...)
			cmd.Stdin = strings.NewReader(tc.stdin)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			status := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				status = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.wantOut, stdout.String()); d != "" {
				t.Errorf("stdout (-want +got):\n%s", d)
			}
			if status != tc.wantStatus {
				t.Errorf("exit status %d, want %d (stderr %q)", status, tc.wantStatus, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.wantErr) {
				t.Errorf("stderr %q does not contain %q", stderr.String(), tc.wantErr)
			}
		})
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCLIMatchCheckDetectsRelease runs `aclc match check --nb` against each
// version's own NB with its northd running: the version is detected
// exactly (NB_Global options:northd_internal_version), and --ovn-version
// overrides it with a warning.
func TestCLIMatchCheckDetectsRelease(t *testing.T) {
	bin := testenv.AclcBinary(t)
	exprs := []string{"ct_label.blocked == 1", "ct_mark.allow_established == 1", "ct_label.nf == 1"}
	// per version: ok, or the field its parser lacks
	want := func(r *release.Release) string {
		out := ""
		for _, c := range []struct {
			field string
			ok    bool
		}{
			{"ct_label.blocked", !r.Has(release.DialectSampling)},
			{"ct_mark.allow_established", r.Has(release.DialectPersist)},
			{"ct_label.nf", r.Has(release.DialectNF)},
		} {
			if c.ok {
				out += "ok\n"
			} else {
				out += c.field + "\n"
			}
		}
		return out
	}
	short := func(out string) string {
		var b strings.Builder
		for _, l := range strings.SplitAfter(out, "\n") {
			if i := strings.Index(l, "Syntax error at `"); i >= 0 {
				l = l[i+len("Syntax error at `"):]
				l = l[:strings.IndexByte(l, '\'')] + "\n"
			}
			b.WriteString(l)
		}
		return b.String()
	}
	run := func(args ...string) (string, string) {
		cmd := exec.Command(bin, append([]string{"match", "check"}, args...)...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return short(stdout.String()), stderr.String()
	}
	for _, r := range testenv.LiveReleases(t) {
		t.Run(r.Name(), func(t *testing.T) {
			testenv.NeedRelease(t, r)
			sb, err := ovnsandbox.Start(filepath.Join(t.TempDir(), "sb"), ovnsandbox.Options{Release: r})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(sb.Stop)
			if err := sb.Sync(context.Background()); err != nil {
				t.Fatal(err)
			}
			out, stderr := run(append([]string{"--nb", sb.NB}, exprs...)...)
			if d := cmp.Diff(want(r), out); d != "" || stderr != "" {
				t.Errorf("detected (-want +got):\n%s\nstderr: %s", d, stderr)
			}
			other := release.MustLookup("23.03.1")
			if r == other {
				other = release.MustLookup("26.03.1")
			}
			out, stderr = run(append([]string{"--nb", sb.NB, "--ovn-version", other.Name()}, exprs...)...)
			if d := cmp.Diff(want(other), out); d != "" {
				t.Errorf("--ovn-version %s (-want +got):\n%s\nstderr: %s", other.Name(), d, stderr)
			}
			if w := "the NB is OVN " + r.Name() + "'s (NB schema " + r.NBSchema + "); checking as OVN " + other.Name(); !strings.Contains(stderr, w) {
				t.Errorf("stderr %q lacks the warning %q", stderr, w)
			}
		})
	}
}
