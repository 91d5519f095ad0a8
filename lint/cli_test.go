package lint

import (
	"bytes"
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aclc/aclc/internal/testenv"
	"github.com/google/go-cmp/cmp"
)

// TestCLILint builds aclc and runs `aclc lint`, the command line face of
// this package (cmd/aclc/lint.go): formats and exit codes.
func TestCLILint(t *testing.T) {
	bin := testenv.AclcBinary(t)
	fx := func(name string) string { return filepath.Join("testdata", name) }
	tests := []struct {
		name       string
		args       []string
		wantOut    []string // substrings of stdout
		wantErr    string   // substring of stderr
		wantStatus int
	}{
		{name: "errors exit 1", args: []string{"lint", fx("reject-or-discarded.yaml")},
			wantOut:    []string{"error [reject-or-discarded]", "    tcp.dst == 22 || tcp.dst == 23\n                  ^\n", "1 error(s), 0 warning(s), 2 info(s)"},
			wantStatus: 1},
		{name: "warnings exit 0", args: []string{"lint", fx("shadowed.yaml")},
			wantOut: []string{"warning [shadowed]", "0 error(s), 4 warning(s), 4 info(s)"}},
		{name: "json", args: []string{"lint", "--format", "json", fx("dangling-ref.yaml")},
			wantOut: []string{`"rule": "dangling-ref"`, `"severity": "error"`, `"origin": "testdata/dangling-ref.yaml:9:9"`}, wantStatus: 1},
		{name: "stats", args: []string{"lint", "--stats", fx("missing-prereq.yaml")},
			wantOut: []string{"info [missing-prereq]"}, wantErr: "linted 1 ACLs on 1 switches in "},
		// A fixture that names no release is linted for 26.03 (tiers).
		{name: "default release 26.03", args: []string{"lint", fx("pass-to-default.yaml")},
			wantOut: []string{"warning [pass-to-default]", "0 error(s), 2 warning(s), 0 info(s)"}},
		{name: "tiers on 23.03", args: []string{"lint", "--ovn-version", "23.03", fx("tiers-shadowed.yaml")},
			wantErr: "tiers-shadowed.yaml:16:72: switches[0].acls[0].tier: ACL column tier came in OVN 23.06", wantStatus: 1},
		// The 23.03 reject quirk is 23.03's only.
		{name: "reject on 26.03", args: []string{"lint", "--ovn-version", "26.03", fx("reject-or-discarded.yaml")},
			wantOut: []string{"0 error(s), 0 warning(s), 2 info(s)"}},
		{name: "bad format", args: []string{"lint", "--format", "yaml", fx("shadowed.yaml")},
			wantErr: "--format: want text or json", wantStatus: 2},
		{name: "missing fixture", args: []string{"lint", fx("no-such.yaml")},
			wantErr: "no-such.yaml", wantStatus: 1},
		{name: "fixture and --nb", args: []string{"lint", "--nb", "unix:/nonexistent", fx("shadowed.yaml")},
			wantErr: "either a FIXTURE or --nb", wantStatus: 2},
		{name: "two fixtures", args: []string{"lint", fx("shadowed.yaml"), fx("host-bits.yaml")},
			wantErr: "accepts at most 1 arg", wantStatus: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(bin, tc.args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			status := 0
			if err := cmd.Run(); err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatal(err)
				}
				status = ee.ExitCode()
			}
			if diff := cmp.Diff(tc.wantStatus, status); diff != "" {
				t.Errorf("exit status (-want +got):\n%s\nstderr: %s", diff, stderr.String())
			}
			for _, w := range tc.wantOut {
				if !strings.Contains(stdout.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
				}
			}
			if tc.wantErr != "" && !strings.Contains(stderr.String(), tc.wantErr) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantErr, stderr.String())
			}
			if strings.Contains(strings.Join(tc.args, " "), "json") && status != 2 {
				var v map[string]any
				if err := json.Unmarshal(stdout.Bytes(), &v); err != nil {
					t.Errorf("stdout is not JSON: %v", err)
				}
			}
		})
	}
}
