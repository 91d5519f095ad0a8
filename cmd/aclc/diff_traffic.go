package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/reach"
	"github.com/aclc/aclc/trace"
)

// This file holds `aclc diff --traffic A B': what a change to the ACLs
// does to traffic (package reach's Diff).

var trafficOpts struct {
	on      bool
	failOn  string
	format  string
	nb      nbFlags // the connection flags of live NBs, and --ovn-version
	cpuprof string
}

// trafficHelp is the --traffic part of diff's help.
const trafficHelp = `
With --traffic, A and B are two NBs instead — each a YAML fixture or a
live NB remote (tcp:IP:PORT, ssl:IP:PORT, unix:PATH) — and diff prints
the traffic whose fate in the ACL stages differs: for every switch in
both (by name) and every ordered pair of distinct ports in both, the
packets the ACL stages allow in one NB and drop or reject in the other
(newly-allowed, newly-denied), drop in one and reject in the other
(denial-changed), or allow in both with another conntrack handling
(conntrack: stateful, i.e. committed so that replies come back, versus
stateless, whose replies need an ACL of their own), grouped by endpoint
pair, each with the deciding ACLs before and after and a witness packet
as an ovn-trace microflow (replay it with 'aclc trace' or ovn-trace on
each NB, one --ct new,trk per entry of its ct list). The sets are exact
(package reach, on the same packet-set algebra as 'aclc reach'); where
reach cannot execute the packets exactly in A or in B it says
"not-exact" with the reason, never "no change". Switches and ports in
only one NB are listed as added or removed and not compared. Only the
switches whose ACL-stage flows (or the sets they name, or their ports)
differ are executed, and there only the packets a differing flow can
take (-v logs the phases, progress and what was executed). Both NBs must be of one OVN release (give --ovn-version to read
both as one).

--fail-on says which changes fail: any (default), newly-allowed (a
"this change may only tighten" gate: also allowed traffic newly
committed to conntrack, whose replies then come back) or newly-denied
(also allowed traffic no longer committed).

Exit status with --traffic: 1 when some change --fail-on names is found;
otherwise 3 when some traffic could not be compared exactly (it may hide
such a change); otherwise 0 (changes --fail-on does not name print but
do not fail). 2 on bad input, NBs of two releases, or a failure to read
an NB.

Output: one block per endpoint pair (text), or JSON Lines (--format json),
one object per change: switch, from, to, kind, before and after
{verdict, conntrack, committed, acls [{uuid, owner, direction, priority,
tier, action, name}]}, witness {microflow, ct}, reason (not-exact); and
one per added or removed endpoint (kind switch-added, switch-removed,
port-added, port-removed). Identical NBs print nothing.`

const trafficExamples = `
  # What does the fixture a CMS is about to apply change?
  aclc diff --traffic unix:/var/run/ovn/ovnnb_db.sock new-acls.yaml
  # CI gate: this change may only tighten
  aclc diff --traffic --fail-on newly-allowed before.yaml after.yaml --format json`

func registerTraffic(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&trafficOpts.on, "traffic", false, "compare the traffic two NBs (fixtures or live remotes) let through, not two flow listings")
	f.StringVar(&trafficOpts.failOn, "fail-on", "any", "with --traffic: the changes that exit 1: any, newly-allowed or newly-denied")
	f.StringVar(&trafficOpts.format, "format", "text", "with --traffic: output format, text or json (JSON Lines)")
	f.StringVarP(&trafficOpts.nb.privateKey, "private-key", "p", "", "with --traffic: private key PEM file for ssl: remotes")
	f.StringVarP(&trafficOpts.nb.certificate, "certificate", "c", "", "with --traffic: certificate PEM file for ssl: remotes")
	f.StringVarP(&trafficOpts.nb.caCert, "ca-cert", "C", "", "with --traffic: CA certificate PEM file for ssl: remotes")
	f.DurationVar(&trafficOpts.nb.timeout, "timeout", nbschema.DefaultTimeout, "with --traffic: give up connecting to an NB after this long")
	trafficOpts.nb.registerRelease(cmd)
	f.StringVar(&trafficOpts.cpuprof, "cpuprofile", "", "write a CPU profile (pprof) of the whole run to FILE")
	f.MarkHidden("cpuprofile")
}

// trafficOnly are the flags that mean something only with --traffic.
var trafficOnly = []string{"fail-on", "format", "private-key", "certificate", "ca-cert", "timeout", "ovn-version"}

// isRemote reports whether arg names a live NB rather than a fixture.
func isRemote(arg string) bool {
	for _, p := range []string{"tcp:", "ssl:", "unix:"} {
		if strings.HasPrefix(arg, p) {
			return true
		}
	}
	return false
}

// loadNB reads a fixture or a live NB with the --traffic flags.
func loadNB(cmd *cobra.Command, arg string) (*nbschema.Snapshot, error) {
	r, err := trafficOpts.nb.release()
	if err != nil {
		return nil, err
	}
	var snap *nbschema.Snapshot
	if isRemote(arg) {
		opts := trafficOpts.nb.options()
		opts.Remotes = arg
		snap, err = nbschema.LoadLive(cmd.Context(), opts)
	} else {
		snap, err = nbschema.LoadFixtureWith(arg, nbschema.FixtureOptions{Release: r})
	}
	if err != nil {
		return nil, withCode(2, fmt.Errorf("%s: %w", arg, err))
	}
	return snap, nil
}

// trafficSide is one NB's view in the JSON output.
type trafficSide struct {
	Verdict   reach.Verdict  `json:"verdict"`
	Conntrack bool           `json:"conntrack"`
	Committed bool           `json:"committed"`
	ACLs      []reach.ACLRef `json:"acls"`
}

// trafficLine is one change (or endpoint) in JSON Lines output.
type trafficLine struct {
	Switch  string        `json:"switch"`
	From    string        `json:"from,omitempty"`
	To      string        `json:"to,omitempty"`
	Port    string        `json:"port,omitempty"`
	Kind    string        `json:"kind"`
	Before  *trafficSide  `json:"before,omitempty"`
	After   *trafficSide  `json:"after,omitempty"`
	Witness *reachWitness `json:"witness,omitempty"`
	Reason  string        `json:"reason,omitempty"`
}

func runTrafficDiff(cmd *cobra.Command, args []string) error {
	stop, err := startProfiles(trafficOpts.cpuprof, "")
	if err != nil {
		return withCode(2, err)
	}
	defer stop()
	fails, err := failPredicate(trafficOpts.failOn)
	if err != nil {
		return err
	}
	if trafficOpts.format != "text" && trafficOpts.format != "json" {
		return withCode(2, fmt.Errorf("--format: want text or json, got %q", trafficOpts.format))
	}
	if cmd.Flags().Changed("acl-stages") {
		return withCode(2, errors.New("--acl-stages compares flow listings; it means nothing with --traffic"))
	}
	t0 := time.Now()
	var engines [2]*reach.Engine
	for i, arg := range args {
		if arg == "-" {
			return withCode(2, errors.New("--traffic reads NBs: give a fixture path or an NB remote, not -"))
		}
		snap, err := loadNB(cmd, arg)
		if err != nil {
			return err
		}
		slog.Debug("diff --traffic: NB read", "nb", arg, "release", snap.Release.Name(), "since start", time.Since(t0))
		flows := compile.CompileWith(snap, compile.Options{Release: snap.Release}).Flows
		slog.Debug("diff --traffic: NB compiled", "nb", arg, "since start", time.Since(t0))
		if engines[i], err = reach.New(snap, flows); err != nil {
			return withCode(2, err)
		}
	}
	d, err := reach.NewDiff(engines[0], engines[1])
	if err != nil {
		return withCode(2, fmt.Errorf("%s and %s: %w", args[0], args[1], err))
	}
	w := bufio.NewWriter(os.Stdout)
	out := newTrafficWriter(w, engines)
	for _, ep := range d.Endpoints() {
		out.endpoint(ep)
	}
	d.Progress = func(done, total int) {
		slog.Debug("diff --traffic: switch compared", "done", done, "of", total, "since start", time.Since(t0))
	}
	failed, undecided := false, false
	st, err := d.Run(func(c *reach.Change) {
		failed = failed || fails(c)
		undecided = undecided || c.Kind == reach.Undecided
		out.change(c)
	})
	if err != nil { // a switch name of two switches, or an NB reach cannot read
		return withCode(2, err)
	}
	if err := out.flush(); err != nil {
		return withCode(2, err)
	}
	slog.Debug("diff --traffic: done", "since start", time.Since(t0),
		"executed", fmt.Sprintf("switches %d (%d skipped), pairs %d (%d skipped, %d executed)", st.Switches, st.SwitchesSkipped, st.Pairs, st.PairsSkipped, st.PairsExecuted),
		"found", out.summary())
	switch {
	case failed:
		return exitSilently(1)
	case undecided:
		return exitSilently(3)
	}
	return nil
}

// failPredicate returns the test of --fail-on's changes.
func failPredicate(failOn string) (func(*reach.Change) bool, error) {
	switch failOn {
	case "any":
		return func(c *reach.Change) bool { return c.Kind != reach.Undecided }, nil
	case "newly-allowed":
		return (*reach.Change).Loosens, nil
	case "newly-denied":
		return (*reach.Change).Tightens, nil
	}
	return nil, withCode(2, fmt.Errorf("--fail-on: want any, newly-allowed or newly-denied, got %q", failOn))
}

// trafficWriter prints changes as text blocks or JSON Lines.
type trafficWriter struct {
	w       *bufio.Writer
	enc     *json.Encoder
	json    bool
	engines [2]*reach.Engine
	ct      string
	pair    string // the endpoint pair of the last block
	counts  map[reach.Kind]int
}

func newTrafficWriter(w *bufio.Writer, engines [2]*reach.Engine) *trafficWriter {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // microflows are full of &&
	return &trafficWriter{w: w, enc: enc, json: trafficOpts.format == "json", engines: engines,
		ct: strings.ReplaceAll(trace.CTState(reach.DefaultCT).String(), "|", ","), counts: map[reach.Kind]int{}}
}

func (t *trafficWriter) endpoint(ep reach.Endpoint) {
	what, verb := "switch", "removed"
	if ep.Port != "" {
		what = "port"
	}
	if ep.Added {
		verb = "added"
	}
	if t.json {
		_ = t.enc.Encode(trafficLine{Switch: ep.Switch, Port: ep.Port, Kind: what + "-" + verb})
		return
	}
	if ep.Port == "" {
		fmt.Fprintf(t.w, "switch %s %s (not compared)\n", ep.Switch, verb)
	} else {
		fmt.Fprintf(t.w, "switch %s: port %s %s (not compared)\n", ep.Switch, ep.Port, verb)
	}
}

func (t *trafficWriter) side(e *reach.Engine, p *reach.Part) *trafficSide {
	if p == nil {
		return nil
	}
	return &trafficSide{Verdict: p.Verdict, Conntrack: p.Conntrack, Committed: p.Committed, ACLs: e.ACLs(p)}
}

func (t *trafficWriter) change(c *reach.Change) {
	t.counts[c.Kind]++
	wit := &reachWitness{Microflow: c.Witness, CT: repeat(t.ct, c.Recirculations)}
	if t.json {
		_ = t.enc.Encode(trafficLine{Switch: c.Switch, From: c.From, To: c.To, Kind: string(c.Kind),
			Before: t.side(t.engines[0], c.Before), After: t.side(t.engines[1], c.After), Witness: wit, Reason: c.Reason})
		return
	}
	if pair := c.Switch + " " + c.From + " " + c.To; pair != t.pair {
		t.pair = pair
		fmt.Fprintf(t.w, "%s: %s -> %s\n", c.Switch, c.From, c.To)
	}
	fmt.Fprintf(t.w, "  %s:", c.Kind)
	if c.Kind == reach.Undecided {
		fmt.Fprintf(t.w, " %s\n", c.Reason)
	} else {
		fmt.Fprintf(t.w, " %s -> %s\n", describePart(c.Before), describePart(c.After))
		fmt.Fprintf(t.w, "    before: %s\n    after:  %s\n", aclList(t.engines[0].ACLs(c.Before)), aclList(t.engines[1].ACLs(c.After)))
	}
	fmt.Fprintf(t.w, "    witness: %s", c.Witness)
	if len(wit.CT) > 0 {
		fmt.Fprintf(t.w, " (--ct %s)", strings.Join(wit.CT, " --ct "))
	}
	fmt.Fprintln(t.w)
}

// describePart says a part's verdict and conntrack handling.
func describePart(p *reach.Part) string {
	if p.Verdict == reach.Allow {
		return "allow (" + p.Stateful() + ")"
	}
	return string(p.Verdict)
}

// aclList prints the deciding ACLs.
func aclList(acls []reach.ACLRef) string {
	var parts []string
	for _, a := range acls {
		if a.UUID == reach.Default {
			parts = append(parts, "default")
			continue
		}
		s := fmt.Sprintf("%s %s priority %d", a.UUID, a.Action, a.Priority)
		if a.Tier != 0 {
			s += fmt.Sprintf(" tier %d", a.Tier)
		}
		if a.Owner != "" {
			s += " on " + a.Owner
		}
		if a.Name != "" {
			s += fmt.Sprintf(" name %q", a.Name)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// summary counts the changes by kind ("none" for none).
func (t *trafficWriter) summary() string {
	var parts []string
	for _, k := range []reach.Kind{reach.NewlyAllowed, reach.NewlyDenied, reach.DenialChanged, reach.ConntrackChanged, reach.Undecided} {
		if n := t.counts[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// flush ends the output with a summary (text, when there is anything).
func (t *trafficWriter) flush() error {
	if !t.json && len(t.counts) > 0 {
		fmt.Fprintf(t.w, "changes: %s\n", t.summary())
	}
	return t.w.Flush()
}
