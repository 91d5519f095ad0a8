package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/aclc/aclc/reach"
)

// This file writes aclc reach's answers in its formats: the per-part
// ones (text, JSON Lines, CSV) as the pairs come, the per-pair ones
// (Markdown matrix, dot) at the end; and its progress line.

// reachWriter writes the outcomes of the pairs in one format.
type reachWriter interface {
	pair(o *reach.Outcome) error
	finish() error
}

func newReachWriter(w io.Writer, e *reach.Engine, format string, froms, tos []string) reachWriter {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false) // microflows are full of &&
		return &linesWriter{e: e, each: func(l reachLine) error { return enc.Encode(l) }}
	case "csv":
		return newCSVWriter(w, e)
	case "matrix", "dot":
		return &matrixWriter{w: w, dot: format == "dot", froms: froms, tos: tos, cells: map[[2]string]string{}}
	}
	return &linesWriter{e: e, each: func(l reachLine) error { writeReachText(w, l); return nil }}
}

// linesWriter writes each part's line as it comes.
type linesWriter struct {
	e     *reach.Engine // names the deciding ACLs
	each  func(reachLine) error
	flush func() error
}

func (lw *linesWriter) pair(o *reach.Outcome) error {
	for _, l := range reachLines(lw.e, o) {
		if err := lw.each(l); err != nil {
			return err
		}
	}
	return nil
}

func (lw *linesWriter) finish() error {
	if lw.flush != nil {
		return lw.flush()
	}
	return nil
}

// newCSVWriter writes a header row, then one row per part: the fields of
// reachLine's JSON, nested objects flattened (witness_microflow), lists
// joined with ';', so that the columns follow the JSON's fields.
func newCSVWriter(w io.Writer, e *reach.Engine) reachWriter {
	cw := csv.NewWriter(w)
	header := true
	return &linesWriter{
		e: e,
		each: func(l reachLine) error {
			if header {
				header = false
				if err := cw.Write(csvColumns(reflect.TypeOf(l), "")); err != nil {
					return err
				}
			}
			return cw.Write(csvValues(reflect.ValueOf(l), reflect.TypeOf(l), nil))
		},
		flush: func() error { cw.Flush(); return cw.Error() },
	}
}

// jsonName is a struct field's JSON name, "" when JSON leaves it out.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "-" || !f.IsExported() {
		return ""
	}
	if name == "" {
		name = f.Name
	}
	return name
}

// nested is the struct type a field's value is flattened from, or nil.
func nested(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() == reflect.Struct {
		return t
	}
	return nil
}

// csvColumns are the column names of struct type t, prefixed.
func csvColumns(t reflect.Type, prefix string) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		name := jsonName(t.Field(i))
		if name == "" {
			continue
		}
		if n := nested(t.Field(i).Type); n != nil {
			out = append(out, csvColumns(n, prefix+name+"_")...)
			continue
		}
		out = append(out, prefix+name)
	}
	return out
}

// csvValues appends the cells of v (of struct type t; a zero Value for a
// nil nested object: empty cells).
func csvValues(v reflect.Value, t reflect.Type, out []string) []string {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if jsonName(f) == "" {
			continue
		}
		var fv reflect.Value
		if v.IsValid() {
			fv = v.Field(i)
		}
		if n := nested(f.Type); n != nil {
			if fv.IsValid() && fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					fv = reflect.Value{}
				} else {
					fv = fv.Elem()
				}
			}
			out = csvValues(fv, n, out)
			continue
		}
		out = append(out, csvCell(fv))
	}
	return out
}

// csvCell is one value as a cell: a list joined with ';' (elements that
// are not strings or numbers as compact JSON).
func csvCell(v reflect.Value) string {
	if !v.IsValid() {
		return ""
	}
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Slice, reflect.Array:
		parts := make([]string, v.Len())
		for i := range parts {
			e := v.Index(i)
			if st, ok := e.Interface().(fmt.Stringer); ok {
				parts[i] = st.String() // a deciding ACL: its text name
			} else if e.Kind() == reflect.String {
				parts[i] = e.String()
			} else {
				b, _ := json.Marshal(e.Interface())
				parts[i] = string(b)
			}
		}
		return strings.Join(parts, ";")
	}
	b, _ := json.Marshal(v.Interface())
	return string(b)
}

// matrixWriter collects each pair's summary and writes the matrix (or
// the dot graph) at the end.
type matrixWriter struct {
	w          io.Writer
	dot        bool
	froms, tos []string
	cells      map[[2]string]string
}

func (mw *matrixWriter) pair(o *reach.Outcome) error {
	mw.cells[[2]string{o.From, o.To}] = o.Summary()
	return nil
}

// matrixLegend explains the cells.
const matrixLegend = "all: every packet reach decides exactly is allowed; none: none is; part: some are; " +
	"n/e: the pair is not exact; -: no path; *: some packets of the pair are not exact (the word is about the others); " +
	"see --format text for the parts"

func (mw *matrixWriter) finish() error {
	if mw.dot {
		return mw.writeDot()
	}
	w := mw.w
	fmt.Fprint(w, "| from \\ to |")
	for _, to := range mw.tos {
		fmt.Fprintf(w, " %s |", mdEscape(to))
	}
	fmt.Fprint(w, "\n|---|")
	fmt.Fprint(w, strings.Repeat("---|", len(mw.tos)))
	fmt.Fprintln(w)
	for _, from := range mw.froms {
		fmt.Fprintf(w, "| %s |", mdEscape(from))
		for _, to := range mw.tos {
			c, ok := mw.cells[[2]string{from, to}]
			if !ok {
				c = "·" // from == to
			}
			fmt.Fprintf(w, " %s |", mdEscape(c))
		}
		fmt.Fprintln(w)
	}
	_, err := fmt.Fprintf(w, "\n%s\n", mdEscape(matrixLegend))
	return err
}

// mdEscape escapes what Markdown would read as markup in a cell.
func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "*", `\*`, "_", `\_`).Replace(s)
}

// writeDot writes the ports as nodes and an edge for every pair whose
// summary is not none or no path (dashed when not exact).
func (mw *matrixWriter) writeDot() error {
	w := mw.w
	fmt.Fprintln(w, "digraph reach {")
	fmt.Fprintf(w, "  label=%s;\n", strconv.Quote(matrixLegend))
	seen := map[string]bool{}
	for _, p := range append(append([]string(nil), mw.froms...), mw.tos...) {
		if !seen[p] {
			seen[p] = true
			fmt.Fprintf(w, "  %s;\n", strconv.Quote(p))
		}
	}
	for _, from := range mw.froms {
		for _, to := range mw.tos {
			c, ok := mw.cells[[2]string{from, to}]
			base := strings.TrimSuffix(c, reach.SummaryInexact)
			if !ok || base == reach.SummaryNone || base == reach.SummaryNoPath {
				continue
			}
			style := ""
			if base == reach.SummaryNotExact || strings.HasSuffix(c, reach.SummaryInexact) {
				style = ", style=dashed"
			}
			fmt.Fprintf(w, "  %s -> %s [label=%s%s];\n", strconv.Quote(from), strconv.Quote(to), strconv.Quote(c), style)
		}
	}
	_, err := fmt.Fprintln(w, "}")
	return err
}

// progress is a line on stderr counting the pairs answered, shown only
// when stderr is a terminal and there are many pairs.
type progress struct {
	w        *os.File
	n, total int
	last     time.Time
}

// progressMin is how many pairs make a progress line worth showing.
const progressMin = 200

func newProgress(w *os.File, total int) *progress {
	if total < progressMin {
		return nil
	}
	if fi, err := w.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return &progress{w: w, total: total}
}

func (p *progress) step() {
	if p == nil {
		return
	}
	p.n++
	if now := time.Now(); now.Sub(p.last) > 200*time.Millisecond || p.n == p.total {
		p.last = now
		fmt.Fprintf(p.w, "\raclc reach: %d/%d pairs (%d%%)", p.n, p.total, 100*p.n/p.total)
	}
}

func (p *progress) done() {
	if p != nil {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
