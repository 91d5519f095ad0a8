package main

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/ctnetlink"
)

// ctCmd groups the conntrack zone commands (package ctnetlink).
var ctCmd = &cobra.Command{
	Use:   "ct",
	Short: "Flush, list, count and bulk-load conntrack zones through ctnetlink",
	Long: `ct works on the conntrack table of the current network namespace, or of
the one --netns (a name under /run/netns) or --netns-path selects. It needs
root or CAP_NET_ADMIN. Zone flushes use the kernel's zone filter when a
probe (aclc ct probe, cached per boot in /run/aclc) shows the kernel
honours it, and otherwise dump the zone and delete its entries in batches.`,
}

// ctFlags are the flags every ct subcommand shares.
var ctFlags struct {
	netns     string
	netnsPath string
}

func init() {
	pf := ctCmd.PersistentFlags()
	pf.StringVar(&ctFlags.netns, "netns", "", "run inside the named network namespace (/run/netns/NAME)")
	pf.StringVar(&ctFlags.netnsPath, "netns-path", "", "run inside the network namespace of this file (e.g. /proc/PID/ns/net)")
	rootCmd.AddCommand(ctCmd)
}

// ctDial opens the ctnetlink socket of the selected namespace.
func ctDial() (*ctnetlink.Conn, error) {
	if ctFlags.netns != "" && ctFlags.netnsPath != "" {
		return nil, withCode(2, errors.New("give either --netns or --netns-path, not both"))
	}
	c, err := ctnetlink.Dial(&ctnetlink.Config{NetNS: ctFlags.netns, NetNSPath: ctFlags.netnsPath})
	if err != nil {
		return nil, err
	}
	slog.Debug("ctnetlink socket open", "netns", ctFlags.netns, "netns-path", ctFlags.netnsPath)
	return c, nil
}

// ctWithConn runs fn with the selected namespace's socket, then closes it.
func ctWithConn(fn func(c *ctnetlink.Conn) error) error {
	c, err := ctDial()
	if err != nil {
		return err
	}
	defer c.Close()
	return fn(c)
}

// ctZoneFlag registers --zone (required) and --family on cmd.
type ctZoneFlag struct {
	zone   int
	family string
}

func (z *ctZoneFlag) register(cmd *cobra.Command) {
	cmd.Flags().IntVar(&z.zone, "zone", -1, "conntrack zone, 0-65535 (required)")
	cmd.Flags().StringVar(&z.family, "family", "any", "address family: ipv4, ipv6 or any")
}

// parse validates the flags; errors are usage errors (exit 2).
func (z *ctZoneFlag) parse(cmd *cobra.Command) (uint16, ctnetlink.Family, error) {
	if !cmd.Flags().Changed("zone") {
		return 0, 0, withCode(2, fmt.Errorf("%s: --zone is required", cmd.CommandPath()))
	}
	if err := ctnetlink.CheckZone(z.zone); err != nil {
		return 0, 0, withCode(2, fmt.Errorf("--zone: %w", err))
	}
	f, err := ctnetlink.ParseFamily(z.family)
	if err != nil {
		return 0, 0, withCode(2, fmt.Errorf("--family: %w", err))
	}
	return uint16(z.zone), f, nil
}
