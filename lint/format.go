package lint

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// groupMin is the number of findings with one cause from which the text
// report prints them as one group; listMax bounds the ACLs, switches and
// members a text finding lists before saying how many more there are.
const (
	groupMin = 3
	listMax  = 5
)

// WriteText writes the report for a human: one block per finding (severity,
// rule, position, the ACL, the message, the match with a caret under the
// offending character when known, the other ACLs involved, the switches
// and the fix), then a summary line. Findings that repeat one cause (same
// rule, severity, message and fix) for several ACLs are one block: the
// first ACL, how many there are and the first few; long lists of ACLs and
// switches are cut to their first few with a count. --format json keeps
// every finding and every member.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	groups := groupFindings(r.Findings)
	for _, g := range groups {
		f := g[0]
		a := f.ACLs[0]
		fmt.Fprintf(&b, "%s: %s [%s] %s\n", a.Origin, f.Severity, f.Rule, aclHeader(a))
		if len(g) > 1 {
			fmt.Fprintf(&b, "  and %d more ACL(s) with the same finding:\n", len(g)-1)
			for _, o := range g[1:min(len(g), listMax+1)] {
				fmt.Fprintf(&b, "    %s: %s\n", o.ACLs[0].Origin, aclHeader(o.ACLs[0]))
			}
			if len(g) > listMax+1 {
				fmt.Fprintf(&b, "    ... %d more (--format json lists them all)\n", len(g)-listMax-1)
			}
		}
		fmt.Fprintf(&b, "  %s\n", f.Message)
		if f.Offset != nil && len(g) == 1 {
			b.WriteString(caret(a.Match, *f.Offset))
		}
		with := f.ACLs[1:]
		for _, o := range with[:min(len(with), listMax)] {
			fmt.Fprintf(&b, "  with: %s: %s\n", o.Origin, aclHeader(o))
			if o.How != "" {
				fmt.Fprintf(&b, "        %s\n", o.How)
			}
		}
		if len(with) > listMax {
			fmt.Fprintf(&b, "  with: ... %d more ACL(s)\n", len(with)-listMax)
		}
		var sws []string
		for _, m := range g {
			sws = append(sws, m.Switches...)
		}
		slices.Sort(sws)
		sws = slices.Compact(sws)
		if len(sws) > listMax {
			fmt.Fprintf(&b, "  switches: %s and %d more\n", strings.Join(sws[:listMax], ", "), len(sws)-listMax)
		} else if len(sws) > 0 {
			fmt.Fprintf(&b, "  switches: %s\n", strings.Join(sws, ", "))
		}
		fmt.Fprintf(&b, "  fix: %s\n", f.Fix)
	}
	fmt.Fprintf(&b, "%d error(s), %d warning(s), %d info(s) in %d ACL(s) on %d switch(es)\n",
		r.Stats.Errors, r.Stats.Warnings, r.Stats.Infos, r.Stats.ACLs, r.Stats.Switches)
	_, err := io.WriteString(w, b.String())
	return err
}

// groupFindings groups the findings with one cause (rule, severity,
// message, fix, and the same other ACLs) when there are at least groupMin
// of them; each group stays where its first member was.
func groupFindings(fs []Finding) [][]Finding {
	type key struct{ rule, sev, msg, fix, with string }
	keyOf := func(f Finding) key {
		var w strings.Builder
		for _, a := range f.ACLs[1:] {
			w.WriteString(a.UUID)
			w.WriteByte(',')
		}
		return key{f.Rule, f.Severity.String(), f.Message, f.Fix, w.String()}
	}
	count := map[key]int{}
	for _, f := range fs {
		count[keyOf(f)]++
	}
	at := map[key]int{}
	var out [][]Finding
	for _, f := range fs {
		k := keyOf(f)
		if count[k] < groupMin {
			out = append(out, []Finding{f})
			continue
		}
		if i, ok := at[k]; ok {
			out[i] = append(out[i], f)
			continue
		}
		at[k] = len(out)
		out = append(out, []Finding{f})
	}
	return out
}

// aclHeader is `ACL "name" on Port_Group pg (from-lport priority 10 drop)'.
func aclHeader(a ACLRef) string {
	id := "ACL " + a.UUID
	if a.Name != "" {
		id = fmt.Sprintf("ACL %q", a.Name)
	}
	if a.Owner != "" {
		id += " on " + a.Owner
	}
	return fmt.Sprintf("%s (%s priority %d %s)", id, a.Direction, a.Priority, a.Action)
}

// caret prints the match and a `^' under the character at byte offset ofs.
func caret(match string, ofs int) string {
	if ofs < 0 {
		ofs = 0
	}
	if ofs > len(match) {
		ofs = len(match)
	}
	pad := utf8.RuneCountInString(match[:ofs])
	return "    " + match + "\n    " + strings.Repeat(" ", pad) + "^\n"
}

// WriteJSON writes the report as one JSON object {"findings": [...],
// "stats": {...}}, indented. The findings are marshalled a chunk at a time
// on every core and written in order as each chunk is ready (at 50k ACLs
// the 12k-20k findings, 19-45 MB of JSON, took 0.3-0.4 s on one core, and
// the whole report marshalled at once took several copies of its text).
func WriteJSON(w io.Writer, r *Report) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString("{\n  \"findings\": [")
	// A chunk's buffer is reused once written: grown from nothing for each
	// chunk (a few hundred KB), they took a third of WriteJSON's CPU.
	var bufs sync.Pool
	err := eachChunk(len(r.Findings), func(start, end int) ([]byte, error) {
		var b []byte
		if p, ok := bufs.Get().(*[]byte); ok {
			b = (*p)[:0]
		}
		for i := start; i < end; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, "\n    "...)
			b = appendFinding(b, &r.Findings[i])
		}
		return b, nil
	}, func(b []byte) {
		bw.Write(b)
		bufs.Put(&b)
	})
	if err != nil {
		return fmt.Errorf("lint: writing JSON: %w", err)
	}
	if len(r.Findings) > 0 {
		bw.WriteString("\n  ")
	}
	st, err := json.MarshalIndent(r.Stats, "  ", "  ")
	if err != nil {
		return fmt.Errorf("lint: writing JSON: %w", err)
	}
	bw.WriteString("],\n  \"stats\": ")
	bw.Write(st)
	bw.WriteString("\n}\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("lint: writing JSON: %w", err)
	}
	return nil
}

// jsonChunk is how many findings one WriteJSON worker marshals at a time.
const jsonChunk = 128

// eachChunk calls format on [start, end) chunks of n items, up to
// GOMAXPROCS at once and a few chunks ahead of the writer, and hands the
// results to write in order. It returns format's first error, after
// which it writes nothing more.
func eachChunk(n int, format func(start, end int) ([]byte, error), write func([]byte)) error {
	chunks := (n + jsonChunk - 1) / jsonChunk
	type result struct {
		b   []byte
		err error
	}
	done := make([]chan result, chunks)
	for i := range done {
		done[i] = make(chan result, 1)
	}
	ahead := make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	go func() {
		for i := range chunks {
			ahead <- struct{}{}
			go func() {
				b, err := format(i*jsonChunk, min(n, (i+1)*jsonChunk))
				done[i] <- result{b, err}
			}()
		}
	}()
	var first error
	for i := range chunks {
		res := <-done[i]
		<-ahead
		if first == nil && res.err != nil {
			first = res.err
		}
		if first == nil {
			write(res.b)
		}
	}
	return first
}
