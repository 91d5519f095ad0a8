package trace_test

import (
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
)

// TestTraceSBNeighbors: with --sb, aclc trace reads the SB's MAC_Binding
// table as ovn-trace does: a router's next hop with a binding is resolved
// (get_arp, get_nd), a neighbour's ARP reply is found bound
// (lookup_arp); without --sb the table is empty, the router sends an ARP
// request (flooded on the next switch), and a warning says so. On 23.03.1 and 26.03.1, against the real
// ovn-trace on the same SB, through the CLI.
func TestTraceSBNeighbors(t *testing.T) {
	bin := aclc(t)
	run := func(t *testing.T, sb *ovnsandbox.Sandbox, r *release.Release) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		snap, err := nbschema.LoadFixtureWith("../testdata/routers/two-switches.yaml", nbschema.FixtureOptions{Release: r})
		if err != nil {
			t.Fatal(err)
		}
		loadNB(t, ctx, sb, snap)
		for _, b := range [][3]string{
			{"lrp1", "10.1.0.99", "00:00:00:00:01:99"},
			{"lrp1", "fd01::99", "00:00:00:00:01:99"},
			{"lrp0", "10.0.0.1", "00:00:00:00:00:01"},
		} {
			dp, err := sb.SBCtl(ctx, "--bare", "--columns=datapath", "find", "Port_Binding", "logical_port="+b[0])
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sb.SBCtl(ctx, "create", "MAC_Binding", "logical_port="+b[0], fmt.Sprintf("ip=%q", b[1]),
				fmt.Sprintf("mac=%q", b[2]), "datapath="+strings.TrimSpace(dp)); err != nil {
				t.Fatal(err)
			}
		}
		flows := []struct {
			name, flow string
			ct         []string
			bound      bool // the SB binds what the router looks up
		}{
			{"next-hop-v4", routed("p1", "00:00:00:00:00:01", "00:00:00:00:ff:01", "10.0.0.1", "10.1.0.99", "tcp && tcp.dst == 80", 64), []string{"new"}, true},
			{"next-hop-v6", routed("p1", "00:00:00:00:00:01", "00:00:00:00:ff:01", "fd00::1", "fd01::99", "udp && udp.dst == 53", 64), []string{"new"}, true},
			{"arp-reply-bound", `inport == "p1" && eth.src == 00:00:00:00:00:01 && eth.dst == 00:00:00:00:ff:01 && arp.op == 2 && arp.sha == 00:00:00:00:00:01 && arp.spa == 10.0.0.1 && arp.tha == 00:00:00:00:ff:01 && arp.tpa == 10.0.0.254`, nil, true},
			{"next-hop-unbound", routed("p1", "00:00:00:00:00:01", "00:00:00:00:ff:01", "10.0.0.1", "10.1.0.97", "tcp && tcp.dst == 80", 64), []string{"new"}, false},
		}
		for _, f := range flows {
			t.Run(f.name, func(t *testing.T) {
				args := []string{}
				for _, c := range f.ct {
					args = append(args, "--ct", c)
				}
				args = append(args, f.flow)
				for _, mode := range []string{"--minimal", "--detailed"} {
					want, err := sb.Run(ctx, "ovn-trace", append([]string{"--db=" + sb.SB, mode}, args...)...)
					if err != nil {
						t.Fatal(err)
					}
					cmd := exec.CommandContext(ctx, bin, append([]string{"trace", "--nb", sb.NB, "--sb", sb.SB, "--ovn-version", r.Name(), mode}, args...)...)
					var stderr strings.Builder
					cmd.Stderr = &stderr
					got, err := cmd.Output()
					if err != nil {
						t.Fatalf("aclc trace --sb %s: %v\n%s", mode, err, stderr.String())
					}
					if strings.Contains(stderr.String(), "no SB given") {
						t.Errorf("aclc trace --sb warns that no SB was given:\n%s", stderr.String())
					}
					if mode == "--minimal" {
						if diff := cmp.Diff(minimalBody(want), minimalBody(string(got))); diff != "" {
							t.Errorf("--minimal differs (-ovn-trace +aclc):\n%s", diff)
						}
						continue
					}
					// the neighbour lookups ovn-trace reports, in order
					w, g := macBindingNotes(want), macBindingNotes(string(got))
					if diff := cmp.Diff(w, g); diff != "" {
						t.Errorf("MAC binding lookups differ (-ovn-trace +aclc):\n%s", diff)
					}
					found := strings.Contains(strings.Join(w, "\n"), "MAC binding to")
					if found != f.bound {
						t.Errorf("ovn-trace found a binding: %v, the test expects %v:\n%s", found, f.bound, want)
					}
				}
			})
		}
		// Without --sb: the router asks for the next hop, with a warning.
		cmd := exec.CommandContext(ctx, bin, "trace", "--nb", sb.NB, "--ovn-version", r.Name(), "--minimal", "--ct", "new", flows[0].flow)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		got, _ := cmd.Output()
		if !strings.Contains(string(got), "arp {") || !strings.Contains(stderr.String(), "no SB given (--sb)") {
			t.Errorf("without --sb: want the router's ARP request and a warning, got:\n%s\nstderr:\n%s", got, stderr.String())
		}
	}
	t.Run("23.03.1", func(t *testing.T) { run(t, startSandbox(t), release.MustLookup("23.03.1")) })
	t.Run("26.03.1", func(t *testing.T) {
		r := release.MustLookup("26.03.1")
		run(t, releaseSandbox(t, r), r)
	})
}

var macBindingNote = regexp.MustCompile(`/\* (No MAC binding|MAC binding[^*]*|lookup failed - No MAC binding)\. \*/`)

// macBindingNotes lists the neighbour lookups of a --detailed trace.
func macBindingNotes(detailed string) []string {
	var out []string
	for _, m := range macBindingNote.FindAllStringSubmatch(detailed, -1) {
		out = append(out, m[1])
	}
	return out
}
