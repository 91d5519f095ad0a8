package nbview_test

import (
	"math/big"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/internal/ethaddr"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/nbview"
)

// TestPortSecurityFormsAgree holds port security's two forms equal:
// PortSecurityOf's matches (what reach takes as sets) evaluated on a
// packet, and PortSecPacket.Allowed (what trace executes), over random
// port_security columns and random packets of each ethertype — ICMPv6 ND
// from the port aside, which the sets leave out (PortSecurityND).
func TestPortSecurityFormsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	macs := []string{"0a:00:00:00:00:01", "0a:00:00:00:00:02", "0a:00:00:00:00:03"}
	ip4s := []string{"10.0.0.1", "10.0.0.2", "0.0.0.0", "255.255.255.255", "224.0.0.5", "10.9.9.9"}
	ip6s := []string{"fd00::1", "fd00::2", "fe80::800:ff:fe00:1", "fe80::800:ff:fe00:2", "ff02::1", "fd00::9"}
	pick := func(l []string) string { return l[r.IntN(len(l))] }
	checked := map[bool]int{}
	for i := 0; i < 400; i++ {
		var col []string
		for n := r.IntN(3) + 1; n > 0; n-- {
			e := []string{pick(macs)}
			for k := r.IntN(3); k > 0; k-- {
				if r.IntN(2) == 0 {
					e = append(e, pick(ip4s[:2])+[]string{"", "/24"}[r.IntN(2)])
				} else {
					e = append(e, pick(ip6s[:2])+[]string{"", "/64"}[r.IntN(2)])
				}
			}
			col = append(col, strings.Join(e, " "))
		}
		p := &nbdb.LogicalSwitchPort{Name: "p", PortSecurity: col}
		entries := nbview.PortSecurityEntries(p)
		for _, ingress := range []bool{true, false} {
			ps, ok := nbview.PortSecurityOf(p, ingress)
			if !ok {
				t.Fatalf("%q: no port security", col)
			}
			// Typed ∪ (Other − Known): eth.type is nominal, so the
			// difference is taken on the evaluations
			typed, other, known := parse(t, ps.Typed), parse(t, ps.Other), parse(t, ps.Known)
			for j := 0; j < 50; j++ {
				m, pk := randomPacket(t, r, pick(macs), pick, ip4s, ip6s)
				if ingress && pk.EthType == 0x86dd && pk.IPProto == 58 && (pk.ICMP6Type == 135 || pk.ICMP6Type == 136) {
					continue
				}
				want := eval(t, typed, m) || eval(t, other, m) && !eval(t, known, m)
				if got := pk.Allowed(entries, ingress); got != want {
					t.Fatalf("port_security %q, ingress %v, packet %s: Allowed says %v, the sets %v", col, ingress, m, got, want)
				}
				checked[want]++
			}
		}
	}
	if checked[true] < 1000 || checked[false] < 1000 {
		t.Fatalf("too few packets of each kind: %v", checked)
	}
}

func parse(t *testing.T, s string) *expr.Expr {
	t.Helper()
	e, err := expr.Parse(s, nil)
	if err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return e
}

func eval(t *testing.T, e *expr.Expr, m *expr.Microflow) bool {
	t.Helper()
	ok, err := expr.Eval(e, m, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// randomPacket is a packet of a random ethertype with fields from the
// pools, as a microflow and as port security reads it.
func randomPacket(t *testing.T, r *rand.Rand, other string, pick func([]string) string, ip4s, ip6s []string) (*expr.Microflow, nbview.PortSecPacket) {
	m := expr.NewMicroflow()
	var pk nbview.PortSecPacket
	set := func(f string, v *big.Int) {
		if err := m.Set(f, v); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	mac := func(f string, s string) ethaddr.Addr {
		a, _ := ethaddr.Parse(s)
		set(f, new(big.Int).SetBytes(a[:]))
		return a
	}
	addr := func(f string, s string) netip.Addr {
		a := netip.MustParseAddr(s)
		set(f, new(big.Int).SetBytes(a.AsSlice()))
		return a
	}
	num := func(f string, v uint64) uint64 { set(f, new(big.Int).SetUint64(v)); return v }
	pk.EthSrc = mac("eth.src", []string{other, "0a:00:00:00:00:01", "0a:00:00:00:00:02"}[r.IntN(3)])
	pk.EthDst = mac("eth.dst", []string{other, "0a:00:00:00:00:01", "0a:00:00:00:00:02"}[r.IntN(3)])
	pk.EthType = uint16(num("eth.type", []uint64{0x800, 0x806, 0x86dd, 0x88cc}[r.IntN(4)]))
	switch pk.EthType {
	case 0x800:
		pk.IP4Src, pk.IP4Dst = addr("ip4.src", pick(ip4s)), addr("ip4.dst", pick(ip4s))
		pk.IPProto = uint8(num("ip.proto", []uint64{6, 17}[r.IntN(2)]))
		if pk.IPProto == 17 {
			pk.UDPSrc, pk.UDPDst = uint16(num("udp.src", []uint64{68, 53}[r.IntN(2)])), uint16(num("udp.dst", []uint64{67, 53}[r.IntN(2)]))
		}
	case 0x806:
		pk.ARPSha = mac("arp.sha", []string{other, "0a:00:00:00:00:01"}[r.IntN(2)])
		pk.ARPSpa = addr("arp.spa", pick(ip4s))
	case 0x86dd:
		pk.IP6Src, pk.IP6Dst = addr("ip6.src", pick(ip6s)), addr("ip6.dst", pick(ip6s))
		pk.IPProto = uint8(num("ip.proto", []uint64{6, 58}[r.IntN(2)]))
		if pk.IPProto == 58 {
			pk.ICMP6Type = uint8(num("icmp6.type", []uint64{128, 135, 136}[r.IntN(3)]))
		}
	}
	return m, pk
}

// TestPortSecurityND is ovn-trace's check of ICMPv6 ND from a port with
// port security (check_in_port_sec_ip6), which the sets leave out.
func TestPortSecurityND(t *testing.T) {
	p := &nbdb.LogicalSwitchPort{Name: "p", PortSecurity: []string{"0a:00:00:00:00:01 fd00::1"}}
	own, _ := ethaddr.Parse("0a:00:00:00:00:01")
	other, _ := ethaddr.Parse("0a:00:00:00:00:09")
	lla := netip.MustParseAddr("fe80::800:ff:fe00:1")
	base := nbview.PortSecPacket{EthSrc: own, EthType: 0x86dd, IPProto: 58, IP6Src: lla}
	for _, c := range []struct {
		name string
		edit func(*nbview.PortSecPacket)
		want bool
	}{
		{"NS without sll", func(pk *nbview.PortSecPacket) { pk.ICMP6Type = 135 }, true},
		{"NS with own sll", func(pk *nbview.PortSecPacket) { pk.ICMP6Type, pk.NDSll = 135, own }, true},
		{"NS with other sll", func(pk *nbview.PortSecPacket) { pk.ICMP6Type, pk.NDSll = 135, other }, false},
		{"NA for own address", func(pk *nbview.PortSecPacket) { pk.ICMP6Type, pk.NDTarget = 136, netip.MustParseAddr("fd00::1") }, true},
		{"NA for link-local", func(pk *nbview.PortSecPacket) { pk.ICMP6Type, pk.NDTarget = 136, lla }, true},
		{"NA for other address", func(pk *nbview.PortSecPacket) { pk.ICMP6Type, pk.NDTarget = 136, netip.MustParseAddr("fd00::2") }, false},
		{"NA with other tll", func(pk *nbview.PortSecPacket) {
			pk.ICMP6Type, pk.NDTarget, pk.NDTll = 136, netip.MustParseAddr("fd00::1"), other
		}, false},
		{"NA from other source", func(pk *nbview.PortSecPacket) {
			pk.ICMP6Type, pk.NDTarget, pk.IP6Src = 136, netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::7")
		}, false},
	} {
		pk := base
		c.edit(&pk)
		if got := pk.Allowed(nbview.PortSecurityEntries(p), true); got != c.want {
			t.Errorf("%s: Allowed = %v, want %v", c.name, got, c.want)
		}
	}
}
