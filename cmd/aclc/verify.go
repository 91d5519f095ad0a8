package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/sbschema"
)

var (
	verifyNB       nbFlags
	verifySB       string
	verifyDatapath string
)

var verifyCmd = &cobra.Command{
	Use:   "verify [--nb REMOTE] [--sb REMOTE]",
	Short: "Compare the live SB's ACL-stage flows with what the NB compiles to; exit 1 on drift",
	Long: `verify compiles the live NB (as 'aclc compile --nb' does) and compares the
result with the Logical_Flow rows of the live SB for the ACL-related stages,
datapath groups expanded, switch by switch. Any difference — a flow northd
did not write, a flow it wrote that the NB does not call for, or one edited
by hand in the SB — is printed as a diff ('-' only in the SB, '+' only in
aclc's compile) and makes verify exit 1. The NB is compiled for the
release whose stage layout the SB's flows have, with what that release's
northd read from the SB: the ids in its ACL_ID table (persist-established
ACLs, 25.03+) and the features of its chassis (as 'aclc compile --sb').

Run it when northd is idle (for example after 'ovn-nbctl --wait=sb sync'):
while northd is still catching up with the NB the two legitimately differ.
The SB defaults to $OVN_SB_DB, else ` + sbschema.DefaultRemote + `; -p/-c/-C apply to both.`,
	Example: `  aclc verify --nb unix:/var/run/ovn/ovnnb_db.sock --sb unix:/var/run/ovn/ovnsb_db.sock
  OVN_NB_DB=tcp:10.0.0.2:6641 OVN_SB_DB=tcp:10.0.0.2:6642 aclc verify --datapath sw0`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, args []string) error {
		ctx := cmd.Context()
		if _, err := verifyNB.release(); err != nil {
			return err
		}
		snap, err := nbschema.LoadLive(ctx, verifyNB.options())
		if err != nil {
			return err
		}
		sbo := sbOptions(verifySB, &verifyNB)
		sb, err := sbschema.LoadLogicalSwitchFlows(ctx, sbo)
		if err != nil {
			return err
		}
		// Compile for the NB's version (the northd that last ran on it:
		// NB_Global options:northd_internal_version, or --ovn-version),
		// with the ACL ids it allocated and the chassis features it found;
		// an SB whose flows are another series' layout was written by
		// another northd.
		r := snap.Release
		if f, ok := misplaced(sb, r); ok {
			return fmt.Errorf("the SB's flow %s is at table %d of stage %s, which OVN %s (the NB's, from %s) does not have: the SB was written by another ovn-northd",
				f.Match, f.Stage.Table(), f.Stage, r.Name(), snap.ReleaseFrom)
		}
		opts, err := liveTarget(ctx, sbo, snap, r, compile.ChassisFeatures{})
		if err != nil {
			return err
		}
		if verifyDatapath != "" && !hasSwitch(snap, verifyDatapath) {
			return withCode(2, fmt.Errorf("--datapath: no logical switch named %q in the NB", verifyDatapath))
		}
		acl := func(f lflow.Flow) bool { return f.Stage.IsACLStage() }
		res := compile.CompileWith(snap, opts)
		want := res.Flows.Filter(verifyDatapath, nil)
		got := sb.Filter(verifyDatapath, acl)
		changes := lflow.Diff(got, want)
		if len(changes) == 0 {
			fmt.Fprintf(cmd.OutOrStdout(), "in sync: %d ACL-stage flows on %d logical switches\n", want.NumFlows(), len(want.Datapaths))
			return nil
		}
		if err := lflow.WriteDiff(os.Stdout, "SB (ovn-northd)", "aclc compile (NB)", changes); err != nil {
			return err
		}
		if undecidedOnly(res.Problems, changes) {
			// The NB does not decide these switches' flows: northd may
			// have written its other outcome.
			fmt.Fprintf(os.Stderr, "aclc: verify: %d flows differ between the SB and the NB's compile, all on switches whose flows depend on northd's state, not on the NB (northd-undecided): not exact\n", len(changes))
			return exitSilently(3)
		}
		fmt.Fprintf(os.Stderr, "aclc: verify: %d flows differ between the SB and the NB's compile\n", len(changes))
		return exitSilently(1)
	},
}

// undecidedOnly reports whether every change is on a switch for which
// compile reported KindNorthdUndecided.
func undecidedOnly(ps []compile.Problem, changes []lflow.Change) bool {
	undecided := map[string]bool{}
	for _, p := range ps {
		if p.Kind == compile.KindNorthdUndecided {
			undecided[p.Datapath] = true
		}
	}
	for _, c := range changes {
		if !undecided[c.Datapath] {
			return false
		}
	}
	return len(undecided) > 0
}

// misplaced returns a flow of the SB whose stage name and table release
// r's layout does not have, if any.
func misplaced(sb *lflow.Listing, r *release.Release) (lflow.Flow, bool) {
	lay, ok := lflow.LayoutFor(r.Series())
	if !ok {
		return lflow.Flow{}, false
	}
	for _, d := range sb.Datapaths {
		for _, f := range d.Flows {
			if st, ok := lay.StageByName(f.Stage.Name()); !ok || st.Table() != f.Stage.Table() || st.Pipeline() != f.Stage.Pipeline() {
				return f, true
			}
		}
	}
	return lflow.Flow{}, false
}

func init() {
	verifyNB.register(verifyCmd)
	verifyNB.registerRelease(verifyCmd)
	verifyCmd.Flags().StringVar(&verifySB, "sb", "", "SB remote(s), comma-separated (default $OVN_SB_DB, else "+sbschema.DefaultRemote+")")
	verifyCmd.Flags().StringVar(&verifyDatapath, "datapath", "", "only this logical switch")
	rootCmd.AddCommand(verifyCmd)
}
