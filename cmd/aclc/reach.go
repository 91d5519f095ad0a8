package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
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

var reachCmd = &cobra.Command{
	Use:   "reach [FIXTURE] --from PORT --to PORT",
	Short: "The traffic the ACL stages let through from one port to another, as exact packet sets",
	Long: `reach executes the ACL-stage flows aclc compiles for a logical switch
symbolically over sets of packets (package reach) and prints, for the
traffic port --from sends to port --to, every part with its fate: allow,
drop or reject, whether it goes through conntrack and is committed, the
ACLs that decide it (ingress, then egress: owner/name/direction/priority
in text, objects with uuid, owner, owner_type, direction, priority, tier,
action, name, external_ids and pipeline in JSON; "default" with its
stage when no ACL's flow did), the stage where a dropped part ends, its
packets as a compact match over the header fields, and one witness
packet as an ovn-trace microflow. The parts partition the packets: every
packet from --from to --to is in exactly one.

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
priority) is reported "not-exact" with the reason, never guessed.

The NB comes from a YAML fixture (FIXTURE) or a live NB (--nb, else
OVN_NB_DB); the flows are those of its OVN release (--ovn-version to
override).

Output: per part a line with its fate, then its match and its witness
(--format text); or JSON Lines (--format json) with from, to, verdict,
conntrack, committed, acls, stage, reason, match (match_ovn,
match_truncated, match_omitted_terms, match_error) and witness
{microflow, ct}.

Exit status: 0 when every part is exact, 1 on failure to read the NB, 2
on bad input (unknown port, ports of two switches, --from equal to --to,
bad flag), 3 when some part (or the whole pair) is not exact.`,
	Example: `  aclc reach testdata/fixtures/seed-stateless.yaml --from lsp1 --to lsp2
  aclc reach testdata/fixtures/stateful-drop-reject.yaml --from p1 --to p2 --format json`,
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
	f.StringVar(&reachOpts.from, "from", "", "the port the traffic enters the switch from (required)")
	f.StringVar(&reachOpts.to, "to", "", "the port the traffic is sent to (required)")
	f.StringVar(&reachOpts.format, "format", "text", "output format: text or json (JSON Lines)")
	reachNB.register(reachCmd)
	reachNB.registerRelease(reachCmd)
	rootCmd.AddCommand(reachCmd)
}

// reachLine is one part in JSON Lines output.
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
}

func runReach(cmd *cobra.Command, args []string) error {
	if reachOpts.format != "text" && reachOpts.format != "json" {
		return withCode(2, fmt.Errorf("--format: want text or json, got %q", reachOpts.format))
	}
	if reachOpts.from == "" || reachOpts.to == "" {
		return withCode(2, errors.New("give both --from and --to"))
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
	ct := strings.ReplaceAll(trace.CTState(reach.DefaultCT).String(), "|", ",")
	var lines []reachLine
	res, err := e.Reach(reachOpts.from, reachOpts.to, reach.Options{})
	var ie *reach.InputError
	var ne *reach.NotExactError
	switch {
	case errors.As(err, &ie):
		return withCode(2, err)
	case errors.As(err, &ne):
		lines = append(lines, reachLine{From: reachOpts.from, To: reachOpts.to, Verdict: reach.NotExact, Reason: ne.Reason})
	case err != nil:
		return err
	default:
		for _, p := range res.Parts {
			l := reachLine{From: res.From, To: res.To, Verdict: p.Verdict, Conntrack: p.Conntrack, Committed: p.Committed,
				Stage: p.Stage, Reason: p.Reason, Witness: &reachWitness{Microflow: p.Witness, CT: repeat(ct, p.Recirculations)}}
			l.ACLs = e.DecidingACLs(p)
			l.Match, l.MatchTruncated, l.MatchOmitted, l.MatchError = p.Match.Text, p.Match.Truncated(), p.Match.Omitted, p.MatchError
			if l.Match != "" {
				l.MatchOVN = &p.Match.OVN
			}
			lines = append(lines, l)
		}
	}
	w := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // microflows are full of &&
	inexact := false
	for _, l := range lines {
		inexact = inexact || l.Verdict == reach.NotExact
		if reachOpts.format == "json" {
			if err := enc.Encode(l); err != nil {
				return err
			}
			continue
		}
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
		}
		fmt.Fprintln(w)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if inexact {
		return exitSilently(3)
	}
	return nil
}

// repeat is n copies of s (an empty list, not null, for none).
func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
