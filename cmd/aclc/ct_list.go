package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/netip"

	"github.com/spf13/cobra"

	"github.com/aclc/aclc/ctnetlink"
)

var ctListFlags struct {
	zone   ctZoneFlag
	format string
}

var ctListCmd = &cobra.Command{
	Use:   "list --zone N",
	Short: "List the entries of one zone, streaming, like conntrack -L -w N",
	Long: `list prints the entries of the zone as the kernel sends them, in
conntrack -L's text format or, with --format json, as one JSON object per
line. It sends one dump request carrying the zone; kernels before 6.8 return
every zone and the others are dropped here.`,
	Args: exactArgs(0),
	RunE: func(cmd *cobra.Command, args []string) error {
		zone, family, err := ctListFlags.zone.parse(cmd)
		if err != nil {
			return err
		}
		if ctListFlags.format != "text" && ctListFlags.format != "json" {
			return withCode(2, fmt.Errorf("--format: want text or json, got %q", ctListFlags.format))
		}
		w := bufio.NewWriterSize(cmd.OutOrStdout(), 64<<10)
		enc := json.NewEncoder(w)
		line := make([]byte, 0, 256)
		err = ctWithConn(func(c *ctnetlink.Conn) error {
			return c.DumpZone(zone, family, func(e ctnetlink.Entry) error {
				if ctListFlags.format == "json" {
					return enc.Encode(ctJSONEntryOf(e))
				}
				line = append(e.AppendText(line[:0]), '\n')
				_, err := w.Write(line)
				return err
			})
		})
		if ferr := w.Flush(); err == nil {
			err = ferr
		}
		return err
	},
}

var ctCountFlags struct{ zone ctZoneFlag }

var ctCountCmd = &cobra.Command{
	Use:   "count --zone N",
	Short: "Print how many conntrack entries one zone holds",
	Args:  exactArgs(0),
	RunE: func(cmd *cobra.Command, args []string) error {
		zone, family, err := ctCountFlags.zone.parse(cmd)
		if err != nil {
			return err
		}
		return ctWithConn(func(c *ctnetlink.Conn) error {
			n, err := c.CountZone(zone, family)
			if err == nil {
				fmt.Fprintln(cmd.OutOrStdout(), n)
			}
			return err
		})
	},
}

// ctJSONTuple and ctJSONEntry are the --format json shape of an entry.
type ctJSONTuple struct {
	Src      netip.Addr `json:"src"`
	Dst      netip.Addr `json:"dst"`
	Sport    *uint16    `json:"sport,omitempty"`
	Dport    *uint16    `json:"dport,omitempty"`
	ICMPType *uint8     `json:"icmp_type,omitempty"`
	ICMPCode *uint8     `json:"icmp_code,omitempty"`
	ICMPID   *uint16    `json:"icmp_id,omitempty"`
}

type ctJSONEntry struct {
	Family   string      `json:"family"`
	Proto    uint8       `json:"proto"`
	Zone     uint16      `json:"zone"`
	ID       uint32      `json:"id"`
	Timeout  uint32      `json:"timeout"`
	State    string      `json:"state,omitempty"`
	Status   string      `json:"status"`
	Mark     uint32      `json:"mark"`
	Use      uint32      `json:"use"`
	Original ctJSONTuple `json:"original"`
	Reply    ctJSONTuple `json:"reply"`
}

func ctJSONEntryOf(e ctnetlink.Entry) ctJSONEntry {
	j := ctJSONEntry{
		Family: e.Family.String(), Proto: e.Orig.Proto.Protocol, Zone: e.Zone, ID: e.ID,
		Timeout: e.Timeout, Status: e.Status.String(), Mark: e.Mark, Use: e.Use,
		Original: ctJSONTupleOf(e.Orig), Reply: ctJSONTupleOf(e.Reply),
	}
	if e.Orig.Proto.Protocol == 6 {
		j.State = e.TCPState.String()
	}
	return j
}

func ctJSONTupleOf(t ctnetlink.Tuple) ctJSONTuple {
	j := ctJSONTuple{Src: t.IP.SourceAddress, Dst: t.IP.DestinationAddress}
	p := t.Proto
	switch {
	case p.ICMPv4 || p.ICMPv6:
		j.ICMPType, j.ICMPCode, j.ICMPID = &p.ICMPType, &p.ICMPCode, &p.ICMPID
	case p.SourcePort != 0 || p.DestinationPort != 0:
		j.Sport, j.Dport = &p.SourcePort, &p.DestinationPort
	}
	return j
}

func init() {
	ctListFlags.zone.register(ctListCmd)
	ctListCmd.Flags().StringVar(&ctListFlags.format, "format", "text", "text (like conntrack -L) or json (one object per line)")
	ctCountFlags.zone.register(ctCountCmd)
	ctCmd.AddCommand(ctListCmd, ctCountCmd)
}
