package sbschema

import (
	"context"
	"fmt"
	"net/netip"

	"github.com/aclc/aclc/internal/ethaddr"
	"github.com/aclc/aclc/internal/ovsdbconn"
)

// MACBinding is one row of the SB MAC_Binding table: the neighbours
// ovn-controller learned (ip on logical_port is at mac), which a router's
// get_arp/get_nd read.
type MACBinding struct {
	LogicalPort string
	IP          netip.Addr
	MAC         ethaddr.Addr
}

// LoadMACBindings reads the SB MAC_Binding table. A row whose ip or mac
// does not parse is skipped, as ovn-trace's read_mac_bindings skips it;
// bad names the first such row (for a warning).
func LoadMACBindings(ctx context.Context, opts ovsdbconn.Options) (out []MACBinding, bad string, err error) {
	var rows []struct {
		LogicalPort string `json:"logical_port"`
		IP          string `json:"ip"`
		MAC         string `json:"mac"`
	}
	if err := selectAll(ctx, opts, "MAC_Binding", []string{"logical_port", "ip", "mac"}, &rows, ""); err != nil {
		return nil, "", err
	}
	for _, r := range rows {
		ip, err1 := netip.ParseAddr(r.IP)
		mac, err2 := ethaddr.Parse(r.MAC)
		if err1 != nil || err2 != nil {
			if bad == "" {
				bad = fmt.Sprintf("MAC_Binding logical_port=%s ip=%q mac=%q", r.LogicalPort, r.IP, r.MAC)
			}
			continue
		}
		out = append(out, MACBinding{LogicalPort: r.LogicalPort, IP: ip, MAC: mac})
	}
	return out, bad, nil
}
