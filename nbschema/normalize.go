package nbschema

// sortSets puts every set column of every row in the order OVSDB keeps
// sets in (Table.SortSets), so that a fixture and a live NB holding the
// same rows give the same Snapshot, down to slice order.
func (s *Snapshot) sortSets() {
	for _, t := range tables {
		for _, r := range t.rows(s) {
			t.SortSets(r)
		}
	}
}
