package lint

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// WriteText writes the report for a human: one block per finding (severity,
// rule, position, the ACL, the message, the match with a caret under the
// offending character when known, the other ACLs involved, the switches
// and the fix), then a summary line.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	for _, f := range r.Findings {
		a := f.ACLs[0]
		fmt.Fprintf(&b, "%s: %s [%s] %s\n", a.Origin, f.Severity, f.Rule, aclHeader(a))
		fmt.Fprintf(&b, "  %s\n", f.Message)
		if f.Offset != nil {
			b.WriteString(caret(a.Match, *f.Offset))
		}
		for _, o := range f.ACLs[1:] {
			fmt.Fprintf(&b, "  with: %s: %s\n", o.Origin, aclHeader(o))
		}
		if len(f.Switches) > 0 {
			fmt.Fprintf(&b, "  switches: %s\n", strings.Join(f.Switches, ", "))
		}
		fmt.Fprintf(&b, "  fix: %s\n", f.Fix)
	}
	fmt.Fprintf(&b, "%d error(s), %d warning(s), %d info(s) in %d ACL(s) on %d switch(es)\n",
		r.Stats.Errors, r.Stats.Warnings, r.Stats.Infos, r.Stats.ACLs, r.Stats.Switches)
	_, err := io.WriteString(w, b.String())
	return err
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
// "stats": {...}}.
func WriteJSON(w io.Writer, r *Report) error {
	out := struct {
		Findings []Finding `json:"findings"`
		Stats    Stats     `json:"stats"`
	}{r.Findings, r.Stats}
	if out.Findings == nil {
		out.Findings = []Finding{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("lint: writing JSON: %w", err)
	}
	return nil
}
