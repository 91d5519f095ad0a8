package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/pset"
	"github.com/aclc/aclc/reach"
	"github.com/aclc/aclc/trace"
)

var reachOpts struct {
	from, to, format string
}

var reachNB nbFlags

// reachFormats are the values of --format.
var reachFormats = []string{"text", "json", "csv", "matrix", "dot"}

var reachCmd = &cobra.Command{
	Use:   "reach [FIXTURE] [--from ENDPOINT] [--to ENDPOINT]",
	Short: "The traffic the ACL stages let through between ports, as exact packet sets",
	Long: `reach executes the ACL-stage flows aclc compiles for a logical switch
symbolically over sets of packets (package reach) and prints, for the
traffic each --from port sends to each --to port, every part with its
fate: allow, drop or reject, whether it goes through conntrack and is
committed, the ACLs that decide it (ingress, then egress:
owner/name/direction/priority in text, objects with uuid, owner,
owner_type, direction, priority, tier, action, name, external_ids and
pipeline in JSON; "default" with its stage when no ACL's flow did), the
stage where a dropped part ends, its packets as a compact match over the
header fields, and one witness packet as an ovn-trace microflow. The parts partition the
packets: every packet from --from to --to is in exactly one.

Endpoints: --from and --to each take
  PORT    a Logical_Switch_Port name;
  @PG     the ports of port group PG;
  $AS     the ports with an address in address set AS ($AS as a match
          resolves it: an Address_Set or a port group's <pg>_ip4/_ip6): a
          port is in it when one of its IP addresses (those of its
          "MAC IP..." addresses, not the dynamic ones, and of
          dynamic_addresses) equals an address of the set or lies in one
          of its CIDR prefixes; MAC entries match no port. A set that
          matches no port is an error (exit 2).
Left out, an endpoint is every port of the NB except those of type
router (which stand for the routers joining switches). reach answers every
ordered pair of distinct ports (from, to). A pair on two switches that no
logical router joins has no path ("no path", not an error); a pair on two
switches joined by routers is not exact: reach does not execute routed
paths yet.

A witness is the packet --from would really send to --to wherever the
part allows it: --from's MAC and first IPv4/IPv6 address as source,
--to's as destination (eth.dst --to's MAC, so that the L2 lookup outputs
it to --to; broadcast for a port without a MAC, a MAC no port has for a
port with "unknown" addresses), tcp before udp before icmp, with example
ports (tcp.dst 80, udp.dst 53, source port 40000, a SYN); only what the
part forces differs. It names no outport: ovn-trace's L2 lookup sets it
from eth.dst (an outport in an ovn-trace microflow is overwritten there,
and the ingress ACLs would see it, which a real packet never shows them).
Where the part pins eth.dst to a MAC that does not lead to --to, the
witness says "undelivered": replayed, it goes elsewhere.

The match is exact: with the pair's inport and outport and the metadata
of an entering packet (left out), it is the part's set (checked by
converting it back). It factors out common constraints and prints ranges,
CIDRs and complements where shorter; a complement of a nominal field
(!(tcp && tcp.dst == 22)) is not OVN's own syntax (match_ovn false in
JSON). Longer than 64 terms, it is cut to its first ones and says "... and
N more terms" (match_truncated in JSON).

Conntrack recirculations give the first packet of a connection's state,
new|trk: replay a witness with 'aclc trace FIXTURE MICROFLOW' or ovn-trace
and one --ct for each entry of its JSON witness's ct list (the
recirculations on its path, in order). What reach cannot execute exactly (load
balancers, port security, mirrors, router and other non-VIF ports, ARP/ND
responders, network-function redirects, overlapping flows of equal
priority, routed pairs) is reported "not-exact" with the reason, never
guessed.

The NB comes from a YAML fixture (FIXTURE) or a live NB (--nb, else
OVN_NB_DB); the flows are those of its OVN release (--ovn-version to
override).

Output (--format):
  text    one line per part, its match and witness lines under it
          (default);
  json    JSON Lines, one object per part: from, to, verdict
          (allow|drop|reject|not-exact, or no-path for a pair without a
          path), conntrack, committed, acls, stage, reason, match
          (match_ovn, match_truncated, match_omitted_terms, match_error)
          and witness {microflow, ct, undelivered};
  csv     one row per part with the fields of json (witness.microflow and
          witness.ct as columns witness_microflow, witness_ct; lists
          joined with ';'), a header row first;
  matrix  a Markdown table, rows the --from ports, columns the --to ports,
          each cell the pair in a word: all (every packet reach decides
          exactly is allowed), none, part, n/e (the pair is not exact), -
          (no path); a * after the word: some packets of the pair are not
          exact (ARP/ND always are), the word is about the others;
  dot     a Graphviz digraph of the ports, an edge labelled with the
          matrix's word for every pair that allows some traffic or is not
          exact (dashed).
With many pairs and stderr a terminal, a progress line goes to stderr.

Exit status: 0 when every part is exact, 1 on failure to read the NB, 2
on bad input (unknown port, port group or address set, an address set
matching no port, --from and --to the same single port, bad flag), 3 when
some part (or a whole pair) is not exact, after printing everything.`,
	Example: `  aclc reach testdata/fixtures/seed-stateless.yaml --from lsp1 --to lsp2
  aclc reach testdata/fixtures/stateful-drop-reject.yaml --from p1 --to p2 --format json
  aclc reach testdata/fixtures/pg-multi-switch.yaml --from @pg_web --format csv
  aclc reach testdata/fixtures/address-sets.yaml --format matrix`,
	Args: func(cmd *cobra.Command, args []string) error {
		if len(args) > 1 {
			return withCode(2, fmt.Errorf("%s: want [FIXTURE], got %d arguments", cmd.CommandPath(), len(args)))
		}
		return nil
	},
	RunE: runReach,
}

func init() {
	f := reachCmd.Flags()
	f.StringVar(&reachOpts.from, "from", "", "where the traffic comes from: PORT, @PORT_GROUP or $ADDRESS_SET (default: every port but router ports)")
	f.StringVar(&reachOpts.to, "to", "", "where the traffic goes: PORT, @PORT_GROUP or $ADDRESS_SET (default: every port but router ports)")
	f.StringVar(&reachOpts.format, "format", "text", "output format: "+strings.Join(reachFormats, ", "))
	reachNB.register(reachCmd)
	reachNB.registerRelease(reachCmd)
	rootCmd.AddCommand(reachCmd)
}

// reachLine is one part in JSON Lines and CSV output.
type reachLine struct {
	From      string        `json:"from"`
	To        string        `json:"to"`
	Verdict   reach.Verdict `json:"verdict"`
	Conntrack bool          `json:"conntrack"`
	Committed bool          `json:"committed"`
	ACLs      []reach.ACL   `json:"acls,omitempty"`
	Stage     string        `json:"stage,omitempty"`
	Reason    string        `json:"reason,omitempty"`
	// Match is the part's compact header-space form (reach.Part.Match);
	// MatchOVN whether OVN's parser accepts it (not when it negates a
	// nominal test); MatchTruncated and MatchOmitted say it is only its
	// first terms and how many more there are; MatchError why there is
	// none.
	Match          string        `json:"match,omitempty"`
	MatchOVN       *bool         `json:"match_ovn,omitempty"`
	MatchTruncated bool          `json:"match_truncated,omitempty"`
	MatchOmitted   int64         `json:"match_omitted_terms,omitempty"`
	MatchError     string        `json:"match_error,omitempty"`
	Witness        *reachWitness `json:"witness,omitempty"`
}

type reachWitness struct {
	Microflow string `json:"microflow"`
	// CT are the --ct arguments that replay the witness with ovn-trace
	// (or aclc trace): the ct_state of each recirculation on its path,
	// in order (none when it did not go through conntrack).
	CT []string `json:"ct"`
	// Undelivered says why no packet of the part reaches the to port
	// through the L2 lookup (reach.Part.Undelivered): replayed, the
	// witness goes elsewhere; omitted when it is delivered to to.
	Undelivered string `json:"undelivered,omitempty"`
}

// noPathVerdict is the verdict of the line of a pair without a path.
const noPathVerdict reach.Verdict = "no-path"

func runReach(cmd *cobra.Command, args []string) error {
	if !slices.Contains(reachFormats, reachOpts.format) {
		return withCode(2, fmt.Errorf("--format: want one of %s, got %q", strings.Join(reachFormats, ", "), reachOpts.format))
	}
	snap, err := loadSnapshot(cmd, args, &reachNB)
	if err != nil {
		return err
	}
	flows := compile.CompileWith(snap, compile.Options{Release: snap.Release}).Flows
	e, err := reach.New(snap, flows)
	if err != nil {
		return err
	}
	froms, err := reachEndpoints(e, "--from", reachOpts.from)
	if err != nil {
		return err
	}
	tos, err := reachEndpoints(e, "--to", reachOpts.to)
	if err != nil {
		return err
	}
	if len(froms) == 1 && len(tos) == 1 && froms[0] == tos[0] {
		return withCode(2, fmt.Errorf("--from and --to are the same port %q (OVN does not output a packet to its inport)", froms[0]))
	}
	w := bufio.NewWriter(os.Stdout)
	out := newReachWriter(w, e, reachOpts.format, froms, tos)
	prog := newProgress(os.Stderr, reach.CountPairs(froms, tos))
	inexact := false
	err = e.Pairs(froms, tos, reach.Options{}, func(o *reach.Outcome) error {
		prog.step()
		inexact = inexact || !o.Exact()
		return out.pair(o)
	})
	prog.done()
	var ie *reach.InputError
	if errors.As(err, &ie) {
		return withCode(2, err)
	}
	if err != nil {
		return err
	}
	if err := out.finish(); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if inexact {
		return exitSilently(3)
	}
	return nil
}

// reachEndpoints resolves the value of flag name (every port when empty).
func reachEndpoints(e *reach.Engine, name, sel string) ([]string, error) {
	if sel == "" {
		return e.DefaultPorts(), nil
	}
	ports, err := e.Endpoints(sel)
	var ie *reach.InputError
	if errors.As(err, &ie) {
		return nil, withCode(2, fmt.Errorf("%s %s: %w", name, sel, err))
	}
	return ports, err
}

// reachLines returns the lines of one pair: one per part.
func reachLines(e *reach.Engine, o *reach.Outcome) []reachLine {
	switch {
	case o.Path == reach.NoPath:
		return []reachLine{{From: o.From, To: o.To, Verdict: noPathVerdict,
			Reason: fmt.Sprintf("switches %s and %s are not joined by a logical router", o.FromSwitch, o.ToSwitch)}}
	case o.Result == nil:
		return []reachLine{{From: o.From, To: o.To, Verdict: reach.NotExact, Reason: o.NotExact.Reason}}
	}
	ct := strings.ReplaceAll(trace.CTState(reach.DefaultCT).String(), "|", ",")
	var lines []reachLine
	for _, p := range o.Result.Parts {
		l := reachLine{From: o.From, To: o.To, Verdict: p.Verdict, Conntrack: p.Conntrack, Committed: p.Committed,
			Stage: p.Stage, Reason: p.Reason, Witness: &reachWitness{Microflow: p.Witness, CT: repeat(ct, p.Recirculations), Undelivered: p.Undelivered}}
		if p.Verdict != reach.NotExact {
			l.ACLs = e.DecidingACLs(p)
		}
		l.Match, l.MatchTruncated, l.MatchOmitted, l.MatchError = p.Match.Text, p.Match.Truncated(), p.Match.Omitted, p.MatchError
		if l.Match != "" {
			l.MatchOVN = &p.Match.OVN
		}
		lines = append(lines, l)
	}
	return lines
}

// writeReachText writes one line in text form.
func writeReachText(w io.Writer, l reachLine) {
	fmt.Fprintf(w, "%s -> %s: %s", l.From, l.To, l.Verdict)
	if l.Conntrack {
		fmt.Fprint(w, " conntrack")
	}
	if l.Committed {
		fmt.Fprint(w, " committed")
	}
	if len(l.ACLs) > 0 {
		names := make([]string, len(l.ACLs))
		for i, a := range l.ACLs {
			names[i] = a.String()
		}
		fmt.Fprintf(w, " acls=%s", strings.Join(names, ","))
	}
	if l.Stage != "" && l.Verdict != reach.Allow {
		fmt.Fprintf(w, " stage=%s", l.Stage)
	}
	if l.Reason != "" {
		fmt.Fprintf(w, " (%s)", l.Reason)
	}
	if l.Match != "" || l.MatchError != "" {
		fmt.Fprintf(w, "\n    match: %s", pset.Description{Text: l.Match, Omitted: l.MatchOmitted}.String()+l.MatchError)
	}
	if l.Witness != nil {
		fmt.Fprintf(w, "\n    witness: %s", l.Witness.Microflow)
		if l.Witness.Undelivered != "" {
			fmt.Fprintf(w, "\n    undelivered: %s", l.Witness.Undelivered)
		}
	}
	fmt.Fprintln(w)
}

// repeat is n copies of s (an empty list, not null, for none).
func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
