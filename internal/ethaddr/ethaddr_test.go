package ethaddr

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnroot"
	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
)

// addresses are MAC spellings at the edges of "%hhx": digit counts,
// prefixes, signs, overflow, trailing text.
var addresses = []string{
	"00:00:00:00:00:01", "0:0:0:0:0:1", "00:00:00:00:00:0002", "0x0:0:0:0:0:3",
	"00:00:00:00:00:04x", "000:00:00:00:00:05", "1ff:0:0:0:0:6", "-1:0:0:0:0:7",
	"0X8:0:0:0:0:8", "0:0:0:0:0:9:10", "+1:0:0:0:0:a", "A:B:C:D:E:F",
	"0:0:0:0:0:fffffffff", "0:0:0:0:1:7fffffffffffffff", "0:0:0:0:2:8000000000000000",
	"0:0:0:0:3:ffffffffffffffffffff", "0:0:0:0:4:-8000000000000000", "0:0:0:0:6:0x",
	"0:0:0:0:7:+-1", "0:0:0:0:8:0xg", "0:0:0:0:9", "0::0:0:0:a", ":0:0:0:0:0:b",
}

// TestNorthd gives each address to each release's northd as an LSP's
// "MAC 10.0.0.N": Scan must read what its ls_in_l2_lkup flow "eth.dst ==
// MAC" says (northd scans the entry's start), Parse must accept exactly
// the addresses it makes ls_in_arp_rsp flows for (extract_addresses, which
// wants the address to end there), and each address as a router port's
// MAC gets the admission flow "eth.dst == MAC" exactly when Parse reads
// it. An address ovn-nbctl refuses is
// entered with a plain db-set, and northd must make neither flow.
func TestNorthd(t *testing.T) {
	for _, r := range testenv.LiveReleases(t) {
		t.Run(r.Name(), func(t *testing.T) {
			t.Parallel()
			if ovnroot.OnHost(r) {
				testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovn-northd", "ovn-nbctl", "ovn-sbctl")
			}
			testenv.NeedRelease(t, r)
			sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{Release: r})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(sb.Stop)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args := []string{"ls-add", "sw"}
			for i, a := range addresses {
				p := fmt.Sprintf("p%d", i)
				args = append(args, "--", "lsp-add", "sw", p, "--", "set", "Logical_Switch_Port", p,
					fmt.Sprintf("addresses=%q", fmt.Sprintf("%s 10.0.0.%d", a, i+1)))
			}
			// The same addresses as router port MACs: northd takes a port
			// whose MAC eth_addr_from_string reads (Parse), else warns.
			args = append(args, "--", "lr-add", "r")
			for i, a := range addresses {
				p := fmt.Sprintf("r%d", i)
				args = append(args, "--", "lrp-add", "r", p, "00:00:00:00:00:01", fmt.Sprintf("10.%d.0.1/24", i+1),
					"--", "set", "Logical_Router_Port", p, fmt.Sprintf("mac=%q", a))
			}
			if _, err := sb.NBCtl(ctx, args...); err != nil {
				t.Fatal(err)
			}
			if err := sb.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			flows, err := sb.SBCtl(ctx, "lflow-list", "sw")
			if err != nil {
				t.Fatal(err)
			}
			rflows, err := sb.SBCtl(ctx, "lflow-list", "r")
			if err != nil {
				t.Fatal(err)
			}
			lrp := map[string]string{}
			for _, m := range regexp.MustCompile(`lr_in_admission *\), priority=50 *, match=\(eth.dst == ([0-9a-f:]+) && inport == "(r[0-9]+)"\)`).FindAllStringSubmatch(rflows, -1) {
				lrp[m[2]] = m[1]
			}
			l2 := map[string]string{}
			arp := map[string]bool{}
			for _, m := range regexp.MustCompile(`ls_in_l2_lkup *\), priority=50 *, match=\(eth.dst == ([0-9a-f:]+)\), action=\(outport = "(p[0-9]+)"`).FindAllStringSubmatch(flows, -1) {
				l2[m[2]] = m[1]
			}
			for _, m := range regexp.MustCompile(`ls_in_arp_rsp *\), priority=100 *, match=\(arp.tpa == [0-9.]+ && arp.op == 1 && [^)]*inport == "(p[0-9]+)"\)`).FindAllStringSubmatch(flows, -1) {
				arp[m[1]] = true
			}
			for i, in := range addresses {
				p := fmt.Sprintf("p%d", i)
				a, _, ok := Scan(in + " 10.0.0.1")
				if got := map[bool]string{true: a.String()}[ok]; got != l2[p] {
					t.Errorf("Scan(%q) = %q, northd's L2 lookup flow has %q", in, got, l2[p])
				}
				if _, err := Parse(in); (err == nil) != arp[p] {
					t.Errorf("Parse(%q): error %v, northd made ARP responder flows: %v", in, err, arp[p])
				}
				r := fmt.Sprintf("r%d", i)
				a, err := Parse(in)
				if got := map[bool]string{true: a.String()}[err == nil]; got != lrp[r] {
					t.Errorf("Parse(%q) = %q, northd's router admission flow has %q", in, got, lrp[r])
				}
			}
			if len(l2) == 0 || len(arp) == 0 || len(lrp) == 0 {
				t.Fatalf("no flows to compare:\n%s", flows)
			}
		})
	}
}
