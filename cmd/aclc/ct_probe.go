package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/ctnetlink"
)

var ctProbeFlags struct {
	refresh, noCache bool
	format           string
}

var ctProbeCmd = &cobra.Command{
	Use:   "probe",
	Short: "Say whether this kernel honours the conntrack zone filter for flush and dump, and how that was decided",
	Long: `probe reports whether a delete or dump request carrying only a zone is
limited to that zone on this kernel (Linux >= 6.8 with the zone-0 fix, or a
backport). The answer comes from an experiment in a throwaway network
namespace, never from the kernel version: one entry in each of zones 0, 1 and
2, dumps of zones 0 and 2, a zone-only delete of zone 1. The result is cached
per boot (kernel release and boot ID) in /run/aclc; --refresh probes again.
--netns does not matter here: the probe always uses its own namespace.`,
	Args: exactArgs(0),
	RunE: func(cmd *cobra.Command, args []string) error {
		if ctProbeFlags.format != "text" && ctProbeFlags.format != "json" {
			return withCode(2, fmt.Errorf("--format: want text or json, got %q", ctProbeFlags.format))
		}
		s, err := ctnetlink.Detect(ctnetlink.DetectOptions{Refresh: ctProbeFlags.refresh, NoCache: ctProbeFlags.noCache})
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if ctProbeFlags.format == "json" {
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			return enc.Encode(s)
		}
		verdict := "supported: zone flushes are one kernel request"
		if !s.ZoneFlush {
			verdict = "NOT supported: zone flushes dump the zone and delete its entries in batches"
		}
		fmt.Fprintf(out, "zone filter: %s\n", verdict)
		fmt.Fprintf(out, "  flush honours zone: %v\n  dump honours zone:  %v\n", s.ZoneFlush, s.ZoneDump)
		fmt.Fprintf(out, "kernel: %s, boot %s\n", s.KernelRelease, s.BootID)
		fmt.Fprintf(out, "decided by: %s\n", s.Detail)
		fmt.Fprintf(out, "probed at %s; answer from %s\n", s.ProbedAt.Format("2006-01-02 15:04:05Z07:00"), s.Source)
		return nil
	},
}

func init() {
	f := ctProbeCmd.Flags()
	f.BoolVar(&ctProbeFlags.refresh, "refresh", false, "ignore the per-boot cache, probe again and rewrite it")
	f.BoolVar(&ctProbeFlags.noCache, "no-cache", false, "neither read nor write the per-boot cache")
	f.StringVar(&ctProbeFlags.format, "format", "text", "text or json")
	ctCmd.AddCommand(ctProbeCmd)
}
