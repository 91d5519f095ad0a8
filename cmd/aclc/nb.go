package main

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/nbschema"
)

// nbCmd groups the commands that move NB contents between fixtures and a
// live NB.
var nbCmd = &cobra.Command{
	Use:   "nb",
	Short: "Load a YAML fixture into a live OVN NB, or dump a live NB as a fixture",
}

var (
	nbLoadFlags   nbFlags
	nbLoadReplace bool
	nbDumpFlags   nbFlags
	nbDumpOutput  string
)

var nbLoadCmd = &cobra.Command{
	Use:   "load FIXTURE",
	Short: "Write a fixture into a live NB in one transaction, keeping its UUIDs",
	Long: `load writes every row of FIXTURE (docs/fixture-format.md) into the NB in
one transaction, with the fixture's UUIDs. It refuses an NB that already has
switches, ACLs or other rows of the fixture's tables unless --replace is
given: then existing rows with a fixture UUID are updated and the others
deleted, in the same transaction. An existing NB_Global row keeps its UUID,
connections and ssl; only its name, options and external_ids change.`,
	Args: exactArgs(1),
	RunE: func(cmd *cobra.Command, args []string) error {
		if _, err := nbLoadFlags.release(); err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		nb, err := nbschema.Connect(ctx, nbLoadFlags.options())
		if err != nil {
			return err
		}
		defer nb.Close()
		// The fixture is read for the NB's release (or --ovn-version):
		// what that release lacks is an error at its position.
		from := "the release of the NB it is loaded into"
		if nbLoadFlags.ovnVersion != "" {
			from = "--ovn-version"
		}
		snap, err := nbschema.LoadFixtureWith(args[0], nbschema.FixtureOptions{Release: nb.Release, ReleaseFrom: from})
		if err != nil {
			return err
		}
		if err := nbschema.Store(ctx, nb.Client, snap, nbschema.StoreOptions{Replace: nbLoadReplace}); err != nil {
			return fmt.Errorf("%s: %w", args[0], err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "loaded %s into %s: %d switches, %d ports, %d port groups, %d address sets, %d ACLs\n",
			args[0], nb.Client.CurrentEndpoint(), len(snap.Switches), len(snap.Ports), len(snap.PortGroups),
			len(snap.AddressSets), len(snap.ACLs))
		return nil
	},
}

var nbDumpCmd = &cobra.Command{
	Use:   "dump",
	Short: "Write the live NB's switches, port groups, ACLs and related rows as a YAML fixture",
	Args:  exactArgs(0),
	RunE: func(cmd *cobra.Command, args []string) error {
		if _, err := nbDumpFlags.release(); err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		snap, err := nbschema.LoadLive(ctx, nbDumpFlags.options())
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		if err := nbschema.WriteFixture(&buf, snap); err != nil {
			return err
		}
		if nbDumpOutput == "" || nbDumpOutput == "-" {
			_, err := cmd.OutOrStdout().Write(buf.Bytes())
			return err
		}
		return atomicWrite(nbDumpOutput, buf.Bytes())
	},
}

// exactArgs is cobra.ExactArgs with the usage exit code 2.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return withCode(2, fmt.Errorf("%s: %w", cmd.CommandPath(), err))
		}
		return nil
	}
}

func init() {
	nbLoadFlags.register(nbLoadCmd)
	nbLoadFlags.registerRelease(nbLoadCmd)
	nbLoadCmd.Flags().BoolVar(&nbLoadReplace, "replace", false, "replace the NB's switches, port groups, ACLs, ... in the same transaction (rows with a fixture UUID are updated, the others deleted)")
	nbDumpFlags.register(nbDumpCmd)
	nbDumpFlags.registerRelease(nbDumpCmd)
	nbDumpCmd.Flags().StringVarP(&nbDumpOutput, "output", "o", "", "write the fixture to FILE instead of stdout")
	nbCmd.AddCommand(nbLoadCmd, nbDumpCmd)
	rootCmd.AddCommand(nbCmd)
}
