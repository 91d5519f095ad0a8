package trace_test

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/internal/ovnroot"
	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/trace"
)

// portAddr is a port's MAC and IPv4/IPv6 addresses, made up when the
// fixture gives none.
type portAddr struct{ name, mac, ip4, ip6 string }

func portAddrs(snap *nbschema.Snapshot, swID string) []portAddr {
	var out []portAddr
	for i, pid := range snap.Switches[swID].Ports {
		p := snap.Ports[pid]
		if p == nil || p.Type != "" {
			continue
		}
		a := portAddr{name: p.Name, mac: fmt.Sprintf("00:00:5e:00:%02x:%02x", len(out), i),
			ip4: fmt.Sprintf("10.99.%d.%d", len(out), i+1), ip6: fmt.Sprintf("fd99::%d:%d", len(out), i+1)}
		for _, s := range p.Addresses {
			f := strings.Fields(s)
			if len(f) == 0 || !strings.Contains(f[0], ":") {
				continue
			}
			a.mac = f[0]
			for _, x := range f[1:] {
				if ip, err := netip.ParseAddr(x); err == nil {
					if ip.Is4() {
						a.ip4 = x
					} else {
						a.ip6 = x
					}
				}
			}
		}
		out = append(out, a)
	}
	return out
}

// TestDifferentialSweep traces a grid of packets through every switch of
// every repository fixture with both ovn-trace and aclc trace, and
// requires identical --minimal output, conntrack actions and verdicts: tcp
// and udp over IPv4 from the first port to the second (or, on a one-port
// switch, to an unknown MAC) with no conntrack, three new states and two
// est,rpl states, and an ARP request for the second port's address. ACLC_TRACE_SWEEP=full adds icmp4 and tcp over IPv6 and
// the reverse direction (a few minutes).
func TestDifferentialSweep(t *testing.T) {
	sweepFixtures(t, startSandbox(t), release.MustLookup("23.03.1"))
}

// TestDifferentialSweepRelease is TestDifferentialSweep on 25.03, 26.03 and
// 26.09: every fixture the release can express, into that release's NB
// and northd, traced with its own ovn-trace and with aclc trace on the
// flows aclc compiles for it. Where aclc says "not traced", ovn-trace
// must have taken the packet into what aclc does not model
// (checkNotTraced).
func TestDifferentialSweepRelease(t *testing.T) {
	forEachRelease(t, func(t *testing.T, sb *ovnsandbox.Sandbox, r *release.Release) { sweepFixtures(t, sb, r) })
}

// forEachRelease runs f for 26.09.0, 26.03.1 and 25.03.0 (Debian's: live
// in CI) and, where its source-built root exists, 24.03.9, each with a
// sandbox of that release's NB, SB and northd.
func forEachRelease(t *testing.T, f func(*testing.T, *ovnsandbox.Sandbox, *release.Release)) {
	rels := []*release.Release{release.MustLookup("26.09.0"), release.MustLookup("26.03.1"), release.MustLookup("25.03.0")}
	if r := release.MustLookup("24.03.9"); ovnroot.Check(r) == nil {
		rels = append(rels, r)
	}
	for _, r := range rels {
		t.Run(r.Name(), func(t *testing.T) {
			f(t, releaseSandbox(t, r), r)
		})
	}
}

// releaseSandbox starts a sandbox running release r's northd and
// ovn-trace for t (skipped, or failed in CI, where r cannot run).
func releaseSandbox(t *testing.T, r *release.Release) *ovnsandbox.Sandbox {
	t.Helper()
	testenv.NeedRelease(t, r)
	sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{Release: r})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sb.Stop)
	return sb
}

// sweepFixtures is the sweep of every fixture release r can express
// through sb, the sandbox running r's northd and ovn-trace.
func sweepFixtures(t *testing.T, sb *ovnsandbox.Sandbox, r *release.Release) {
	full := os.Getenv("ACLC_TRACE_SWEEP") == "full"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	files, _ := filepath.Glob("../testdata/fixtures/*.yaml")
	var total, notTraced, fixtures, skipped int
	for _, fx := range files {
		t.Run(strings.TrimSuffix(filepath.Base(fx), ".yaml"), func(t *testing.T) {
			snap, err := nbschema.LoadFixtureWith(fx, nbschema.FixtureOptions{Release: r})
			if err != nil {
				if loadsOnAnother(fx, r) {
					skipped++
					return // a fixture using what the release lacks
				}
				t.Fatalf("a bundled fixture does not load: %v", err)
			}
			fixtures++
			loadNB(t, ctx, sb, snap)
			live, err := nbschema.LoadLive(ctx, nbschema.Options{Remotes: sb.NB})
			if err != nil {
				t.Fatal(err)
			}
			if live.Release != r {
				t.Fatalf("live NB detected as OVN %v, want %s", live.Release, r)
			}
			tr := trace.New(live, compile.Compile(live).Flows)
			checkModelCovers(t, ctx, sb, live, tr)
			for _, sw := range nbschema.SortedKeys(live.Switches) {
				ps := portAddrs(live, sw)
				if len(ps) == 0 {
					continue
				}
				pairs := [][2]portAddr{{ps[0], ps[0]}}
				if len(ps) > 1 {
					pairs = [][2]portAddr{{ps[0], ps[1]}}
					if full {
						pairs = append(pairs, [2]portAddr{ps[1], ps[0]})
					}
				}
				// an ARP request from each localnet port for the first
				// VIF's address (the responder's localnet rules)
				for _, pid := range live.Switches[sw].Ports {
					if ln := live.Ports[pid]; ln != nil && ln.Type == "localnet" && ps[0].ip4 != "" {
						flow := fmt.Sprintf(`inport == %q && eth.src == 52:54:00:00:00:09 && eth.dst == ff:ff:ff:ff:ff:ff && arp.op == 1 && arp.sha == 52:54:00:00:00:09 && arp.spa == %s && arp.tpa == %s`, ln.Name, "192.0.2.9", ps[0].ip4)
						total++
						t.Run(ln.Name+">"+ps[0].name+"/arp", func(t *testing.T) {
							if sweepOne(t, ctx, sb, tr, flow, nil) {
								notTraced++
							}
						})
					}
				}
				for _, pr := range pairs {
					a, b := pr[0], pr[1]
					dstMAC := b.mac
					if a.name == b.name {
						dstMAC = "00:00:5e:00:ff:ff"
					}
					base4 := fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip4.src == %s && ip4.dst == %s && ip.ttl == 64`, a.name, a.mac, dstMAC, a.ip4, b.ip4)
					base6 := fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == %s && ip6.src == %s && ip6.dst == %s && ip.ttl == 64`, a.name, a.mac, dstMAC, a.ip6, b.ip6)
					flows := []string{base4 + " && tcp && tcp.dst == 80", base4 + " && udp && udp.dst == 53"}
					if full {
						flows = append(flows, base4+" && icmp4 && icmp4.type == 8", base6+" && tcp && tcp.dst == 443")
					}
					arp := fmt.Sprintf(`inport == %q && eth.src == %s && eth.dst == ff:ff:ff:ff:ff:ff && arp.op == 1 && arp.sha == %s && arp.spa == %s && arp.tpa == %s`, a.name, a.mac, a.mac, a.ip4, b.ip4)
					flows = append(flows, arp)
					for _, flow := range flows {
						ctss := [][]string{nil, {"new", "new", "new"}, {"est,rpl", "est,rpl"}}
						if flow == arp {
							ctss = ctss[:1] // ARP never reaches conntrack
						}
						for _, cts := range ctss {
							total++
							name := fmt.Sprintf("%s>%s/%s/%s", a.name, b.name, flow[strings.LastIndex(flow, "&& ")+3:], strings.Join(cts, "+"))
							t.Run(name, func(t *testing.T) {
								if sweepOne(t, ctx, sb, tr, flow, cts) {
									notTraced++
								}
							})
						}
					}
				}
			}
		})
	}
	t.Logf("OVN %s: %d packets over %d fixtures: %d identical to ovn-trace, %d not traced (checked); %d fixtures the release cannot express",
		r, total, fixtures, total-notTraced, notTraced, skipped)
}

// loadsOnAnother reports whether fixture fx loads on some verified
// release other than r: then its failure to load on r is r lacking what
// it uses (26.09's vtap network functions on 26.03, say), not a broken
// fixture.
func loadsOnAnother(fx string, r *release.Release) bool {
	for _, o := range release.All() {
		if o == r {
			continue
		}
		if _, err := nbschema.LoadFixtureWith(fx, nbschema.FixtureOptions{Release: o}); err == nil {
			return true
		}
	}
	return false
}
