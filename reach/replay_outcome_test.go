package reach

import (
	"regexp"
	"strings"
)

// This file reads ovn-trace --summary output: the fate of a replayed
// witness at its to port.

// The outcomes of a replay for the to port.
const (
	outcomeAllow  = string(Allow)
	outcomeDrop   = string(Drop)
	outcomeReject = string(Reject)
	// outcomeElsewhere: the ingress pipeline output the packet, but to
	// no egress of the to port.
	outcomeElsewhere = "elsewhere"
)

// traceBlock is one `header {' ... `};' block of ovn-trace --summary.
type traceBlock struct {
	header string
	lines  []string
	kids   []*traceBlock
}

// parseSummary reads ovn-trace --summary output into its blocks.
func parseSummary(s string) *traceBlock {
	root := &traceBlock{}
	stack := []*traceBlock{root}
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		top := stack[len(stack)-1]
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasSuffix(l, "{"):
			b := &traceBlock{header: strings.TrimSpace(strings.TrimSuffix(l, "{"))}
			top.kids = append(top.kids, b)
			stack = append(stack, b)
		case (l == "};" || l == "}") && len(stack) > 1:
			stack = stack[:len(stack)-1]
		default:
			top.lines = append(top.lines, l)
		}
	}
	return root
}

// replyHeaders are the blocks of a reject's generated reply.
var replyHeaders = map[string]bool{"tcp_reset": true, "icmp4": true, "icmp6": true, "sctp_abort": true}

var egressHeader = regexp.MustCompile(`^egress\(dp="[^"]*", inport="[^"]*", outport="([^"]*)"\)$`)

// outcomeFor reads ovn-trace --summary output for the packet's fate at
// port to: allow when the egress pipeline of to outputs it to to, reject
// when a reply was generated in the ingress pipeline or in to's egress,
// drop when it ended in the ingress pipeline, in to's egress or without
// any output, elsewhere when the ingress pipeline output it to other
// ports only.
func outcomeFor(summary, to string) string {
	root := parseSummary(summary)
	var egress, others []*traceBlock
	rejected := false
	var walk func(b *traceBlock)
	walk = func(b *traceBlock) {
		for _, k := range b.kids {
			switch {
			case replyHeaders[k.header]:
				rejected = true
			case egressHeader.MatchString(k.header):
				if egressHeader.FindStringSubmatch(k.header)[1] == to {
					egress = append(egress, k)
				} else {
					others = append(others, k)
				}
			default:
				walk(k)
			}
		}
	}
	walk(root)
	switch {
	case len(egress) > 0:
		return egressOutcome(egress[0], to)
	case rejected:
		return outcomeReject
	case len(others) > 0:
		return outcomeElsewhere
	}
	return outcomeDrop
}

// egressOutcome is the fate of the packet in egress pipeline b of port to.
func egressOutcome(b *traceBlock, to string) string {
	out := `/* output to "` + to + `"`
	var find func(b *traceBlock) string
	find = func(b *traceBlock) string {
		for _, l := range b.lines {
			if strings.HasPrefix(l, out) || l == `output("`+to+`");` {
				return outcomeAllow
			}
		}
		for _, k := range b.kids {
			if replyHeaders[k.header] {
				return outcomeReject
			}
			if o := find(k); o != outcomeDrop {
				return o
			}
		}
		return outcomeDrop
	}
	return find(b)
}
