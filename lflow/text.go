package lflow

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteText writes l in the format of `ovn-sbctl lflow-list`:
//
//	Datapath: "sw0" (<uuid>)  Pipeline: ingress
//	  table=8 (ls_in_acl          ), priority=2002 , match=(...), action=(...)
//
// l must be sorted (Listing.Sort).
func WriteText(w io.Writer, l *Listing) error {
	var bw io.Writer
	flush := func() error { return nil }
	if bb, ok := w.(*bytes.Buffer); ok {
		// Grow once and write straight into it: doubling a buffer of tens
		// of MB copies and clears it several times over.
		bb.Grow(textSize(l))
		bw = bb
	} else {
		b := bufio.NewWriterSize(w, 256<<10)
		bw, flush = b, b.Flush
	}
	buf := make([]byte, 0, 1024)
	for _, d := range l.Datapaths {
		prev := Pipeline(255)
		for _, f := range d.Flows {
			p := f.Stage.Pipeline()
			if p != prev {
				buf = appendHeader(buf[:0], d, p)
				bw.Write(buf)
				prev = p
			}
			buf = AppendFlowLine(buf[:0], f)
			bw.Write(buf)
		}
	}
	return flush()
}

// textSize is an upper bound of the size of l in lflow-list format.
func textSize(l *Listing) int {
	n := 0
	for _, d := range l.Datapaths {
		n += 2 * (64 + len(d.Name) + len(d.Name2) + len(d.UUID))
		for i := range d.Flows {
			f := &d.Flows[i]
			// Fixed text, a padded table, stage name and priority.
			n += 80 + len(f.Stage.Name()) + len(f.Match) + len(f.Actions)
		}
	}
	return n
}

func appendHeader(b []byte, d *Datapath, p Pipeline) []byte {
	b = append(b, "Datapath: \""...)
	b = append(b, d.Name...)
	b = append(b, '"')
	if d.Name2 != "" {
		b = append(b, " aka \""...)
		b = append(b, d.Name2...)
		b = append(b, '"')
	}
	b = append(b, " ("...)
	b = append(b, d.UUID...)
	b = append(b, ")  Pipeline: "...)
	b = append(b, p.String()...)
	return append(b, '\n')
}

// AppendFlowLine appends one lflow-list flow line (with its two-space
// indent and newline): `  table=%-2d(%-19s), priority=%-5d, match=(%s), action=(%s)`.
func AppendFlowLine(b []byte, f Flow) []byte {
	return appendFlowLine(b, f.Stage.Table(), f.Stage.Name(), f.Priority, f.Match, f.Actions)
}

func appendFlowLine(b []byte, table int, name string, prio int, match, actions string) []byte {
	b = append(b, "  table="...)
	b = appendPadInt(b, table, 2)
	b = append(b, '(')
	b = append(b, name...)
	for i := len(name); i < 19; i++ {
		b = append(b, ' ')
	}
	b = append(b, "), priority="...)
	b = appendPadInt(b, prio, 5)
	b = append(b, ", match=("...)
	b = append(b, match...)
	b = append(b, "), action=("...)
	b = append(b, actions...)
	return append(b, ")\n"...)
}

func appendPadInt(b []byte, v, width int) []byte {
	n := len(b)
	b = strconv.AppendInt(b, int64(v), 10)
	for i := len(b) - n; i < width; i++ {
		b = append(b, ' ')
	}
	return b
}

// ParseText reads a listing in `ovn-sbctl lflow-list` format, as written by
// WriteText or by ovn-sbctl itself (with or without --uuid), of whichever
// supported release's layout fits every flow line (the newest when several
// do: only an egress-only listing can fit both 25.03 and 26.03). Flows of
// stages that are not logical switch stages are an error. name is used in
// error messages (file name).
func ParseText(name string, r io.Reader) (*Listing, error) { return ParseTextLayout(name, r, nil) }

// ParseTextLayout is ParseText for the listing of one release's layout
// (nil: detect it).
func ParseTextLayout(name string, r io.Reader, layout *Layout) (*Listing, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	l := &Listing{}
	var cur *Datapath
	byID := map[string]*Datapath{}
	var pipe Pipeline
	lineno := 0
	fit := NewLayoutFit(layout)
	for sc.Scan() {
		lineno++
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		if strings.HasPrefix(line, "Datapath: ") {
			d, p, err := parseHeader(line)
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %v", name, lineno, err)
			}
			key := d.Name + "\x00" + d.UUID
			if old, ok := byID[key]; ok {
				cur = old
			} else {
				byID[key] = d
				l.Datapaths = append(l.Datapaths, d)
				cur = d
			}
			pipe = p
			continue
		}
		if cur == nil {
			return nil, fmt.Errorf("%s:%d: flow line before any \"Datapath:\" header", name, lineno)
		}
		f, err := parseFlowLine(line, pipe, fit)
		if err == errRouterFlow {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, lineno, err)
		}
		cur.Flows = append(cur.Flows, f)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// Drop logical router datapaths: aclc deals in switch pipelines only.
	kept := l.Datapaths[:0]
	for _, d := range l.Datapaths {
		if len(d.Flows) > 0 {
			kept = append(kept, d)
		}
	}
	l.Datapaths = kept
	// Place the flows' kinds in the layout that fits them all.
	fit.Place(l)
	return l, nil
}

// LayoutFit narrows the layouts that a listing's flows fit, by each flow's
// stage name and table; Place puts a listing's kinds in the one chosen.
type LayoutFit struct {
	cands []*Layout
}

// NewLayoutFit starts with l, or every layout when l is nil.
func NewLayoutFit(l *Layout) *LayoutFit {
	if l != nil {
		return &LayoutFit{cands: []*Layout{l}}
	}
	return &LayoutFit{cands: Layouts()}
}

// Add keeps the layouts that have stage name at table of p and returns its
// kind.
func (f *LayoutFit) Add(name string, p Pipeline, table int) (Stage, error) {
	kept := f.cands[:0:0]
	var kind Stage
	var where []string
	found := false
	for _, l := range f.cands {
		st, ok := l.StageByName(name)
		if !ok {
			continue
		}
		found = true
		where = append(where, fmt.Sprintf("table %d of %s in OVN %s", st.Table(), st.Pipeline(), l.Series))
		if st.Pipeline() == p && st.Table() == table {
			kept = append(kept, l)
			kind = st.Kind()
		}
	}
	if !found {
		return 0, fmt.Errorf("unknown stage %q", name)
	}
	if len(kept) == 0 {
		return 0, fmt.Errorf("stage %s is %s, line says table %d of %s", name, strings.Join(where, ", "), table, p)
	}
	f.cands = kept
	return kind, nil
}

// Best is the newest layout that fits every flow added.
func (f *LayoutFit) Best() *Layout { return f.cands[len(f.cands)-1] }

// Place replaces each flow's kind (as Add returned it) by its stage in
// Best.
func (f *LayoutFit) Place(l *Listing) {
	lay := f.Best()
	for _, d := range l.Datapaths {
		for i := range d.Flows {
			d.Flows[i].Stage = lay.Stage(d.Flows[i].Stage)
		}
	}
}

func parseHeader(line string) (*Datapath, Pipeline, error) {
	rest := strings.TrimPrefix(line, "Datapath: ")
	i := strings.LastIndex(rest, "  Pipeline: ")
	if i < 0 {
		return nil, 0, fmt.Errorf("datapath header without \"Pipeline:\": %q", line)
	}
	var p Pipeline
	switch strings.TrimSpace(rest[i+len("  Pipeline: "):]) {
	case "ingress":
		p = Ingress
	case "egress":
		p = Egress
	default:
		return nil, 0, fmt.Errorf("unknown pipeline in %q", line)
	}
	rest = rest[:i]
	j := strings.LastIndex(rest, " (")
	if j < 0 || !strings.HasSuffix(rest, ")") {
		return nil, 0, fmt.Errorf("datapath header without \"(uuid)\": %q", line)
	}
	d := &Datapath{UUID: rest[j+2 : len(rest)-1]}
	names := rest[:j]
	if k := strings.Index(names, "\" aka \""); k >= 0 {
		d.Name2 = strings.Trim(names[k+len("\" aka \""):], "\"")
		names = names[:k+1]
	}
	d.Name = strings.Trim(names, "\"")
	return d, p, nil
}

// errRouterFlow marks a flow of a logical router stage, which ParseText
// skips: full `ovn-sbctl lflow-list` output has router datapaths too.
var errRouterFlow = errors.New("logical router flow")

func parseFlowLine(line string, pipe Pipeline, fit *LayoutFit) (Flow, error) {
	s := strings.TrimLeft(line, " ")
	if strings.HasPrefix(s, "uuid=") { // ovn-sbctl --uuid
		if i := strings.Index(s, ", "); i >= 0 {
			s = s[i+2:]
		}
	}
	if !strings.HasPrefix(s, "table=") {
		return Flow{}, fmt.Errorf("not a flow line: %q", line)
	}
	open := strings.IndexByte(s, '(')
	closeP := strings.Index(s, "), priority=")
	if open < 0 || closeP < open {
		return Flow{}, fmt.Errorf("flow line without stage name: %q", line)
	}
	stageName := strings.TrimSpace(s[open+1 : closeP])
	table, err := strconv.Atoi(strings.TrimSpace(s[len("table="):open]))
	if err != nil {
		return Flow{}, fmt.Errorf("bad table number in %q", line)
	}
	if strings.HasPrefix(stageName, "lr_") {
		return Flow{}, errRouterFlow
	}
	st, err := fit.Add(stageName, pipe, table)
	if err != nil {
		return Flow{}, err
	}
	s = s[closeP+len("), priority="):]
	m := strings.Index(s, ", match=(")
	if m < 0 {
		return Flow{}, fmt.Errorf("flow line without match: %q", line)
	}
	prio, err := strconv.Atoi(strings.TrimSpace(s[:m]))
	if err != nil {
		return Flow{}, fmt.Errorf("bad priority in %q", line)
	}
	s = s[m+len(", match=("):]
	a := strings.LastIndex(s, "), action=(")
	if a < 0 || !strings.HasSuffix(s, ")") {
		return Flow{}, fmt.Errorf("flow line without action: %q", line)
	}
	return Flow{Stage: st, Priority: prio, Match: s[:a], Actions: s[a+len("), action=(") : len(s)-1]}, nil
}
