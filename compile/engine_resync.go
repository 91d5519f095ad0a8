package compile

import (
	"reflect"

	"github.com/aclc/aclc/nbschema"
)

// Resync brings the engine to the NB of s (taking ownership of it) by
// comparing every row, and returns the delta. It is how a watcher recovers
// after a reconnect, when row events may have been lost.
func (e *Engine) Resync(s *nbschema.Snapshot) *Delta {
	var changes []RowChange
	cur := e.g.s
	for _, t := range nbschema.Tables() {
		for id, row := range t.Rows(s) {
			if old, ok := t.Row(cur, id); !ok || !reflect.DeepEqual(old, row) {
				changes = append(changes, RowChange{Table: t.Name, UUID: id, Row: row})
			}
		}
		for id := range t.Rows(cur) {
			if !t.Has(s, id) {
				changes = append(changes, RowChange{Table: t.Name, UUID: id})
			}
		}
	}
	return e.Apply(changes)
}
