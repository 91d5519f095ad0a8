package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/ctnetlink"
)

var ctLoadCmd = &cobra.Command{
	Use:   "load FILE",
	Short: "Insert conntrack entries from a file of conntrack -R lines, in batches",
	Long: `load reads FILE, one entry per line in conntrack-tools' -R format, e.g.

  -I -w 123 -s 1.1.1.1 -d 2.2.2.2 -p tcp --sport 1 --dport 1 --state LISTEN -u SEEN_REPLY -t 50

(tcp, udp, icmp and icmpv6; see ctnetlink.ParseLoad for every option), and
inserts the entries with many requests per sendmsg. The whole file is parsed
first: a bad line is reported as FILE:LINE and nothing is inserted. If the
table fills up (ENOMEM) load stops and reports how many entries went in.
Entries that already exist are left alone and counted.`,
	Args: exactArgs(1),
	RunE: func(cmd *cobra.Command, args []string) error {
		load, err := ctnetlink.OpenLoad(args[0])
		if err != nil {
			return err
		}
		defer load.Close()
		var res ctnetlink.CreateResult
		err = ctWithConn(func(c *ctnetlink.Conn) error {
			res, err = c.CreateLoad(load)
			return err
		})
		if errors.Is(err, ctnetlink.ErrTableFull) {
			return fmt.Errorf("conntrack table full: inserted %d of %d entries from %s (%d already present) before the kernel refused more: %w",
				res.Inserted, load.Len(), args[0], res.Existing, err)
		}
		if err != nil {
			return fmt.Errorf("%s: inserted %d of %d entries: %w", args[0], res.Inserted, load.Len(), err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "inserted %d entries from %s (%d already present)\n", res.Inserted, args[0], res.Existing)
		return nil
	},
}

func init() { ctCmd.AddCommand(ctLoadCmd) }
