package trace_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/aclc/aclc/internal/testenv"
)

// TestMain removes the aclc binary the CLI test built.
func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveAclcBinary()
	os.Exit(code)
}

// aclc builds cmd/aclc once and returns the binary's path.
func aclc(t *testing.T) string {
	t.Helper()
	return testenv.AclcBinary(t)
}

// TestCLI runs `aclc trace` as a user would: output formats, --help, and
// the exit status 2 (with a message on stderr, nothing on stdout) for bad
// input.
func TestCLI(t *testing.T) {
	bin := aclc(t)
	const (
		fx   = "../testdata/fixtures/seed-stateless.yaml"
		flow = `eth.src == 00:00:00:00:00:01 && eth.dst == 00:00:00:00:00:02 && ip4.src == 42.42.42.1 && ip4.dst == 66.66.66.66`
		tcp  = `inport == "lsp1" && ` + flow + ` && tcp && tcp.dst == 80`
		udp  = `inport == "lsp1" && ` + flow + ` && udp && udp.dst == 80`
	)
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		stdout   string // substring
		stderr   string // substring
		noStdout bool
	}{
		{"help", []string{"trace", "--help"}, 0, "--ct stringArray", "", false},
		{"minimal", []string{"trace", fx, "ls", udp, "--ct", "new", "--ct", "new", "--minimal"}, 0,
			"ct_next(ct_state=new|trk) {\n    ct_next(ct_state=new|trk) {\n        output(\"lsp2\");\n    };\n};\n", "", false},
		{"summary without datapath", []string{"trace", fx, tcp, "--summary"}, 0, `no conntrack => output("lsp2")`, "", false},
		{"detailed default", []string{"trace", fx, tcp}, 0, "ls_in_pre_acl: tcp, priority 1001", "", false},
		{"json", []string{"trace", fx, udp, "--ct", "trk,new", "--format", "json"}, 0, `"verdict": "output"`, "", false},
		{"unknown datapath", []string{"trace", fx, "nope", tcp}, 2, "", `unknown datapath "nope"`, true},
		{"syntax error", []string{"trace", fx, `inport == "lsp1" && tcp &&`}, 2, "", "syntax error at offset", true},
		{"ambiguous", []string{"trace", fx, `inport == "lsp1" && eth.dst == 00:00:00:00:00:02 && tcp.dst == 80`}, 2, "", "ambiguous", true},
		{"missing eth.dst", []string{"trace", fx, `inport == "lsp1" && ip4 && tcp`}, 2, "", "eth.dst is not set", true},
		{"unknown ct flag", []string{"trace", fx, tcp, "--ct", "bogus"}, 2, "", "unknown connection tracking state flag", true},
		{"two formats", []string{"trace", fx, tcp, "--minimal", "--summary"}, 2, "", "at most one of", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, tc.args...)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != tc.code {
				t.Errorf("exit status %d, want %d; stderr: %s", code, tc.code, errb.String())
			}
			if !strings.Contains(out.String(), tc.stdout) {
				t.Errorf("stdout does not contain %q:\n%s", tc.stdout, out.String())
			}
			if !strings.Contains(errb.String(), tc.stderr) {
				t.Errorf("stderr does not contain %q:\n%s", tc.stderr, errb.String())
			}
			if tc.noStdout && out.Len() > 0 {
				t.Errorf("stdout not empty on error:\n%s", out.String())
			}
		})
	}
}
