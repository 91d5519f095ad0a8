package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/internal/ovsdbconn"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/sbschema"
	"github.com/aclc/aclc/trace"
)

var traceOpts struct {
	ct        []string
	lbDst     string
	outport   string
	minimal   bool
	summary   bool
	detailed  bool
	format    string
	maxRecirc int
	selectID  int
	sb        string
	release   string
	chassis   chassisFlag
}

var traceNB nbFlags

var traceCmd = &cobra.Command{
	Use:   "trace [FIXTURE] [DATAPATH] MICROFLOW",
	Short: "Trace a packet through the ACL-stage flows aclc compiles, like ovn-trace",
	Long: `trace follows one packet through the logical flows aclc compiles for a
logical switch, the way ovn-trace follows it through the Southbound DB:
the ingress pipeline, then the egress pipeline of the port the packet is
sent to. At each table the highest-priority matching flow is taken and its
actions run: register loads, next, ct_next, ct_lb_mark, ct_commit,
ct_commit_nat, drop, reject, log. Conntrack recirculations take their
ct_state from successive --ct values, as ovn-trace's --ct does
(ct_next sets the state, ct_lb_mark adds it; once the --ct values run out
est|trk is used, marked "/* default (use --ct to customize) */").

The NB comes from a YAML fixture (FIXTURE) or a live NB (--nb, else
OVN_NB_DB). MICROFLOW is an ovn-trace microflow, e.g.
  inport == "lsp1" && eth.src == 00:00:00:00:00:01 && eth.dst == 00:00:00:00:00:02 &&
  ip4.src == 10.0.0.1 && ip4.dst == 10.0.0.2 && tcp && tcp.dst == 80
DATAPATH (logical switch name or UUID) may be left out: the inport's
switch is used. An inport naming a router port starts the trace in that
router's ingress pipeline (a packet from a peer router or from the
physical network behind a gateway port), as ovn-trace does.

The flows are those of the NB's OVN release: --ovn-version, else a live
NB's, detected from its schema version (an unknown one is refused unless
--ovn-version is given), or the fixture's ovn: key, else
` + release.Default().Series() + ` (the newest LTS, as for compile). Logical routers are
traced on ` + compile.RouterReleaseNames() + ` (the versions whose router
pipeline aclc verifies); on any other a packet that reaches a router ends
"not traced".

Stages outside aclc's set (the ND responder, FDB, ...) pass the
packet through; --detailed says which. A few are modelled from
the NB because they decide the packet's path: ls_in_l2_lkup picks the
output port from eth.dst and the port addresses (a broadcast or multicast
eth.dst floods every port; --outport overrides it, an outport in the
microflow does not: the L2 lookup overwrites it, as in ovn-trace), ls_in_lb load-balances new connections to a
VIP with ct_lb_mark(backends=...) (the first backend, or --lb-dst),
ls_in_pre_hairpin sets reg0[6] and reg0[12] (always 0, as in ovn-trace),
the port security stages check the ports' port_security as ovn-trace does,
ls_in_arp_rsp answers ARP requests for the ports' IPv4 addresses and,
for a router port with options:arp_proxy, its proxy addresses and
networks, and ls_in_dhcp_options/ls_in_dhcp_response answer a port's
DHCP requests from its dhcpv4_options/dhcpv6_options (put_dhcp_opts,
put_dhcpv6_opts, assumed to succeed, as in ovn-trace); ND solicitations
end "not traced".

A packet sent to a router port goes on through the logical router (the
flows aclc compiles for it, identical to northd's: routes, policies, TTL,
MAC rewrite, distributed gateway ports and their chassis-redirect ports)
into the next switch, as in ovn-trace. What aclc does not model (NAT and
load balancers on a router, gateway routers, ...) ends the trace with the
verdict "not traced: WHAT (STAGE)" and exit status 3.

A router's next-hop lookup (get_arp, get_nd) reads the SB MAC_Binding
table, as ovn-trace does: give the SB with --sb to read the neighbours
ovn-controller learned. Without --sb the table is taken as empty, as
ovn-trace sees an SB with no bindings: the router sends an ARP request for
the next hop, and a warning says so. A next hop known only by an NB
Static_MAC_Binding is "not traced" (ovn-controller uses it, ovn-trace does
not).

Output (text):
  --detailed (default) every table, the flow that matched (priority, match,
             actions) and, for ACL flows, the NB ACL it came from
  --minimal  the conntrack recirculations and the verdict nested as
             'ovn-trace --minimal' nests them
  --summary  one line: conntrack operations in order, the verdict
             (output/drop/reject) and the ACLs that decided it
--format json prints the whole trace as JSON.

Exit status: 0 when traced (whatever the verdict: output, drop, reject), 1
on failure to read the NB, 2 on bad input (unknown datapath or port,
unparsable microflow, a microflow missing a field the trace needs, unknown
--ct flag), 3 when the packet reached something aclc does not model
("not traced": neither output nor drop).`,
	Example: `  aclc trace testdata/fixtures/seed-stateless.yaml ls \
    'inport == "lsp1" && eth.src == 00:00:00:00:00:01 && eth.dst == 00:00:00:00:00:02 && ip4.src == 42.42.42.1 && ip4.dst == 66.66.66.66 && udp && udp.dst == 80' \
    --ct new --ct new --minimal
  aclc trace --nb unix:/var/run/ovn/ovnnb_db.sock 'inport == "vm1" && ...' --summary
  aclc trace --nb unix:/var/run/ovn/ovnnb_db.sock --sb unix:/var/run/ovn/ovnsb_db.sock 'inport == "vm1" && ...' --minimal
  aclc trace fixture.yaml 'inport == "p1" && ...' --ct est,rpl --format json`,
	Args: func(cmd *cobra.Command, args []string) error {
		if len(args) < 1 || len(args) > 3 {
			return withCode(2, fmt.Errorf("%s: want [FIXTURE] [DATAPATH] MICROFLOW, got %d arguments", cmd.CommandPath(), len(args)))
		}
		return nil
	},
	RunE: runTrace,
}

func init() {
	f := traceCmd.Flags()
	f.StringArrayVar(&traceOpts.ct, "ct", nil, "ct_state of the next conntrack recirculation: comma-separated flags new, est, rel, rpl, inv, trk, snat, dnat (trk implied); repeatable")
	f.StringVar(&traceOpts.lbDst, "lb-dst", "", "backend IP[:PORT] ct_lb_mark picks (ovn-trace --lb-dst)")
	f.StringVar(&traceOpts.outport, "outport", "", "output port (instead of the L2 lookup on eth.dst)")
	f.IntVar(&traceOpts.selectID, "select-id", 0, "member an ECMP route's select() picks (ovn-trace --select-id)")
	f.BoolVar(&traceOpts.minimal, "minimal", false, "print the ct recirculations and verdict nested like ovn-trace --minimal")
	f.BoolVar(&traceOpts.summary, "summary", false, "print one line: ct operations, verdict, deciding ACLs")
	f.BoolVar(&traceOpts.detailed, "detailed", false, "print every table with its matching flow and NB ACL (default)")
	f.StringVar(&traceOpts.format, "format", "text", "output format: text or json")
	f.StringVar(&traceOpts.release, "ovn-version", "", "OVN version to trace as: a series ("+releaseNames()+") or an exact version (default: a live NB's own, from NB_Global options:northd_internal_version or its schema, or the FIXTURE's ovn: key, else "+release.Default().Name()+"); over a live NB's it warns when they differ")
	f.StringVar(&traceOpts.sb, "sb", "", "read what only the SB knows from this live SB (remote(s), comma-separated), as ovn-trace does: the neighbours ovn-controller learned (MAC_Binding), which a router's next-hop lookup reads; never its logical flows. Without it the table is taken as empty (a router asks for its next hop), with a warning")
	f.IntVar(&traceOpts.maxRecirc, "max-recirculations", trace.DefaultMaxRecirculations, "stop a trace after this many recirculations")
	traceOpts.chassis.register(traceCmd)
	traceNB.register(traceCmd)
	rootCmd.AddCommand(traceCmd)
}

// loadTraceSB reads what a trace takes from the live SB: its MAC_Binding
// table.
func loadTraceSB(ctx context.Context, sbo ovsdbconn.Options) (*trace.SB, error) {
	rows, bad, err := sbschema.LoadMACBindings(ctx, sbo)
	if err != nil {
		return nil, err
	}
	if bad != "" {
		slog.Warn("SB: skipped a MAC binding that does not parse, as ovn-trace does", "row", bad)
	}
	return &trace.SB{MACBindings: rows}, nil
}

// traceFixtureArg reports whether arg names a fixture file rather than a
// datapath or a microflow.
func traceFixtureArg(arg string) bool {
	if strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") {
		return true
	}
	st, err := os.Stat(arg)
	return err == nil && st.Mode().IsRegular()
}

func runTrace(cmd *cobra.Command, args []string) error {
	n := 0
	for _, b := range []bool{traceOpts.minimal, traceOpts.summary, traceOpts.detailed} {
		if b {
			n++
		}
	}
	if n > 1 {
		return withCode(2, errors.New("give at most one of --minimal, --summary, --detailed"))
	}
	if traceOpts.format != "text" && traceOpts.format != "json" {
		return withCode(2, fmt.Errorf("--format: want text or json, got %q", traceOpts.format))
	}
	var opt trace.Options
	for _, s := range traceOpts.ct {
		st, err := trace.ParseCTState(s)
		if err != nil {
			return withCode(2, fmt.Errorf("--ct %w", err))
		}
		opt.CT = append(opt.CT, st)
	}
	opt.LBDst, opt.Outport, opt.MaxRecirculations = traceOpts.lbDst, traceOpts.outport, traceOpts.maxRecirc
	opt.SelectID = traceOpts.selectID

	var fixture string
	if !traceNB.set(cmd) && len(args) > 1 && traceFixtureArg(args[0]) {
		fixture, args = args[0], args[1:]
	}
	if len(args) > 2 {
		return withCode(2, fmt.Errorf("want [FIXTURE] [DATAPATH] MICROFLOW; %q is not a fixture file", args[0]))
	}
	if len(args) == 2 {
		opt.Datapath = args[0]
	}
	microflow := args[len(args)-1]

	var snap *nbschema.Snapshot
	var err error
	var given *release.Release
	if v := traceOpts.release; v != "" {
		if given, err = release.Lookup(v); err != nil {
			return withCode(2, fmt.Errorf("--ovn-version: %w", err))
		}
	}
	if fixture != "" {
		snap, err = nbschema.LoadFixtureWith(fixture, nbschema.FixtureOptions{Release: given})
	} else {
		// --ovn-version overrides the live NB's detected release (with a
		// warning when they differ), as for compile.
		opts := traceNB.options()
		opts.Release = given
		snap, err = nbschema.LoadLive(cmd.Context(), opts)
	}
	if err != nil {
		return err
	}
	lacking, err := traceOpts.chassis.lackingFor(snap)
	if err != nil {
		return err
	}
	if cmd.Flags().Changed("sb") {
		if opt.SB, err = loadTraceSB(cmd.Context(), sbOptions(traceOpts.sb, &traceNB)); err != nil {
			return err
		}
	}
	flows := compile.CompileWith(snap, compile.Options{Release: snap.Release, Lacking: lacking}).Flows
	res, err := trace.New(snap, flows).Trace(microflow, opt)
	if err != nil {
		var ie *trace.InputError
		if errors.As(err, &ie) {
			return withCode(2, err)
		}
		return err
	}
	if traceOpts.format == "text" && !(traceOpts.detailed || !traceOpts.minimal && !traceOpts.summary) {
		for _, w := range res.Warnings {
			fmt.Fprintf(os.Stderr, "aclc: warning: %s\n", w)
		}
	}
	var buf bytes.Buffer
	switch {
	case traceOpts.format == "json":
		err = res.WriteJSON(&buf)
	case traceOpts.minimal:
		err = res.WriteMinimal(&buf)
	case traceOpts.summary:
		err = res.WriteSummary(&buf)
	default:
		err = res.WriteDetailed(&buf)
	}
	if err != nil {
		return err
	}
	if _, err = os.Stdout.Write(buf.Bytes()); err != nil {
		return err
	}
	if res.Verdict == trace.VerdictNotTraced {
		// What comes next is not modelled: neither output nor drop.
		if traceOpts.format == "text" && !traceOpts.summary {
			fmt.Fprintf(os.Stderr, "aclc: not traced: %s\n", res.NotTraced)
		}
		return exitSilently(3)
	}
	return nil
}
