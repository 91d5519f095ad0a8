package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Summary returns the one-line summary: the conntrack operations in order,
// the verdict, and the flows (normally NB ACLs) that decided it.
func (r *Result) Summary() string {
	var b strings.Builder
	if len(r.CTOps) == 0 {
		b.WriteString("no conntrack")
	} else {
		b.WriteString(strings.Join(r.CTOps, " "))
	}
	b.WriteString(" => ")
	switch r.Verdict {
	case VerdictOutput:
		for i, o := range r.Outputs {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("output(" + strconv.Quote(o) + ")")
		}
	case VerdictNotTraced:
		b.WriteString("not traced: " + r.NotTraced)
	default:
		b.WriteString(string(r.Verdict))
	}
	writeClause(&b, "; decided by ", ", then ", r.Decisions, r.decisionText)
	writeClause(&b, "; conntrack skipped by ", ", ", r.Stateless, r.decisionText)
	writeClause(&b, "; passed down by ", ", then ", r.Passed, r.decisionText)
	writeClause(&b, "; sampled at ", ", ", r.Samples, func(s Sample) string {
		return r.pipelineName(Decision{Datapath: s.Datapath, Pipeline: s.Pipeline}) + " " + s.String()
	})
	if r.Truncated {
		b.WriteString(" (trace truncated)")
	}
	return b.String()
}

// writeClause writes one clause of the summary: intro, then the items
// joined by sep; nothing when there are none.
func writeClause[T any](b *strings.Builder, intro, sep string, items []T, text func(T) string) {
	for i, it := range items {
		if i == 0 {
			b.WriteString(intro)
		} else {
			b.WriteString(sep)
		}
		b.WriteString(text(it))
	}
}

// decisionText names a decision with its pipeline, as the summary prints it.
func (r *Result) decisionText(d Decision) string {
	return r.pipelineName(d) + ": " + d.String()
}

// pipelineName is "ingress", or "sw1 ingress" when the trace went
// through more than one switch.
func (r *Result) pipelineName(d Decision) string {
	for _, o := range append(r.Decisions, r.Stateless...) {
		if o.Datapath != d.Datapath {
			return d.Datapath + " " + d.Pipeline
		}
	}
	return d.Pipeline
}

// WriteMinimal writes the --minimal format: a "#" line with the packet,
// then the trace nested as `ovn-trace --minimal` nests it. Warnings are
// left to the caller (Result.Warnings).
func (r *Result) WriteMinimal(w io.Writer) error {
	_, err := fmt.Fprintf(w, "# %s\n%s", r.Packet, r.Minimal())
	return err
}

// WriteSummary writes the --summary format: one line. Warnings are left
// to the caller (Result.Warnings).
func (r *Result) WriteSummary(w io.Writer) error {
	_, err := fmt.Fprintln(w, r.Summary())
	return err
}

func (r *Result) writeWarnings(w io.Writer) error {
	for _, s := range r.Warnings {
		if _, err := fmt.Fprintf(w, "# warning: %s\n", s); err != nil {
			return err
		}
	}
	return nil
}

// WriteDetailed writes the --detailed format: like ovn-trace's default
// output, every table with the flow that matched (priority, match,
// actions) and, for flows generated from an NB ACL, that ACL.
func (r *Result) WriteDetailed(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", r.Packet)
	if len(r.CTStates) > 0 {
		fmt.Fprintf(&b, "# --ct: %s\n", strings.Join(r.CTStates, ", "))
	}
	if len(r.PassThrough) > 0 {
		fmt.Fprintf(&b, "# note: stages outside aclc's compiled set pass the packet through: %s\n", strings.Join(r.PassThrough, ", "))
	}
	if len(r.Modelled) > 0 {
		fmt.Fprintf(&b, "# note: modelled from the NB (not compiled): %s\n", strings.Join(r.Modelled, ", "))
	}
	printDetails(&b, r.Root, 0)
	fmt.Fprintf(&b, "\n# summary: %s\n", r.Summary())
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	return r.writeWarnings(w)
}

func isTerminal(t NodeType) bool {
	switch t {
	case NodeOutput, NodeModify, NodeAction, NodeError:
		return true
	}
	return false
}

// printDetails is ovn-trace's ovntrace_node_print_details, with the NB
// ACL of each compiled ACL flow printed under its table line.
func printDetails(b *strings.Builder, nodes []*Node, level int) {
	for i, n := range nodes {
		if n.Type == NodeModify {
			continue
		}
		more := 0
		if i < len(nodes)-1 || isTerminal(n.Type) {
			more = 1
		}
		title := n.Type == NodePipeline || n.Type == NodeTransformation
		if title {
			b.WriteByte('\n')
		}
		indent := strings.Repeat(" ", (level+more)*4)
		b.WriteString(indent + n.Text)
		if f := n.Flow; f != nil && f.Origin == originModelled {
			b.WriteString(" [modelled]")
		}
		b.WriteByte('\n')
		if title {
			b.WriteString(indent + strings.Repeat("-", len(n.Text)) + "\n")
		}
		sub := level + 2*more
		if f := n.Flow; f != nil {
			in := strings.Repeat(" ", (sub+1)*4)
			if f.ACL != nil {
				fmt.Fprintf(b, "%s/* %s", in, f.ACL)
				if f.ACL.Origin != "" {
					fmt.Fprintf(b, " at %s", f.ACL.Origin)
				}
				b.WriteString(" */\n")
			} else if f.NB != "" {
				fmt.Fprintf(b, "%s/* %s */\n", in, f.NB)
			}
			for _, t := range f.Tie {
				fmt.Fprintf(b, "%s/* tie: also matches at this priority: %s */\n", in, t)
			}
		}
		printDetails(b, n.Subs, sub)
	}
}

// WriteJSON writes the result as one JSON document.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(r)
}
