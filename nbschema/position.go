package nbschema

import (
	"cmp"
	"strconv"
)

// Position is where a fixture row was written, token.Position style:
// File, Line and Column (1-based); Line 0 means no position.
type Position struct {
	File   string
	Line   int
	Column int
}

// IsValid reports whether p names a line.
func (p Position) IsValid() bool { return p.Line > 0 }

// String formats p as "file:line:column".
func (p Position) String() string {
	s := p.File
	if p.IsValid() {
		s += ":" + strconv.Itoa(p.Line)
		if p.Column > 0 {
			s += ":" + strconv.Itoa(p.Column)
		}
	}
	return s
}

// ComparePositions orders positions by file, then line, then column.
func ComparePositions(a, b Position) int {
	return cmp.Or(cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line), cmp.Compare(a.Column, b.Column))
}

// Position returns where the row uuid was written in its fixture; not
// valid for a row read from a live NB.
func (s *Snapshot) Position(uuid string) Position { return s.Positions[uuid] }
