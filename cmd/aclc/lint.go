package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/lint"
)

var lintOpts struct {
	format           string
	stats            bool
	cpuprof, memprof string
}

var lintCmd = &cobra.Command{
	Use:   "lint [FIXTURE]",
	Short: "Find mistakes in NB ACLs: invalid or dubious matches, conflicts and shadowing per tier, stateless pitfalls, northd quirks of the release",
	Long: `lint reads the Northbound database from a YAML fixture (FIXTURE) or a live
NB (--nb, or OVN_NB_DB when no FIXTURE is given) and reports, per logical
switch as OVN resolves address sets and port groups there:

  invalid-match, dangling-ref            matches OVN rejects (error)
  empty-set, host-bits, contradiction,   accepted but dubious matches
  slice-overflow, negated-multibit,
  missing-prereq
  same-priority-overlap                  overlapping ACLs at one priority (and tier) with different verdicts
  shadowed                               ACLs that earlier tiers or higher priorities always decide first
                                         (exact; lists every ACL that decides its packets first, and how)
  pass-to-default                        pass ACLs whose packets no later tier picks up (23.06+)
  stateless-mark-ignores-tiers           allow-stateless marking that takes earlier deciders out of conntrack
  stateless-no-reply                     allow-stateless traffic whose replies are dropped
  stateless-lb-vip                       allow-stateless traffic that skips a load balancer VIP
  reject-or-discarded                    reject ACLs whose 23.03 flow OVN cannot parse (error; 23.03 only)
  default-drop-after-lb                  default_acl_drop=true dropping allowed traffic after LB (error)

The NB is judged as its OVN release treats it: a live NB's (detected from
its schema version), --ovn-version, or a fixture's ovn: key, else 26.03.

Each finding names the ACL(s) (name or UUID, owner, fixture position) and a
one-line fix; see docs/lint.md. Exit status: 1 when any finding is an
error, 0 otherwise, 2 on usage errors.`,
	Example: `  aclc lint testdata/fixtures/reject-or-match.yaml
  aclc lint --nb unix:/var/run/ovn/ovnnb_db.sock --format json`,
	Args: cobra.MaximumNArgs(1),
	RunE: runLint,
}

func init() {
	f := lintCmd.Flags()
	f.StringVar(&lintOpts.format, "format", "text", "output format: text or json")
	f.BoolVar(&lintOpts.stats, "stats", false, "print how long the analysis took on stderr")
	f.StringVar(&lintOpts.cpuprof, "cpuprofile", "", "write a CPU profile (pprof) of the whole run to FILE")
	f.StringVar(&lintOpts.memprof, "memprofile", "", "write a heap profile (pprof, allocations) at the end of the run to FILE")
	f.MarkHidden("cpuprofile")
	f.MarkHidden("memprofile")
	lintNB.register(lintCmd)
	lintNB.registerRelease(lintCmd)
	rootCmd.AddCommand(lintCmd)
}

var lintNB nbFlags

func runLint(cmd *cobra.Command, args []string) error {
	if lintOpts.format != "text" && lintOpts.format != "json" {
		return withCode(2, fmt.Errorf("--format: want text or json, got %q", lintOpts.format))
	}
	// A one-shot lint: collect as the memory in use nears 440 MiB rather
	// than by GOGC=100, whose peak RSS at 50k ACLs of the consecutive
	// shape (live heap ~190 MB, heap ~380 MB before a cycle, plus the
	// runtime's spans) was 475-540 MB; the limit keeps it near 460 MB for
	// about as many cycles. An NB whose live heap nears the limit goes
	// back to GOGC=100 (no limit) rather than collect without end. GOGC or
	// GOMEMLIMIT, when set, win.
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		defer gcBudget(440<<20, 100, nil, 0)()
	}
	stop, err := startProfiles(lintOpts.cpuprof, lintOpts.memprof)
	if err != nil {
		return withCode(2, err)
	}
	defer stop()
	snap, err := loadSnapshot(cmd, args, &lintNB)
	if err != nil {
		return err
	}
	rep, err := lint.Lint(snap)
	if err != nil {
		return err
	}
	// Streamed to stdout: buffering the whole report (19-45 MB of JSON
	// at 50k ACLs) would add as much to the peak RSS.
	if lintOpts.format == "json" {
		err = lint.WriteJSON(os.Stdout, rep)
	} else {
		err = lint.WriteText(os.Stdout, rep)
	}
	if err != nil {
		return fmt.Errorf("writing findings: %w", err)
	}
	if lintOpts.stats {
		fmt.Fprintf(os.Stderr, "aclc: linted %d ACLs on %d switches in %v\n", rep.Stats.ACLs, rep.Stats.Switches, rep.Stats.Elapsed)
	}
	if rep.HasErrors() {
		return exitSilently(1)
	}
	return nil
}
