package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/lflow"
)

var diffOpts struct {
	aclOnly bool
}

var diffCmd = &cobra.Command{
	Use:   "diff A B",
	Short: "Compare two flow listings semantically, or with --traffic what two NBs' ACLs do to traffic; exit 1 when they differ",
	Long: `diff compares two logical flow listings, each either 'ovn-sbctl lflow-list'
text (from aclc or from ovn-sbctl itself) or aclc JSON, by datapath name,
stage, priority, match and actions. Order, duplicate flows and datapath
UUIDs are ignored. Differences print as a unified-style diff; the exit
status is 0 when the listings are equal, 1 when they differ, 2 on error.
Use - for standard input.

With --acl-stages (default) flows of stages aclc does not compile are
dropped from both sides first, so a full 'ovn-sbctl lflow-list' can be
compared with 'aclc compile' directly.
` + trafficHelp,
	Example: `  ovn-sbctl lflow-list > sb.txt; aclc compile --nb $OVN_NB_DB > aclc.txt
  aclc diff sb.txt aclc.txt
  aclc diff testdata/golden/26.03.2/seed-stateless.lflows <(aclc compile testdata/fixtures/seed-stateless.yaml)` + trafficExamples,
	Args: cobra.ExactArgs(2),
	RunE: func(cmd *cobra.Command, args []string) error {
		if trafficOpts.on {
			return runTrafficDiff(cmd, args)
		}
		for _, name := range trafficOnly {
			if cmd.Flags().Changed(name) {
				return withCode(2, fmt.Errorf("--%s needs --traffic", name))
			}
		}
		a, err := readListing(args[0])
		if err != nil {
			return withCode(2, err)
		}
		b, err := readListing(args[1])
		if err != nil {
			return withCode(2, err)
		}
		if diffOpts.aclOnly {
			keep := func(f lflow.Flow) bool { return f.Stage.IsACLStage() }
			a, b = a.Filter("", keep), b.Filter("", keep)
		}
		changes := lflow.Diff(a, b)
		if len(changes) == 0 {
			return nil
		}
		if err := lflow.WriteDiff(os.Stdout, args[0], args[1], changes); err != nil {
			return withCode(2, err)
		}
		return exitSilently(1)
	},
}

func init() {
	diffCmd.Flags().BoolVar(&diffOpts.aclOnly, "acl-stages", true, "compare only the stages aclc compiles")
	registerTraffic(diffCmd)
	rootCmd.AddCommand(diffCmd)
}

// readListing reads a flow listing in text or JSON from path ("-": stdin).
func readListing(path string) (*lflow.Listing, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return lflow.Parse(path, data)
}
