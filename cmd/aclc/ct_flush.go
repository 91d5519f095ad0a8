package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/ctnetlink"
)

var ctFlushFlags struct {
	zone   ctZoneFlag
	force  bool
	method string
}

var ctFlushCmd = &cobra.Command{
	Use:   "flush --zone N",
	Short: "Delete every conntrack entry of one zone",
	Long: `flush deletes every entry of the zone. On a kernel that honours the zone
filter (see aclc ct probe) that is one delete request carrying the zone;
otherwise the zone is dumped and its entries deleted in batches, each delete
carrying the entry's tuple, zone and conntrack ID. Zone 0, the default zone
of all untagged traffic, needs --force.`,
	Args: exactArgs(0),
	RunE: func(cmd *cobra.Command, args []string) error {
		zone, family, err := ctFlushFlags.zone.parse(cmd)
		if err != nil {
			return err
		}
		if zone == 0 && !ctFlushFlags.force {
			return withCode(2, errors.New("zone 0 holds all untagged connections; flushing it needs --force"))
		}
		method, err := ctnetlink.ParseMethod(ctFlushFlags.method)
		if err != nil {
			return withCode(2, fmt.Errorf("--method: %w", err))
		}
		var res ctnetlink.FlushResult
		if err := ctWithConn(func(c *ctnetlink.Conn) error {
			res, err = c.FlushZone(zone, ctnetlink.FlushOptions{Family: family, Method: method})
			return err
		}); err != nil {
			if method != ctnetlink.MethodFallback && res.Support.Source == "" && errors.Is(err, ctnetlink.ErrPermission) {
				return fmt.Errorf("%w\n(deciding between the kernel zone filter and the fallback needs the probe: run `aclc ct probe` as root once per boot, or use --method fallback)", err)
			}
			return err
		}
		out := cmd.OutOrStdout()
		if res.Counted {
			fmt.Fprintf(out, "flushed zone %d (%s): %d deleted, %d already gone (%s)\n", zone, family, res.Deleted, res.Gone, ctFlushWhy(res))
		} else {
			fmt.Fprintf(out, "flushed zone %d (%s) with the kernel zone filter (%s)\n", zone, family, ctFlushWhy(res))
		}
		return nil
	},
}

// ctFlushWhy says how the flush method was chosen.
func ctFlushWhy(res ctnetlink.FlushResult) string {
	switch {
	case res.Support.Source == "":
		return "fallback requested"
	case res.Method == ctnetlink.MethodKernel:
		return "kernel support from " + res.Support.Source
	}
	return "fallback: kernel ignores the zone filter, per " + res.Support.Source
}

func init() {
	ctFlushFlags.zone.register(ctFlushCmd)
	f := ctFlushCmd.Flags()
	f.BoolVar(&ctFlushFlags.force, "force", false, "allow flushing zone 0")
	f.StringVar(&ctFlushFlags.method, "method", "auto", "auto, kernel (refused unless the probe shows support) or fallback")
	ctCmd.AddCommand(ctFlushCmd)
}
