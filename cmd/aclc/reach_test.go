package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestReachCLI checks aclc reach's output and exit codes: JSON Lines
// whose parts carry a witness, text, and exit 2 on bad input.
func TestReachCLI(t *testing.T) {
	const fx = "../../testdata/fixtures/stateful-drop-reject.yaml"
	r := aclc(t, "", "reach", fx, "--from", "p1", "--to", "p2", "--format", "json")
	// The ARP/ND part is not exact: exit 3.
	if r.code != 3 {
		t.Fatalf("exit %d, want 3; stderr %s", r.code, r.stderr)
	}
	verdicts := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var l reachLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if l.From != "p1" || l.To != "p2" || l.Witness == nil || !strings.Contains(l.Witness.Microflow, `inport == "p1"`) || !ctArgsOK(l) {
			t.Errorf("bad line %s", line)
		}
		if l.Verdict != "not-exact" && len(l.ACLs) == 0 {
			t.Errorf("no ACLs: %s", line)
		}
		verdicts[string(l.Verdict)]++
	}
	for _, v := range []string{"allow", "drop", "reject", "not-exact"} {
		if verdicts[v] == 0 {
			t.Errorf("no %s part in %s", v, r.stdout)
		}
	}
	if r := aclc(t, "", "reach", fx, "--from", "p1", "--to", "p2"); r.code != 3 || !strings.Contains(r.stdout, "p1 -> p2: reject") {
		t.Errorf("text: exit %d, output %s", r.code, r.stdout)
	}
	for _, args := range [][]string{
		{"--from", "p1", "--to", "nope"},
		{"--from", "p1", "--to", "p1"},
		{"--from", "p1", "--to", "p2", "--format", "yaml"},
	} {
		if r := aclc(t, "", append([]string{"reach", fx}, args...)...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, r.code, r.stderr)
		}
	}
	// Two switches no router joins: no path, not an error.
	if r := aclc(t, "", "reach", "../../testdata/fixtures/pg-multi-switch.yaml", "--from", "a1", "--to", "b1"); r.code != 0 || !strings.Contains(r.stdout, "a1 -> b1: no-path (switches sw-a and sw-b are not joined by a logical router)") {
		t.Errorf("two switches: exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr)
	}
}

// ctArgsOK: a witness that went through conntrack lists a --ct argument
// per recirculation, new,trk each; one that did not lists none.
func ctArgsOK(l reachLine) bool {
	if l.Conntrack != (len(l.Witness.CT) > 0) {
		return l.Verdict == "not-exact"
	}
	for _, c := range l.Witness.CT {
		if c != "new,trk" {
			return false
		}
	}
	return true
}
