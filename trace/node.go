package trace

import (
	"strings"
)

// NodeType classifies trace nodes the way ovn-trace does; it decides what
// each output format keeps.
type NodeType int

// Node types, as in ovn-trace (enum ovntrace_node_type).
const (
	// NodeOutput is a packet leaving the switch or an omitted output.
	NodeOutput NodeType = iota
	// NodeModify is a visible change to the packet: output("p"), a field
	// rewrite, chk_lb_hairpin results.
	NodeModify
	// NodeAction is one executed logical-flow action.
	NodeAction
	// NodeError is a problem found while tracing.
	NodeError
	// NodePipeline opens a pipeline: ingress(...) or egress(...).
	NodePipeline
	// NodeTable is one logical table and the flow that matched there.
	NodeTable
	// NodeTransformation is a recirculation (ct_next, ct_lb_mark,
	// ct_commit_nat) or a generated packet (tcp_reset, icmp4, LOG).
	NodeTransformation
)

var nodeTypeNames = [...]string{"output", "modify", "action", "error", "pipeline", "table", "transformation"}

// String returns the lower-case type name used in JSON.
func (t NodeType) String() string { return nodeTypeNames[t] }

// MarshalText implements encoding.TextMarshaler.
func (t NodeType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// Node is one step of a trace: a tree like ovn-trace's.
type Node struct {
	Type NodeType `json:"type"`
	// Text is the line ovn-trace would print for the node.
	Text string `json:"text"`
	// Flow is set on table nodes whose table had a matching flow.
	Flow *FlowInfo `json:"flow,omitempty"`
	Subs []*Node   `json:"subs,omitempty"`
}

// FlowInfo describes the flow that matched in one table.
type FlowInfo struct {
	Stage    string `json:"stage"`
	Table    int    `json:"table"`
	Priority int    `json:"priority"`
	Match    string `json:"match"`
	Actions  string `json:"actions"`
	// Origin says where the flow comes from: "compiled" (aclc's ACL
	// stages) or "modelled" (a non-ACL stage aclc models for the trace:
	// ls_in_lb from the NB load balancers, ls_in_l2_lkup from the port
	// addresses, ...).
	Origin string `json:"origin"`
	// ACL is the NB ACL the flow was generated from, if any.
	ACL *ACLInfo `json:"acl,omitempty"`
	// Source is the UUID of the NB row (ACL, load balancer) behind the flow.
	Source string `json:"source,omitempty"`
	// Tie lists the other flows that match at the same priority with
	// different actions: OVN's choice among them is undefined.
	Tie []string `json:"tie,omitempty"`
	// NB describes the router's NB row behind a router flow (a static
	// route, a policy, a router port).
	NB string `json:"nb,omitempty"`
}

func (n *Node) add(t NodeType, text string) *Node {
	c := &Node{Type: t, Text: text}
	n.Subs = append(n.Subs, c)
	return c
}

func (n *Node) clone() *Node {
	c := &Node{Type: n.Type, Text: n.Text, Flow: n.Flow}
	for _, s := range n.Subs {
		c.Subs = append(c.Subs, s.clone())
	}
	return c
}

// prune replaces every node for which drop returns true by its children,
// recursively (ovn-trace's ovntrace_node_prune_hard/_summary).
func prune(nodes []*Node, drop func(*Node) bool) []*Node {
	var out []*Node
	for _, n := range nodes {
		n.Subs = prune(n.Subs, drop)
		if drop(n) {
			out = append(out, n.Subs...)
		} else {
			out = append(out, n)
		}
	}
	return out
}

// printNested prints nodes as ovn-trace's --minimal and --summary do:
// "name {" children "};", or "name;" without children.
func printNested(b *strings.Builder, nodes []*Node, level int) {
	for _, n := range nodes {
		if n.Type == NodeAction && strings.HasPrefix(n.Text, "next(") {
			continue
		}
		b.WriteString(strings.Repeat("    ", level))
		b.WriteString(n.Text)
		if len(n.Subs) > 0 {
			b.WriteString(" {\n")
			printNested(b, n.Subs, level+1)
			b.WriteString(strings.Repeat("    ", level))
			b.WriteByte('}')
		}
		if n.Type != NodeAction {
			b.WriteByte(';')
		}
		b.WriteByte('\n')
	}
}

func cloneAll(nodes []*Node) []*Node {
	out := make([]*Node, len(nodes))
	for i, n := range nodes {
		out[i] = n.clone()
	}
	return out
}

// Minimal returns the trace as `ovn-trace --minimal` prints it (without
// the leading "# flow" line): only recirculations, generated packets,
// visible packet changes and errors, nested.
func (r *Result) Minimal() string {
	nodes := prune(cloneAll(r.Root), func(n *Node) bool {
		switch n.Type {
		case NodeAction, NodePipeline, NodeTable, NodeOutput:
			return true
		}
		return false
	})
	var b strings.Builder
	printNested(&b, nodes, 0)
	return b.String()
}

// Nested returns the trace as `ovn-trace --summary` prints it: every
// action, nested by pipeline and recirculation.
func (r *Result) Nested() string {
	nodes := prune(cloneAll(r.Root), func(n *Node) bool {
		return n.Type == NodeModify || n.Type == NodeTable
	})
	var b strings.Builder
	printNested(&b, nodes, 0)
	return b.String()
}
