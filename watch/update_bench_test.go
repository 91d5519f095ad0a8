package watch

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/ovn-kubernetes/libovsdb/cache"
	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"
	"golang.org/x/sys/unix"

	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
)

// countEvents is a cache event handler that reports each event on ch.
type countEvents struct{ ch chan struct{} }

func (c countEvents) OnAdd(string, model.Model)                 { c.ch <- struct{}{} }
func (c countEvents) OnUpdate(string, model.Model, model.Model) { c.ch <- struct{}{} }
func (c countEvents) OnDelete(string, model.Model)              { c.ch <- struct{}{} }

// newCache returns an empty libovsdb cache of the newest NB model.
func newCache(tb testing.TB) (*cache.TableCache, model.DatabaseModel) {
	cdm, err := nbdb.FullDatabaseModel()
	if err != nil {
		tb.Fatal(err)
	}
	dbm, errs := model.NewDatabaseModel(nbdb.Schema(), cdm)
	if len(errs) > 0 {
		tb.Fatal(errs)
	}
	tc, err := cache.NewTableCache(dbm, nil, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return tc, dbm
}

// BenchmarkClientUpdate50k is libovsdb's part of one NB transaction at the
// 50k NB (an ACL's priority and NB_Global nb_cfg, as bench/watch sends):
// decoding the update3 notification's parameters as libovsdb's client
// does, applying them to a cache that holds the whole NB, and handing the
// two row events to a handler.
func BenchmarkClientUpdate50k(b *testing.B) {
	p := nbgen.Default()
	p.ACLs, p.Switches, p.PortGroups, p.AddressSets = 50000, 500, 2500, 5000
	snap := nbgen.Generate(p)
	tc, dbm := newCache(b)
	initial := ovsdb.TableUpdates2{}
	for _, t := range nbschema.Tables() {
		tu := ovsdb.TableUpdate2{}
		for id, row := range t.Rows(snap) {
			info, err := dbm.NewModelInfo(row)
			if err != nil {
				b.Fatal(err)
			}
			r, err := dbm.Mapper.NewRow(info)
			if err != nil {
				b.Fatal(err)
			}
			rr := ovsdb.Row(r)
			tu[id] = &ovsdb.RowUpdate2{Initial: &rr}
		}
		initial[t.Name] = tu
	}
	if err := tc.Populate2(initial); err != nil {
		b.Fatal(err)
	}
	initial = nil
	stop := make(chan struct{})
	defer close(stop)
	h := countEvents{ch: make(chan struct{}, 1<<17)}
	tc.AddEventHandler(h)
	go tc.Run(stop)
	for range tc.Table("ACL").Len() + len(snap.Switches) + len(snap.PortGroups) {
		<-h.ch
	}
	for len(h.ch) > 0 {
		<-h.ch
	}
	var aclID string
	for id := range snap.ACLs {
		aclID = id
		break
	}
	gid := "5e0fcd8a-7c7b-4bb2-9c7c-0a2d4c1f1b3e"
	if err := tc.Populate2(ovsdb.TableUpdates2{"NB_Global": {gid: &ovsdb.RowUpdate2{Insert: &ovsdb.Row{"nb_cfg": 0}}}}); err != nil {
		b.Fatal(err)
	}
	<-h.ch
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU()
	for i := range b.N {
		msg := fmt.Sprintf(`[{"ID":"aclc","DatabaseName":"OVN_Northbound"},"0c1a7a0e-6c0e-4d1e-9f6e-%012d",{"ACL":{%q:{"modify":{"priority":%d}}},"NB_Global":{%q:{"modify":{"nb_cfg":%d}}}}]`,
			i, aclID, 1000+i%2, gid, i+1)
		var params []json.RawMessage
		if err := json.Unmarshal([]byte(msg), &params); err != nil {
			b.Fatal(err)
		}
		var cookie struct{ ID, DatabaseName string }
		var txn string
		var updates ovsdb.TableUpdates2
		if json.Unmarshal(params[0], &cookie) != nil || json.Unmarshal(params[1], &txn) != nil || json.Unmarshal(params[2], &updates) != nil {
			b.Fatal("decode")
		}
		if err := tc.Update2(nil, updates); err != nil {
			b.Fatal(err)
		}
		<-h.ch
		<-h.ch
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// processCPU is the CPU time (user and system) the process has used.
func processCPU() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestEventQueue: the watcher sees libovsdb's event queue (settle relies
// on it; without it the watcher falls back to waiting for event silence).
func TestEventQueue(t *testing.T) {
	tc, _ := newCache(t)
	queued, ok := eventQueue(tc)
	if !ok {
		t.Fatal("libovsdb's cache event channel not found")
	}
	if n := queued(); n != 0 {
		t.Fatalf("%d events queued in a new cache", n)
	}
	rows := ovsdb.TableUpdate2{}
	for i := range 3 {
		rows[fmt.Sprintf("5e0fcd8a-7c7b-4bb2-9c7c-0a2d4c1f1b3%d", i)] = &ovsdb.RowUpdate2{Insert: &ovsdb.Row{"nb_cfg": i}}
	}
	if err := tc.Populate2(ovsdb.TableUpdates2{"NB_Global": rows}); err != nil {
		t.Fatal(err)
	}
	if n := queued(); n != 3 {
		t.Fatalf("%d events queued after inserting 3 rows, want 3", n)
	}
	if _, ok := eventQueue(nil); ok {
		t.Fatal("a nil cache has an event queue")
	}
}
