package lint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWriteText checks the caret line under the offending character and
// the summary line.
func TestWriteText(t *testing.T) {
	r := lintFixture(t, "reject-or-discarded.yaml")
	var b bytes.Buffer
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"lint/testdata/reject-or-discarded.yaml:14:9: error [reject-or-discarded] ACL \"reject-telnet\" on Logical_Switch sw0 (from-lport priority 2000 reject)\n",
		"    tcp.dst == 22 || tcp.dst == 23\n                  ^\n",
		"  fix: parenthesize the whole match: (tcp.dst == 22 || tcp.dst == 23)\n",
		"1 error(s), 0 warning(s), 2 info(s) in 4 ACL(s) on 2 switch(es)\n",
	} {
		if !strings.Contains(strings.ReplaceAll(out, "testdata/", "lint/testdata/"), want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

// TestWriteJSON checks the JSON shape.
func TestWriteJSON(t *testing.T) {
	r := lintFixture(t, "dangling-ref.yaml")
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Findings []struct {
			Rule     string   `json:"rule"`
			Severity string   `json:"severity"`
			Switches []string `json:"switches"`
			Offset   *int     `json:"offset"`
			ACLs     []struct {
				Name   string `json:"name"`
				Owner  string `json:"owner"`
				Origin string `json:"origin"`
			} `json:"acls"`
		} `json:"findings"`
		Stats struct {
			Errors int `json:"errors"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("bad JSON: %v\n%s", err, b.String())
	}
	f := doc.Findings[2]
	got := []any{f.Rule, f.Severity, f.Switches, *f.Offset, f.ACLs[0].Name, f.ACLs[0].Owner, f.ACLs[0].Origin, doc.Stats.Errors}
	want := []any{"dangling-ref", "error", []string{"sw-web"}, 11, "pg-elsewhere", "Logical_Switch sw-web", "testdata/dangling-ref.yaml:11:9", 3}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
}

// TestWriteTextGroups: findings with one cause for several ACLs are one
// block with a count and the first few; long switch lists are cut; JSON
// keeps every finding.
func TestWriteTextGroups(t *testing.T) {
	r := &Report{}
	var sws []string
	for i := 0; i < 8; i++ {
		sws = append(sws, fmt.Sprintf("sw%d", i))
	}
	for i := 0; i < 8; i++ {
		r.Findings = append(r.Findings, Finding{Rule: RuleMissingPrereq, Severity: Info, Message: "same cause", Fix: "fix it",
			ACLs: []ACLRef{{UUID: fmt.Sprintf("acl-%d", i), Origin: fmt.Sprintf("f.yaml:%d:1", i+1)}}, Switches: sws[i : i+1]})
	}
	r.Findings = append(r.Findings, Finding{Rule: RuleShadowed, Severity: Warning, Message: "other", Fix: "x",
		ACLs: []ACLRef{{UUID: "lone", Origin: "f.yaml:20:1"}}, Switches: sws})
	var b strings.Builder
	if err := WriteText(&b, r); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{"and 7 more ACL(s) with the same finding", "... 2 more (--format json lists them all)",
		"switches: sw0, sw1, sw2, sw3, sw4 and 3 more"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, "same cause"); n != 1 {
		t.Errorf("the group's message printed %d times, want 1", n)
	}
	var j strings.Builder
	if err := WriteJSON(&j, r); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(j.String(), `"rule": "missing-prereq"`); n != 8 {
		t.Errorf("JSON has %d of the 8 grouped findings", n)
	}
}
