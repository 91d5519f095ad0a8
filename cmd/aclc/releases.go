package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/internal/ovnroot"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/release"
)

var releasesCmd = &cobra.Command{
	Use:   "releases",
	Short: "List the OVN versions aclc compiles for, how each is verified, and what changed when",
	Long: `releases lists every OVN version aclc vouches for, one per line: the version,
its series' NB and SB schema versions (a live NB's schema gives its series
when no northd has run on it; NB_Global options:northd_internal_version
gives the exact version), how the version is verified — the oracle whose
real ovn-northd wrote its goldens (testdata/golden/VERSION): a Debian
package (suite and exact ovn-central version; "host" is this machine's own
Debian 12 packages) or a build from the upstream tag (tag and commit) —
whether the test command runs it live ("live": its Debian package installs
on a fresh machine, so aclc is compared with that northd in every run) or
checks aclc against its committed goldens ("goldens"), the distributions
known to ship it, and notes (LTS; default: what a fixture naming no
version is compiled for; routers: a version whose logical router pipeline
aclc compiles and verifies against its northd, so that trace goes across
routers).

A version between the oldest and the newest verified of its series (none
today: every patch release of each series is verified) is computed from
the facts; a newer patch, an older one or another series is refused.

--facts lists every dated fact aclc knows of northd (the router-* facts:
its router flows), the match language and the NB inputs, with the first version of each upstream branch that has
it. --oracles prints "VERSION KIND ARGS..." lines for scripts (KIND host,
debian SUITE PACKAGE, or source TAG COMMIT OVS-COMMIT). --acl-stages
VERSION prints that version's ACL stage names, separated by "|".`,
	Example: `  aclc releases
  aclc releases --facts
  aclc releases --format json
  aclc releases --acl-stages 25.03.3`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, args []string) error {
		out := cmd.OutOrStdout()
		switch {
		case releasesOpts.stages != "":
			r, err := release.Lookup(releasesOpts.stages)
			if err != nil {
				return withCode(2, err)
			}
			lay, ok := lflow.LayoutFor(r.Series())
			if !ok {
				return fmt.Errorf("no stage layout for OVN %s", r)
			}
			_, err = fmt.Fprintln(out, lay.ACLStageNames())
			return err
		case releasesOpts.oracles:
			for _, r := range release.All() {
				o := r.Oracle
				switch {
				case o.Host:
					fmt.Fprintf(out, "%s host %s %s\n", r.Name(), o.Suite, o.Package)
				case o.Debian():
					fmt.Fprintf(out, "%s debian %s %s\n", r.Name(), o.Suite, o.Package)
				default:
					fmt.Fprintf(out, "%s source %s %s %s\n", r.Name(), o.Tag, o.Commit, o.OVSCommit)
				}
			}
			return nil
		case releasesOpts.facts:
			w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(w, "FACT\tSINCE\tCOMMITS\tWHAT")
			for _, f := range release.Facts() {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", f.Name(), f.Since(), orDash(f.Commits()), f.What())
			}
			return w.Flush()
		}
		switch releasesOpts.format {
		case "json":
			enc := json.NewEncoder(out)
			for _, r := range release.All() {
				if err := enc.Encode(releaseRow(r)); err != nil {
					return err
				}
			}
			return nil
		case "text":
		default:
			return withCode(2, fmt.Errorf("--format %q: want text or json", releasesOpts.format))
		}
		w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "VERSION\tNB-SCHEMA\tSB-SCHEMA\tVERIFIED-BY\tIN-CI\tCARRIED-BY\tNOTES")
		for _, r := range release.All() {
			row := releaseRow(r)
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", row.Version, row.NBSchema, row.SBSchema, row.Oracle, row.CI,
				orDash(strings.Join(row.Carriers, "; ")), orDash(strings.Join(row.Notes, ",")))
		}
		return w.Flush()
	},
}

// releaseJSON is one line of `aclc releases --format json`.
type releaseJSON struct {
	Version  string   `json:"version"`
	NBSchema string   `json:"nb_schema"`
	SBSchema string   `json:"sb_schema"`
	Oracle   string   `json:"verified_by"`
	Kind     string   `json:"oracle"` // host, debian, source
	Suite    string   `json:"suite,omitempty"`
	Package  string   `json:"package,omitempty"`
	Tag      string   `json:"tag,omitempty"`
	Commit   string   `json:"commit,omitempty"`
	Root     string   `json:"root"`
	CI       string   `json:"ci"` // live, goldens
	Carriers []string `json:"carried_by,omitempty"`
	Notes    []string `json:"notes,omitempty"`
}

func releaseRow(r *release.Release) releaseJSON {
	o := r.Oracle
	row := releaseJSON{Version: r.Name(), NBSchema: r.NBSchema, SBSchema: r.SBSchema, Oracle: o.String(),
		Root: ovnroot.Dir(r), CI: "goldens", Carriers: r.Carriers}
	switch {
	case o.Host:
		row.Kind, row.Suite, row.Package, row.CI = "host", o.Suite, o.Package, "live"
	case o.Debian():
		row.Kind, row.Suite, row.Package, row.CI = "debian", o.Suite, o.Package, "live"
	default:
		row.Kind, row.Tag, row.Commit = "source", o.Tag, o.Commit
	}
	if r.LTS {
		row.Notes = append(row.Notes, "LTS")
	}
	if r == release.Default() {
		row.Notes = append(row.Notes, "default")
	}
	if compile.CompilesRouters(r) {
		row.Notes = append(row.Notes, "routers")
	}
	return row
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

var releasesOpts struct {
	stages  string
	facts   bool
	oracles bool
	format  string
}

func init() {
	f := releasesCmd.Flags()
	f.StringVar(&releasesOpts.stages, "acl-stages", "", "print the ACL stage names of this version (26.03, 26.03.1, ...)")
	f.BoolVar(&releasesOpts.facts, "facts", false, "list every dated fact with its since-points")
	f.BoolVar(&releasesOpts.oracles, "oracles", false, `print "VERSION KIND ARGS..." per verified version, for scripts`)
	f.StringVar(&releasesOpts.format, "format", "text", "text or json (JSON Lines, one object per version)")
	rootCmd.AddCommand(releasesCmd)
}
