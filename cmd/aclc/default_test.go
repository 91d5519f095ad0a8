package main

import (
	"os"
	"strings"
	"testing"
)

// TestDefaultRelease pins the release every command reads a fixture that
// names none as: 26.03, the newest LTS (compile, match check, trace), and
// that --ovn-version (or the fixture's ovn: key) still picks another.
func TestDefaultRelease(t *testing.T) {
	const fx = "../../testdata/fixtures/seed-stateless.yaml"
	pinned := writeFile(t, "pinned.yaml", "ovn: \"23.03\"\n"+mustRead(t, fx))
	tcp := `inport == "lsp1" && eth.src == 00:00:00:00:00:01 && eth.dst == 00:00:00:00:00:02 && ip4.src == 10.0.0.1 && ip4.dst == 10.0.0.2 && ip.ttl == 64 && tcp && tcp.dst == 80`
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stdout
	}{
		{"compile", []string{"compile", fx}, 0, "table=9 (ls_in_acl_eval     )"},
		{"compile 23.03", []string{"compile", fx, "--ovn-version", "23.03"}, 0, "table=8 (ls_in_acl          )"},
		{"compile ovn key", []string{"compile", pinned}, 0, "table=8 (ls_in_acl          )"},
		// ct_label.blocked went away in 24.09.
		{"match check", []string{"match", "check", "ct_label.blocked == 1"}, 1, "Syntax error at `ct_label.blocked' expecting field name"},
		{"match check 23.03", []string{"match", "check", "--ovn-version", "23.03", "ct_label.blocked == 1"}, 0, "ok"},
		{"match check fixture", []string{"match", "check", fx, "ct_label.blocked == 1"}, 1, "Syntax error"},
		{"match check ovn key", []string{"match", "check", pinned, "ct_label.blocked == 1"}, 0, "ok"},
		// ls_in_pre_acl is table 5 in 26.03, 4 in 23.03.
		{"trace", []string{"trace", fx, tcp, "--detailed"}, 0, "\n 5. ls_in_pre_acl: tcp, priority 1001"},
		{"trace 23.03", []string{"trace", fx, tcp, "--detailed", "--ovn-version", "23.03"}, 0, "\n 4. ls_in_pre_acl: tcp, priority 1001"},
		{"trace ovn key", []string{"trace", pinned, tcp, "--detailed"}, 0, "\n 4. ls_in_pre_acl: tcp, priority 1001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := aclc(t, "", tc.args...)
			if r.code != tc.code || !strings.Contains(r.stdout, tc.want) {
				t.Errorf("aclc %s: exit %d (want %d), stdout lacks %q:\n%.600s\n%s", strings.Join(tc.args, " "), r.code, tc.code, tc.want, r.stdout, r.stderr)
			}
		})
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTraceChassisLacks: trace walks the flows northd writes for chassis
// lacking a feature when told so (TestChassisLacksNorthd checks those
// flows against northd): with ovn-sample-with-registers lacking, a sample
// with one collector is taken by its per-ACL flow, not the generic one.
func TestTraceChassisLacks(t *testing.T) {
	fx := writeFile(t, "sample.yaml", strings.Replace(mustRead(t, "../../testdata/fixtures/sample-new-est.yaml"),
		"      - {name: p1}\n", "      - {name: p1, addresses: [\"00:00:00:00:00:01 10.0.0.1\"]}\n      - {name: p2, addresses: [\"00:00:00:00:00:02 10.0.0.2\"]}\n", 1))
	flow := `inport == "p1" && eth.src == 00:00:00:00:00:01 && eth.dst == 00:00:00:00:00:02 && ip4.src == 10.0.0.1 && ip4.dst == 10.0.0.2 && ip.ttl == 64 && tcp && tcp.dst == 80`
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{nil, "obs_point=reg3);"},
		{[]string{"--chassis-lacks", "ovn-sample-with-registers"}, "obs_point=1001);"},
	} {
		r := aclc(t, "", append([]string{"trace", fx, flow, "--ct", "new", "--ct", "new"}, tc.flags...)...)
		if r.code != 0 || !strings.Contains(r.stdout, tc.want) {
			t.Errorf("trace %v: exit %d, no %q:\n%s%s", tc.flags, r.code, tc.want, r.stdout, r.stderr)
		}
	}
	if r := aclc(t, "", "trace", fx, flow, "--chassis-lacks", "sample"); r.code != 2 || !strings.Contains(r.stderr, `unknown chassis feature "sample"`) {
		t.Errorf("bad --chassis-lacks: exit %d, %s", r.code, r.stderr)
	}
}
