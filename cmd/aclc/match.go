package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbview"
	"github.com/aclc/aclc/release"
)

var matchCmd = &cobra.Command{
	Use:   "match",
	Short: "Work with OVN match expressions (the language of ACL matches)",
}

var matchCheckOpts struct {
	datapath   string
	warnings   bool
	ovnVersion string
}

var matchCheckNB nbFlags

var matchCheckCmd = &cobra.Command{
	Use:   "check [FIXTURE] [--datapath NAME] [--ovn-version X.Y[.Z]] [EXPR...]",
	Short: "Check match expressions exactly as a given OVN release's parser would",
	Long: `check parses each EXPR (or, with none given, each line of standard input)
as a logical-flow match of one OVN release and prints exactly one line per
expression: "ok", or "error: offset N: MESSAGE" with that release's own
wording and the byte offset where its parser stopped. It exits 1 if any
expression is invalid.

The release is --ovn-version (23.03, 25.03, 26.03 or the full version; see
aclc releases), else the live NB's (detected from its schema version with
--nb) or the fixture's (its ovn: key), else the newest LTS. Releases
differ in their fields (26.03 has ct_label.nf, 25.03
ct_mark.allow_established, 23.03 ct_label.blocked) and in templates (from 25.03 a match with an undefined ^variable is dropped
whole, and OVN gives no message: aclc says why); docs/match-language.md
lists every difference.

Without NB context every $address_set and @port_group is assumed to exist.
With a FIXTURE (a .yaml/.yml file, or any existing file given first) or
--nb, references are resolved the way ovn-northd publishes them: address
sets by name, <pg>_ip4/<pg>_ip6 for every port group, and a port group
exists on --datapath only if it has ports on that switch.

With --warnings, dubious-but-accepted constructs (host bits under a
prefix, missing prerequisites, contradictions, ...) go to stderr as
"warning: EXPR-NUMBER: offset N: KIND: MESSAGE".`,
	Example: `  aclc match check 'ip4.src == 10.0.0.0/8 && tcp.dst == 80'
  aclc match check testdata/fixtures/address-sets.yaml --datapath sw0 'outport == @pg_ns1 && ip4.src == $as_clients'
  ovn-nbctl --bare --columns=match list ACL | sed '/^$/d' | aclc match check -W`,
	RunE: runMatchCheck,
}

func init() {
	f := matchCheckCmd.Flags()
	f.StringVar(&matchCheckOpts.datapath, "datapath", "", "logical switch (name or UUID) whose port groups apply")
	f.BoolVarP(&matchCheckOpts.warnings, "warnings", "W", false, "print warnings for accepted but dubious constructs to stderr")
	f.StringVar(&matchCheckOpts.ovnVersion, "ovn-version", "", "OVN version whose parser to speak: a series ("+releaseNames()+") or an exact version (default: the --nb's, else "+release.Default().Name()+")")
	matchCheckNB.register(matchCheckCmd)
	matchCmd.AddCommand(matchCheckCmd)
	rootCmd.AddCommand(matchCmd)
}

// isFixtureArg decides whether the first argument names a fixture file
// rather than an expression.
func isFixtureArg(a string) bool {
	if strings.HasSuffix(a, ".yaml") || strings.HasSuffix(a, ".yml") {
		return true
	}
	st, err := os.Stat(a)
	return err == nil && st.Mode().IsRegular()
}

func runMatchCheck(cmd *cobra.Command, args []string) error {
	var resolver expr.Resolver
	var snap *nbschema.Snapshot
	var given *release.Release // --ovn-version
	var err error
	if v := matchCheckOpts.ovnVersion; v != "" {
		if given, err = release.Lookup(v); err != nil {
			return withCode(2, fmt.Errorf("--ovn-version: %w", err))
		}
	}
	switch {
	case len(args) > 0 && isFixtureArg(args[0]):
		if matchCheckNB.set(cmd) {
			return withCode(2, errors.New("give either a FIXTURE or --nb, not both"))
		}
		if snap, err = nbschema.LoadFixture(args[0]); err != nil {
			return err
		}
		args = args[1:]
	case matchCheckNB.set(cmd):
		// The NB is read as its own release (the resolver needs only its
		// rows); --ovn-version says which parser to speak, and is how an
		// NB of an unknown schema version is read at all.
		opts := matchCheckNB.options()
		snap, err = nbschema.LoadLive(cmd.Context(), opts)
		var unknown *release.UnknownSchemaError
		if errors.As(err, &unknown) && given != nil {
			opts.Release = given
			snap, err = nbschema.LoadLive(cmd.Context(), opts)
		}
		if err != nil {
			return err
		}
		if given != nil && snap.Release != nil && snap.Release != given {
			fmt.Fprintf(cmd.ErrOrStderr(), "aclc: warning: the NB is OVN %s's (NB schema %s); checking as OVN %s (--ovn-version)\n",
				snap.Release, snap.Release.NBSchema, given)
		}
	case matchCheckOpts.datapath != "":
		return withCode(2, errors.New("--datapath needs a FIXTURE or --nb"))
	}
	// --ovn-version, else the NB's (a live NB's by its schema version, a
	// fixture's by its ovn: key), else the newest LTS.
	rel := given
	if rel == nil && snap != nil {
		rel = snap.Release
	}
	if rel == nil {
		rel = release.Default()
	}
	d := compile.Dialect(rel)
	if snap != nil {
		r, err := nbview.New(snap).Resolver(matchCheckOpts.datapath)
		if err != nil {
			return withCode(2, fmt.Errorf("--datapath: %w", err))
		}
		resolver = r
	}

	exprs := args
	if len(exprs) == 0 {
		if exprs, err = readLines(cmd.InOrStdin()); err != nil {
			return err
		}
	}
	out := bufio.NewWriter(cmd.OutOrStdout())
	bad := false
	for i, s := range exprs {
		e, err := d.Parse(s, resolver)
		if err != nil {
			bad = true
			fmt.Fprintf(out, "error: %v\n", err)
			continue
		}
		fmt.Fprintln(out, "ok")
		if matchCheckOpts.warnings {
			for _, w := range e.Warnings {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %d: %s\n", i+1, w)
			}
		}
	}
	if err := out.Flush(); err != nil {
		return err
	}
	if bad {
		return exitSilently(1)
	}
	return nil
}

// readLines returns the lines of r without their line endings; every line,
// even an empty one, is an expression.
func readLines(r io.Reader) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.TrimSuffix(sc.Text(), "\r"))
	}
	return lines, sc.Err()
}
