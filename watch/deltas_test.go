package watch

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
)

// deltaStrings are strings with every kind of byte a JSON encoder
// treats apart: quotes, backslashes, each control byte, HTML characters
// (not escaped in delta lines), non-ASCII, U+2028/U+2029, invalid UTF-8.
func deltaStrings() []string {
	s := []string{"", "sw0", `outport == "sw0-p1" && ip4.src == $as_1`, `reg0[7] == 1 && (ip4 || ip6)`, `a\b`, "<&>", "é ü 漢", "\u2028\u2029", "\xff\xfe", "x\xc3"}
	var ctl strings.Builder
	for c := range 0x20 {
		ctl.WriteByte(byte(c))
	}
	s = append(s, ctl.String(), "\x7f", "tab\there")
	var all strings.Builder
	for c := range 256 {
		all.WriteByte(byte(c))
	}
	return append(s, all.String())
}

// TestDeltaFlowJSON: a delta line's flows are what encoding/json writes
// for DeltaFlow (without HTML escaping), for strings of every kind.
func TestDeltaFlowJSON(t *testing.T) {
	strs := deltaStrings()
	stages := []lflow.Stage{lflow.ACLStages[0], lflow.ACLStages[len(lflow.ACLStages)-1]}
	for i, a := range strs {
		for j, m := range strs {
			dd := &compile.DatapathDelta{UUID: strs[(i+j)%len(strs)], Name: a}
			f := lflow.Flow{Stage: stages[(i+j)%2], Priority: i*1000 - j, Match: m, Actions: a, Source: strs[(i*7+j)%len(strs)]}
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			df := deltaFlow(dd, f)
			if err := enc.Encode(&df); err != nil {
				t.Fatal(err)
			}
			if got := appendDeltaFlow(nil, dd, f); string(got) != strings.TrimSuffix(want.String(), "\n") {
				t.Fatalf("flow %q %q:\n got %s\nwant %s", a, m, got, want.String())
			}
		}
	}
}

// sampleBatch is a batch as one port group ACL change makes: three
// switches, two flows added and two removed on each (n flows each with
// n > 2).
func sampleBatch(n ...int) *Batch {
	per := 2
	if len(n) > 0 {
		per = n[0]
	}
	d := &compile.Delta{Recompiled: 3, Patched: 3, Changes: []compile.RowOp{{Table: "ACL", UUID: "00003260-e1f6-5f1e-ad3d-d8672b36ba75", Op: "update"}}}
	for i := range 3 {
		dd := compile.DatapathDelta{UUID: "967776f0-12e7-4f23-8ce7-dd8699672b6" + string(rune('0'+i)), Name: "sw" + string(rune('0'+i))}
		for k := range per {
			f := lflow.Flow{Stage: lflow.ACLStages[k%2], Priority: 2000 + k, Match: `outport == @pg_12 && ip4 && ip4.src == $as_77_ip4 && tcp.dst == 443`,
				Actions: `reg0[7] = 1; reg0[9] = 1; next;`, Source: "00003260-e1f6-5f1e-ad3d-d8672b36ba75"}
			dd.Added = append(dd.Added, f)
			f.Priority++
			dd.Removed = append(dd.Removed, f)
		}
		d.Datapaths = append(d.Datapaths, dd)
	}
	return &Batch{Seq: 7, Delta: d, NbCfg: 12, Compile: 76 * time.Microsecond, Latency: 200 * time.Microsecond, First: time.Now()}
}

// TestDeltaLineJSON: a delta line is the JSON of its DeltaRecord, built
// whole or (more than streamFlows flows) streamed.
func TestDeltaLineJSON(t *testing.T) {
	for _, n := range []int{2, streamFlows/6 + 1} {
		testDeltaLineJSON(t, sampleBatch(n))
	}
}

func testDeltaLineJSON(t *testing.T, b *Batch) {
	var line bytes.Buffer
	if err := writeDeltaLine(&line, b); err != nil {
		t.Fatal(err)
	}
	var got DeltaRecord
	if err := json.Unmarshal(line.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	want := NewDeltaRecord(b)
	want.Time = got.Time
	var wb bytes.Buffer
	enc := json.NewEncoder(&wb)
	enc.SetEscapeHTML(false)
	enc.Encode(want)
	if line.String() != wb.String() {
		t.Fatalf("delta line of %d flows\n got %s\nwant %s", b.Delta.NumAdded()+b.Delta.NumRemoved(), line.String(), wb.String())
	}
}

// BenchmarkDeltaLine: the delta line of a one-ACL batch (12 flows).
func BenchmarkDeltaLine(b *testing.B) {
	batch := sampleBatch()
	var out bytes.Buffer
	b.ReportAllocs()
	for b.Loop() {
		out.Reset()
		if err := writeDeltaLine(&out, batch); err != nil {
			b.Fatal(err)
		}
	}
}
