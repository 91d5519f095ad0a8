package lint

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/aclc/aclc/nbgen"
)

// TestAppendFinding checks appendFinding against json.MarshalIndent on
// every finding of the lint fixtures and of a generated NB of each shape,
// and on findings with every kind of string and optional field.
func TestAppendFinding(t *testing.T) {
	var fs []Finding
	names, _ := filepath.Glob("testdata/*.yaml")
	for _, n := range names {
		fs = append(fs, lintFixture(t, filepath.Base(n)).Findings...)
	}
	for _, shape := range []nbgen.Shape{nbgen.ShapeConsecutive, nbgen.ShapeCluster} {
		p := nbgen.Default()
		p.Shape, p.ACLs, p.Switches, p.PortGroups, p.AddressSets = shape, 2000, 20, 100, 200
		r, err := Lint(nbgen.Generate(p))
		if err != nil {
			t.Fatal(err)
		}
		fs = append(fs, r.Findings...)
	}
	odd := []string{"", `a "quoted" \ back\slash`, "ip4 && tcp.dst < 80 || x > 1", "tab\there\nnew\rline\x01\x7f",
		"non-ASCII — ü \u2028 \u2029", "bad \xff utf-8", "<>&"}
	for i, s := range odd {
		off := i - 2
		fs = append(fs, Finding{Rule: s, Severity: Severity(i % 3), Message: s, Fix: s, Switches: []string{s, "sw"}, Offset: &off,
			ACLs: []ACLRef{{UUID: s, Name: s, Owner: s, Origin: s, Direction: s, Priority: -i, Action: s, Match: s}, {UUID: "u"}}})
	}
	fs = append(fs, Finding{}, Finding{ACLs: []ACLRef{}, Switches: []string{}})
	if len(fs) < 100 {
		t.Fatalf("only %d findings to compare", len(fs))
	}
	for i := range fs {
		want, err := json.MarshalIndent(fs[i], "    ", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if got := appendFinding(nil, &fs[i]); string(got) != string(want) {
			t.Fatalf("finding %d:\ngot  %s\nwant %s", i, got, want)
		}
	}
	// The whole report, in chunks whose buffers WriteJSON reuses.
	if len(fs) < 4*jsonChunk {
		t.Fatalf("only %d findings: fewer than 4 chunks", len(fs))
	}
	r := &Report{Findings: fs}
	want, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := WriteJSON(&got, r); err != nil {
		t.Fatal(err)
	}
	if got.String() != string(want)+"\n" {
		t.Fatalf("WriteJSON differs from json.MarshalIndent (%d vs %d bytes)", got.Len(), len(want)+1)
	}
}
