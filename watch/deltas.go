package watch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
)

// DeltaRecord is one line of --deltas: what one change batch did.
type DeltaRecord struct {
	Seq  int       `json:"seq"`
	Time time.Time `json:"time"`
	// Initial: the first record, every flow added. Resync: the batch came
	// from comparing the whole NB after a reconnect.
	Initial bool `json:"initial,omitempty"`
	Resync  bool `json:"resync,omitempty"`
	// NB is the NB transaction(s) of the batch: every row it inserted,
	// updated or deleted in the tables aclc follows.
	NB []compile.RowOp `json:"nb"`
	// NbCfg is NB_Global's nb_cfg once the batch is applied: the sequence
	// number that ovn-nbctl --wait and CMSs bump in the transaction of
	// their change (and northd copies to the SB's sb_cfg), so a CMS can
	// tell that aclc has processed its change. Omitted while 0.
	NbCfg int `json:"nb_cfg,omitempty"`
	// CompileMicros is the engine's time for the delta; LatencyMicros the
	// time from the first row event of the batch reaching the watcher to
	// the delta being ready.
	CompileMicros    int64 `json:"compile_us"`
	CompileCPUMicros int64 `json:"compile_cpu_us,omitempty"`
	LatencyMicros    int64 `json:"latency_us"`
	// Recompiled datapaths; Full when every switch was rebuilt.
	// Datapaths names every switch the batch changed, with its current
	// name (and whether it was created or deleted).
	Recompiled int         `json:"recompiled"`
	Patched    int         `json:"patched,omitempty"`
	Full       bool        `json:"full,omitempty"`
	Added      []DeltaFlow `json:"added"`
	Removed    []DeltaFlow `json:"removed"`
	Datapaths  []DeltaDPOp `json:"datapaths,omitempty"`
}

// DeltaDPOp records a datapath created, deleted or renamed.
type DeltaDPOp struct {
	UUID    string `json:"uuid"`
	Name    string `json:"name"`
	Name2   string `json:"name2,omitempty"`
	Created bool   `json:"created,omitempty"`
	Deleted bool   `json:"deleted,omitempty"`
}

// DeltaFlow is one flow added or removed, with its datapath: the flow in
// lflow's JSON shape after the datapath's name and UUID.
type DeltaFlow struct {
	Datapath     string `json:"datapath"`
	DatapathUUID string `json:"datapath_uuid"`
	lflow.JSONFlow
}

func deltaFlow(dd *compile.DatapathDelta, f lflow.Flow) DeltaFlow {
	return DeltaFlow{Datapath: dd.Name, DatapathUUID: dd.UUID, JSONFlow: f.ToJSON()}
}

// NewDeltaRecord builds the --deltas record of a batch.
func NewDeltaRecord(b *Batch) *DeltaRecord {
	d := b.Delta
	r := &DeltaRecord{Seq: b.Seq, Time: time.Now().UTC(), Initial: b.Initial, Resync: b.Resync, NB: d.Changes, NbCfg: b.NbCfg,
		CompileMicros: b.Compile.Microseconds(), CompileCPUMicros: b.CompileCPU.Microseconds(), LatencyMicros: b.Latency.Microseconds(), Recompiled: d.Recompiled, Patched: d.Patched, Full: d.Full,
		Added: []DeltaFlow{}, Removed: []DeltaFlow{}}
	if r.NB == nil {
		r.NB = []compile.RowOp{}
	}
	for i := range d.Datapaths {
		dd := &d.Datapaths[i]
		r.Datapaths = append(r.Datapaths, DeltaDPOp{UUID: dd.UUID, Name: dd.Name, Name2: dd.Name2, Created: dd.Created, Deleted: dd.Deleted})
		for _, f := range dd.Removed {
			r.Removed = append(r.Removed, deltaFlow(dd, f))
		}
		for _, f := range dd.Added {
			r.Added = append(r.Added, deltaFlow(dd, f))
		}
	}
	return r
}

// writeDeltaLine writes the record of b as one JSON line, encoding the
// flows one by one: the initial record of a large NB holds every flow, and
// building it whole would double the watcher's peak memory.
func writeDeltaLine(w io.Writer, b *Batch) error {
	var hb bytes.Buffer
	enc := json.NewEncoder(&hb)
	enc.SetEscapeHTML(false)
	head := NewDeltaRecord(&Batch{Seq: b.Seq, Initial: b.Initial, Resync: b.Resync, Compile: b.Compile, CompileCPU: b.CompileCPU, Latency: b.Latency, NbCfg: b.NbCfg,
		Delta: &compile.Delta{Changes: b.Delta.Changes, Recompiled: b.Delta.Recompiled, Patched: b.Delta.Patched, Full: b.Delta.Full}})
	for i := range b.Delta.Datapaths {
		dd := &b.Delta.Datapaths[i]
		head.Datapaths = append(head.Datapaths, DeltaDPOp{UUID: dd.UUID, Name: dd.Name, Name2: dd.Name2, Created: dd.Created, Deleted: dd.Deleted})
	}
	if err := enc.Encode(head); err != nil {
		return err
	}
	// {"seq":…,"added":[],"removed":[],…}: cut it before "added".
	h := bytes.TrimSpace(hb.Bytes())
	i := bytes.Index(h, []byte(`,"added":[],"removed":[]`))
	if i < 0 {
		return errors.New("delta record: unexpected header encoding")
	}
	// h and rest live in hb, which the flows reuse: copy rest out.
	rest := bytes.Clone(h[i+len(`,"added":[],"removed":[]`):])
	bw := bufio.NewWriterSize(w, 256<<10)
	bw.Write(h[:i])
	// One DeltaFlow for every flow: encoding a fresh value would box each
	// of the initial record's flows on the heap, hundreds of thousands
	// of short-lived objects at 50k ACLs that only raise the peak.
	df := new(DeltaFlow)
	list := func(name string, removed bool) error {
		bw.WriteString(`,"` + name + `":[`)
		n := 0
		for j := range b.Delta.Datapaths {
			dd := &b.Delta.Datapaths[j]
			flows := dd.Added
			if removed {
				flows = dd.Removed
			}
			for _, f := range flows {
				hb.Reset()
				*df = deltaFlow(dd, f)
				if err := enc.Encode(df); err != nil {
					return err
				}
				if n > 0 {
					bw.WriteByte(',')
				}
				bw.Write(bytes.TrimRight(hb.Bytes(), "\n"))
				n++
			}
		}
		bw.WriteByte(']')
		return nil
	}
	if err := list("added", false); err != nil {
		return err
	}
	if err := list("removed", true); err != nil {
		return err
	}
	bw.Write(rest)
	bw.WriteByte('\n')
	return bw.Flush()
}
