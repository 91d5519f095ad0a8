package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/aclc/aclc/internal/netnstest"
	"github.com/aclc/aclc/internal/testenv"
)

// ctAclc builds aclc once per test binary, into a directory anyone may
// read (the permission test runs it as nobody).
func ctAclc(t *testing.T) string {
	t.Helper()
	return testenv.AclcBinary(t)
}

// ctRun runs aclc with args and returns stdout, stderr and the exit code.
func ctRun(t *testing.T, cred *syscall.Credential, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(ctAclc(t), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("aclc %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), code
}

func TestCtUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"ct", "flush"}, "--zone is required"},
		{[]string{"ct", "flush", "--zone", "65536"}, "invalid conntrack zone"},
		{[]string{"ct", "flush", "--zone", "-1"}, "invalid conntrack zone"},
		{[]string{"ct", "flush", "--zone", "x"}, "invalid argument"},
		{[]string{"ct", "flush", "--zone", "0"}, "needs --force"},
		{[]string{"ct", "flush", "--zone", "1", "--family", "ipx"}, "unknown family"},
		{[]string{"ct", "flush", "--zone", "1", "--method", "fast"}, "unknown flush method"},
		{[]string{"ct", "list", "--zone", "1", "--format", "xml"}, "want text or json"},
		{[]string{"ct", "count"}, "--zone is required"},
		{[]string{"ct", "count", "--zone", "1", "--netns", "a", "--netns-path", "/b"}, "either --netns or --netns-path"},
		{[]string{"ct", "load"}, "accepts 1 arg"},
		{[]string{"ct", "probe", "--format", "yaml"}, "want text or json"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			_, stderr, code := ctRun(t, nil, tt.args...)
			if code != 2 || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, tt.want)
			}
		})
	}
}

const ctTestLoad = `-I -w 3 -s 10.0.0.1 -d 10.0.0.2 -p tcp --sport 1000 --dport 80 --state ESTABLISHED -u SEEN_REPLY,ASSURED -t 300
-I -w 3 -s 10.0.0.1 -d 10.0.0.2 -p udp --sport 53 --dport 5353 -t 300
-I -w 3 -s 10.0.0.1 -d 10.0.0.2 -p icmp --icmp-type 8 --icmp-code 0 --icmp-id 77 -t 300
-I -w 3 -s 2001:db8::1 -d 2001:db8::2 -p udp --sport 1 --dport 2 -t 300
-I -w 4 -s 10.0.0.1 -d 10.0.0.2 -p udp --sport 53 --dport 5353 -t 300
`

// TestCtCommands drives every ct subcommand in a throwaway namespace.
func TestCtCommands(t *testing.T) {
	testenv.NeedBinaries(t, "ip", "conntrack")
	ns := netnstest.New(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "ok.txt")
	if err := os.WriteFile(file, []byte(ctTestLoad), 0o644); err != nil {
		t.Fatal(err)
	}
	total := func() int {
		out, err := exec.Command("ip", "netns", "exec", ns, "conntrack", "-C").Output()
		n, cerr := strconv.Atoi(strings.TrimSpace(string(out)))
		if err != nil || cerr != nil {
			t.Fatalf("conntrack -C: %v %v", err, cerr)
		}
		return n
	}
	nsf := []string{"--netns", ns}
	step := func(wantCode int, wantOut string, args ...string) string {
		t.Helper()
		stdout, stderr, code := ctRun(t, nil, append(args, nsf...)...)
		if code != wantCode || !strings.Contains(stdout+stderr, wantOut) {
			t.Fatalf("aclc %v: exit %d, stdout %q, stderr %q; want exit %d and %q", args, code, stdout, stderr, wantCode, wantOut)
		}
		return stdout
	}
	step(0, "inserted 5 entries", "ct", "load", file)
	step(0, "inserted 0 entries from "+file+" (5 already present)", "ct", "load", file)
	step(0, "4\n", "ct", "count", "--zone", "3")
	step(0, "1\n", "ct", "count", "--zone", "3", "--family", "ipv6")
	list := step(0, "udp      17 ", "ct", "list", "--zone", "3")
	if n := strings.Count(list, "\n"); n != 4 || !strings.Contains(list, "[ASSURED] mark=0 zone=3 use=1") {
		t.Errorf("list:\n%s", list)
	}
	js := step(0, `"zone":3`, "ct", "list", "--zone", "3", "--format", "json")
	for _, l := range strings.Split(strings.TrimSpace(js), "\n") {
		var e struct{ Zone int }
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Zone != 3 {
			t.Errorf("json line %q: %v", l, err)
		}
	}

	// A bad line anywhere: error names file:line, nothing is inserted.
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte(strings.Replace(ctTestLoad, "-w 4", "-w 5", 1)+"-I -w 6 -s 10.0.0.1 -p udp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := total()
	step(1, bad+":6: -s and -d are required", "ct", "load", bad)
	step(1, "no such file", "ct", "load", filepath.Join(dir, "missing.txt"))
	if got := total(); got != before {
		t.Errorf("failed loads changed the table: %d entries, want %d", got, before)
	}

	step(0, "flushed zone 3 (ipv6)", "ct", "flush", "--zone", "3", "--family", "ipv6")
	step(0, "3\n", "ct", "count", "--zone", "3")
	step(0, "3 deleted, 0 already gone", "ct", "flush", "--zone", "3", "--method", "fallback")
	step(0, "0\n", "ct", "count", "--zone", "3")
	step(0, "flushed zone 3", "ct", "flush", "--zone", "3")
	step(0, "1\n", "ct", "count", "--zone", "4")
	step(0, "flushed zone 0", "ct", "flush", "--zone", "0", "--force")
	if got := total(); got != 1 {
		t.Errorf("after the flushes %d entries remain, want zone 4's 1", got)
	}

	// Without privileges the message says what is needed.
	_, stderr, code := ctRun(t, &syscall.Credential{Uid: 65534, Gid: 65534}, append([]string{"ct", "count", "--zone", "4"}, nsf...)...)
	if code != 1 || !strings.Contains(stderr, "needs root or CAP_NET_ADMIN") {
		t.Errorf("as nobody: exit %d, stderr %q; want exit 1 and the root/CAP_NET_ADMIN hint", code, stderr)
	}
}
