package watch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/internal/jsonstr"
	"github.com/aclc/aclc/lflow"
)

// DeltaRecord is one line of --deltas: what one change batch did.
type DeltaRecord struct {
	Seq int `json:"seq"`
	// Time is when the line was written: taken just before the one write
	// of a line of at most streamFlows flows; a longer line (the initial
	// one) is written as it is encoded and Time is its start.
	Time time.Time `json:"time"`
	// Received is when the batch's first NB row event reached the watcher
	// (omitted for the initial and resync batches).
	Received *time.Time `json:"received,omitempty"`
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
	r := &DeltaRecord{Seq: b.Seq, Time: time.Now().UTC(), Received: b.received(), Initial: b.Initial, Resync: b.Resync, NB: d.Changes, NbCfg: b.NbCfg,
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

// received returns the time of the batch's first row event, nil when it
// came from none.
func (b *Batch) received() *time.Time {
	if b.Initial || b.Resync || b.First.IsZero() {
		return nil
	}
	t := b.First.UTC()
	return &t
}

// streamFlows is the most flows a delta line holds that writeDeltaLine
// builds whole in memory before its one write; a longer one is streamed.
const streamFlows = 2000

// writeDeltaLine writes the record of b as one JSON line. A line of at
// most streamFlows flows is built in memory and written with one write,
// its time taken just before; a longer one is written as its flows are
// encoded one by one: the initial record of a large NB holds every flow,
// and building it whole would double the watcher's peak memory.
func writeDeltaLine(w io.Writer, b *Batch) error {
	var hb bytes.Buffer
	enc := json.NewEncoder(&hb)
	enc.SetEscapeHTML(false)
	header := func() (head, rest []byte, err error) {
		hb.Reset()
		rec := NewDeltaRecord(&Batch{Seq: b.Seq, Initial: b.Initial, Resync: b.Resync, Compile: b.Compile, CompileCPU: b.CompileCPU, Latency: b.Latency, NbCfg: b.NbCfg,
			First: b.First, Delta: &compile.Delta{Changes: b.Delta.Changes, Recompiled: b.Delta.Recompiled, Patched: b.Delta.Patched, Full: b.Delta.Full}})
		for i := range b.Delta.Datapaths {
			dd := &b.Delta.Datapaths[i]
			rec.Datapaths = append(rec.Datapaths, DeltaDPOp{UUID: dd.UUID, Name: dd.Name, Name2: dd.Name2, Created: dd.Created, Deleted: dd.Deleted})
		}
		if err := enc.Encode(rec); err != nil {
			return nil, nil, err
		}
		// {"seq":…,"added":[],"removed":[],…}: cut it before "added".
		h := bytes.TrimSpace(hb.Bytes())
		i := bytes.Index(h, []byte(`,"added":[],"removed":[]`))
		if i < 0 {
			return nil, nil, errors.New("delta record: unexpected header encoding")
		}
		return h[:i], h[i+len(`,"added":[],"removed":[]`):], nil
	}
	nflows := b.Delta.NumAdded() + b.Delta.NumRemoved()
	var bw *bufio.Writer
	var rest []byte
	if nflows > streamFlows {
		head, r, err := header()
		if err != nil {
			return err
		}
		rest = r
		bw = bufio.NewWriterSize(w, 256<<10)
		bw.Write(head)
	}
	// The flows are appended to one buffer (appendDeltaFlow), not boxed
	// and encoded through reflection: the initial record has hundreds of
	// thousands at 50k ACLs. A line built whole has its flows in body,
	// sized up front; a streamed one writes each flow from it.
	size := 0
	if bw == nil {
		for i := range b.Delta.Datapaths {
			dd := &b.Delta.Datapaths[i]
			for _, fl := range [][]lflow.Flow{dd.Added, dd.Removed} {
				for _, f := range fl {
					size += len(f.Match) + len(f.Actions) + len(f.Source) + len(dd.Name) + len(dd.UUID) + 160
				}
			}
		}
	}
	body := make([]byte, 0, size+32)
	list := func(name string, removed bool) {
		body = append(body, `,"`+name+`":[`...)
		n := 0
		for j := range b.Delta.Datapaths {
			dd := &b.Delta.Datapaths[j]
			flows := dd.Added
			if removed {
				flows = dd.Removed
			}
			for _, f := range flows {
				if n > 0 {
					body = append(body, ',')
				}
				body = appendDeltaFlow(body, dd, f)
				n++
				if bw != nil {
					bw.Write(body)
					body = body[:0]
				}
			}
		}
		body = append(body, ']')
	}
	list("added", false)
	list("removed", true)
	if bw != nil {
		bw.Write(body)
		bw.Write(rest)
		bw.WriteByte('\n')
		return bw.Flush()
	}
	head, rest, err := header()
	if err != nil {
		return err
	}
	line := make([]byte, 0, len(head)+len(body)+len(rest)+1)
	line = append(append(append(append(line, head...), body...), rest...), '\n')
	_, err = w.Write(line)
	return err
}

// appendDeltaFlow appends the JSON of f in dd as a DeltaFlow, exactly as
// encoding/json encodes it (without HTML escaping, as every delta line
// is written).
func appendDeltaFlow(b []byte, dd *compile.DatapathDelta, f lflow.Flow) []byte {
	b = jsonstr.Append(append(b, `{"datapath":`...), dd.Name, false)
	b = jsonstr.Append(append(b, `,"datapath_uuid":`...), dd.UUID, false)
	b = jsonstr.Append(append(b, `,"pipeline":`...), f.Stage.Pipeline().String(), false)
	b = strconv.AppendInt(append(b, `,"table":`...), int64(f.Stage.Table()), 10)
	b = jsonstr.Append(append(b, `,"stage":`...), f.Stage.Name(), false)
	b = strconv.AppendInt(append(b, `,"priority":`...), int64(f.Priority), 10)
	b = jsonstr.Append(append(b, `,"match":`...), f.Match, false)
	b = jsonstr.Append(append(b, `,"actions":`...), f.Actions, false)
	if f.Source != "" {
		b = jsonstr.Append(append(b, `,"source":`...), f.Source, false)
	}
	return append(b, '}')
}
