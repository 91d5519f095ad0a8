// Command aclc compiles OVN Northbound ACLs into the logical flows that the
// ovn-northd of the NB's exact OVN version writes for the ACL stages
// (every version `aclc releases` lists), traces packets through them, and
// drives conntrack zone flushes through ctnetlink.
//
// Each subcommand lives in its own file and registers itself on rootCmd
// from an init function.
package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// exitError carries a process exit code through cobra. A command returns
// one when the exit code must be something other than 1 (for example 2 for
// usage errors), or when it has already printed its own message (silent).
type exitError struct {
	code   int
	err    error
	silent bool
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// withCode wraps err so that aclc exits with code.
func withCode(code int, err error) error {
	if err == nil {
		return nil
	}
	return &exitError{code: code, err: err}
}

// exitSilently makes aclc exit with code without printing anything more.
func exitSilently(code int) error { return &exitError{code: code, silent: true} }

var verbose bool

var rootCmd = &cobra.Command{
	Use:   "aclc",
	Short: "OVN ACL compiler: NB ACLs to the logical flows of your exact ovn-northd, traces, conntrack zone flushes",
	Long: `aclc reads OVN Northbound ACLs from a YAML fixture or a live NB (OVSDB)
and emits the pre-ACL, ACL-hint, ACL and related logical flows exactly as
the ovn-northd of the NB's OVN version writes them — series and patch:
a live NB's version comes from NB_Global options:northd_internal_version,
which northd writes on every run (else its schema gives the series), a
fixture's from its ovn: key or --ovn-version; 'aclc releases' lists every
version aclc vouches for and how each is verified against its real
northd, and a version it cannot vouch for is refused. It also traces
packets through those stages, lints ACL sets, follows a live NB as a
pipeline stage (watch) and flushes conntrack zones through ctnetlink.`,
	SilenceUsage:  true,
	SilenceErrors: true,
	PersistentPreRun: func(cmd *cobra.Command, args []string) {
		level := slog.LevelWarn
		if verbose {
			level = slog.LevelDebug
		}
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
	},
}

func init() {
	rootCmd.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "log debug messages to stderr")
	rootCmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return withCode(2, fmt.Errorf("%s: %w", cmd.CommandPath(), err))
	})
}

func main() {
	os.Exit(run(os.Args[1:]))
}

// run executes aclc with args and returns the process exit code.
func run(args []string) int {
	rootCmd.SetArgs(args)
	err := rootCmd.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if !ee.silent && ee.err != nil {
			fmt.Fprintf(os.Stderr, "aclc: %v\n", ee.err)
		}
		return ee.code
	}
	fmt.Fprintf(os.Stderr, "aclc: %v\n", err)
	if isUsageError(err) {
		return 2
	}
	return 1
}

// isUsageError recognizes the usage errors cobra itself returns (unknown
// command, wrong number of arguments), which exit 2 like flag errors.
func isUsageError(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command ", "accepts ", "requires at least ", "requires exactly "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return strings.Contains(msg, "arg(s), received")
}
