package nbschema

import (
	"fmt"
	"sort"
	"strings"
)

// FixtureError is one problem found in a fixture, located by file, line
// and column (1-based) and by the path of the offending field, for example
// "acls[2].priority". Line is 0 when the position is unknown and Column is
// 0 when only the line is known (YAML syntax errors).
type FixtureError struct {
	File   string
	Line   int
	Column int
	Path   string
	Msg    string
}

// Error formats the error as "file:line:column: path: message".
func (e *FixtureError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// FixtureErrors is every problem found in one fixture, in file order.
// ParseFixture and LoadFixture return it as their error.
type FixtureErrors []*FixtureError

// maxReportedErrors caps how many problems one fixture reports.
const maxReportedErrors = 50

// Error joins the problems one per line.
func (es FixtureErrors) Error() string {
	lines := make([]string, 0, len(es))
	for _, e := range es {
		lines = append(lines, e.Error())
	}
	return strings.Join(lines, "\n")
}

func (es FixtureErrors) sorted() FixtureErrors {
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Line != es[j].Line {
			return es[i].Line < es[j].Line
		}
		return es[i].Column < es[j].Column
	})
	if len(es) > maxReportedErrors {
		es = append(es[:maxReportedErrors:maxReportedErrors], &FixtureError{
			File: es[0].File, Msg: fmt.Sprintf("... and %d more problems", len(es)-maxReportedErrors)})
	}
	return es
}
