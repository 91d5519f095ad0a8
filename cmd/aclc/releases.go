package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/release"
)

var releasesCmd = &cobra.Command{
	Use:   "releases",
	Short: "List the OVN releases aclc compiles for",
	Long: `releases lists the supported OVN releases, one per line: the release, the
NB schema version a live NB of it reports (how aclc detects it), the SB
schema version its SB reports (what compile --sb checks), the Debian
suite whose packages are that release, the exact ovn-central package
version its goldens were made with, and notes (host: this machine's own
packages, else a Debian root made by scripts/ovn-release-root.sh; default:
what a fixture is compiled for without --ovn-version or an ovn: key).

With --acl-stages RELEASE it prints the names of that release's ACL
stages, the ones aclc compiles, separated by "|" (testdata/regen.sh keeps
northd's flows of these stages).`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, args []string) error {
		if releasesStages != "" {
			r, err := release.Lookup(releasesStages)
			if err != nil {
				return withCode(2, err)
			}
			lay, ok := lflow.LayoutFor(r.Series())
			if !ok {
				return fmt.Errorf("no stage layout for OVN %s", r)
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), lay.ACLStageNames())
			return err
		}
		w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "RELEASE\tNB-SCHEMA\tSB-SCHEMA\tDEBIAN\tPACKAGE\tNOTES")
		for _, r := range release.All() {
			var notes []string
			if r.Host {
				notes = append(notes, "host")
			} else {
				notes = append(notes, "root")
			}
			if r.LTS {
				notes = append(notes, "LTS")
			}
			if r == release.Default() {
				notes = append(notes, "default")
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name(), r.NBSchema, r.SBSchema, r.Suite, r.Package, strings.Join(notes, ","))
		}
		return w.Flush()
	},
}

var releasesStages string

func init() {
	releasesCmd.Flags().StringVar(&releasesStages, "acl-stages", "", "print the ACL stage names of this release (26.03, 26.03.1, ...)")
	rootCmd.AddCommand(releasesCmd)
}
