package lint

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/aclc/aclc/acl/expr"
	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/trace"
)

// TestTierClaimsAgainstTrace checks lint's tier-aware claims on random
// tiered ACL sets of both directions with aclc trace (itself differential-tested against each
// release's ovn-trace, trace/release_differential_test.go): over a fixed
// universe of packets, an ACL lint proves shadowed never decides one, a
// pass lint says no later tier picks up matches no packet that a later
// tier's ACL decides after it, no same-priority overlap is reported
// between ACLs of different tiers, and each ingress stateless-mark
// warning has a packet the stateless ACL matches, marked in ls_in_pre_acl
// and decided by one of the ACLs it names.
func TestTierClaimsAgainstTrace(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 2603))
	terms := []string{"tcp", "udp", "tcp && tcp.dst == 22", "tcp && tcp.dst == 80", "tcp && tcp.dst < 1024",
		"udp && udp.dst == 53", "ip4.src == 10.0.0.1", "ip4.src == 10.0.0.0/24", "ip4.src == 10.0.1.0/24", "tcp && tcp.dst >= 443"}
	actions := []string{"allow", "allow-related", "drop", "pass", "pass", "drop", "allow-stateless"}
	type pkt struct{ src, l4 string }
	var universe []pkt
	for _, src := range []string{"10.0.0.1", "10.0.0.7", "10.0.1.5"} {
		for _, l4 := range []string{"tcp && tcp.dst == 22", "tcp && tcp.dst == 80", "tcp && tcp.dst == 443", "tcp && tcp.dst == 8080",
			"tcp && tcp.dst == 23", "udp && udp.dst == 53", "udp && udp.dst == 123"} {
			universe = append(universe, pkt{src, l4})
		}
	}
	ct, err := trace.ParseCTState("new")
	if err != nil {
		t.Fatal(err)
	}
	shadowChecks, passChecks, markConfirmed, markWarnings := 0, 0, 0, 0
	for iter := range 250 {
		var b strings.Builder
		b.WriteString("switches:\n  - name: sw0\n    ports:\n")
		b.WriteString("      - {name: p1, addresses: [\"00:00:00:00:00:01 10.0.0.1\"]}\n")
		b.WriteString("      - {name: p2, addresses: [\"00:00:00:00:00:02 10.0.0.2\"]}\n    acls:\n")
		n := 3 + rng.IntN(6)
		used := map[[2]int]bool{} // per tier and priority, both directions alike
		for i := range n {
			tier := rng.IntN(4)
			prio := 100 * (1 + rng.IntN(5))
			for used[[2]int{tier, prio}] { // one ACL per tier and priority: no undefined order
				prio += 10
			}
			used[[2]int{tier, prio}] = true
			m := "ip4 && " + terms[rng.IntN(len(terms))]
			if rng.IntN(2) == 0 {
				m += " && " + terms[rng.IntN(len(terms))]
			}
			dir := "to-lport"
			if rng.IntN(2) == 0 {
				dir = "from-lport"
			}
			fmt.Fprintf(&b, "      - {name: a%d, direction: %s, priority: %d, tier: %d, match: %q, action: %s}\n",
				i, dir, prio, tier, m, actions[rng.IntN(len(actions))])
		}
		fixture := b.String()
		snap, err := nbschema.ParseFixture(fmt.Sprintf("random-%d.yaml", iter), []byte(fixture))
		if err != nil {
			t.Fatalf("fixture %d: %v\n%s", iter, err, fixture)
		}
		snap.Release = release.MustLookup("26.03.1")
		rep, err := Lint(snap)
		if err != nil {
			t.Fatal(err)
		}
		tr := trace.New(snap, compile.Compile(snap).Flows)
		byName := map[string]*ACLRef{}
		for _, id := range nbschema.SortedKeys(snap.ACLs) {
			a := snap.ACLs[id]
			byName[*a.Name] = &ACLRef{UUID: id, Priority: a.Priority}
		}
		tierOfName := func(name string) int {
			return snap.ACLs[byName[name].UUID].Tier
		}
		// decided[i] is the ACLs (names) that decide universe[i] in
		// ingress and egress, "" for the default or a flow of no ACL;
		// marked[i] the allow-stateless ACL that marked it in ingress.
		decided := make([][2]string, len(universe))
		marked := make([]string, len(universe))
		matches := make([]map[string]bool, len(universe))
		for i, p := range universe {
			flow := fmt.Sprintf(`inport == "p1" && eth.src == 00:00:00:00:00:01 && eth.dst == 00:00:00:00:00:02 && ip4.src == %s && ip4.dst == 10.0.0.2 && ip.ttl == 64 && %s`, p.src, p.l4)
			res, err := tr.Trace(flow, trace.Options{CT: []trace.CTState{ct, ct}})
			if err != nil {
				t.Fatalf("trace %q: %v", flow, err)
			}
			for _, d := range res.Decisions {
				if d.Flow.ACL != nil {
					decided[i][pipeIndex(d.Pipeline)] = d.Flow.ACL.Name
				}
			}
			for _, d := range res.Stateless {
				if d.Pipeline == "ingress" && d.Flow.ACL != nil {
					marked[i] = d.Flow.ACL.Name
				}
			}
			matches[i] = map[string]bool{}
			for name, ref := range byName {
				if ok, err := evalMatch(snap.ACLs[ref.UUID].Match, p.src, p.l4); err != nil {
					t.Fatal(err)
				} else if ok {
					matches[i][name] = true
				}
			}
		}
		for _, f := range rep.Findings {
			name := f.ACLs[0].Name
			switch {
			case f.Rule == RuleShadowed && !strings.HasPrefix(f.Message, "undecidable"):
				shadowChecks++
				for i, d := range decided {
					if d[pipeOf(snap, byName[name].UUID)] == name {
						t.Errorf("fixture %d: lint says %s is shadowed, but trace has it decide %+v\n%s\n%s", iter, name, universe[i], f.Message, fixture)
					}
				}
			case f.Rule == RuleUnpickedPass:
				passChecks++
				for i := range universe {
					d := decided[i][pipeOf(snap, byName[name].UUID)]
					if !matches[i][name] || d == "" {
						continue
					}
					if tierOfName(d) > tierOfName(name) {
						t.Errorf("fixture %d: lint says no later tier picks up %s, but %s (tier %d) decides %+v, which it matches\n%s", iter, name, d, tierOfName(d), universe[i], fixture)
					}
				}
			case f.Rule == RuleStatelessMark && f.Severity == Warning && snap.ACLs[byName[name].UUID].Direction == "from-lport":
				// Some packet of the universe marked by the stateless ACL
				// and decided by one of the listed ACLs confirms it.
				markWarnings++
				ok := false
				for i := range universe {
					// marked by any stateless flow (the highest-priority one
					// of the ACLs that match it writes the mark)
					if marked[i] != "" && matches[i][name] && slices.ContainsFunc(f.ACLs[1:], func(r ACLRef) bool { return r.Name == decided[i][0] }) {
						markConfirmed++
						ok = true
						break
					}
				}
				if !ok { // with this seed the universe has a packet for each
					t.Errorf("fixture %d: no packet of the universe confirms %s: %s\n%s", iter, name, f.Message, fixture)
				}
			case f.Rule == RuleSamePriority:
				if tierOfName(name) != tierOfName(f.ACLs[1].Name) {
					t.Errorf("fixture %d: same-priority overlap across tiers: %s, %s\n%s", iter, name, f.ACLs[1].Name, fixture)
				}
			}
		}
	}
	if shadowChecks < 50 || passChecks < 20 || markConfirmed < 5 {
		t.Errorf("too few claims checked: %d shadowed, %d pass-to-default, %d stateless-mark confirmed", shadowChecks, passChecks, markConfirmed)
	}
	t.Logf("%d shadowed and %d pass-to-default claims checked against aclc trace, %d of %d ingress stateless-mark warnings confirmed by a packet", shadowChecks, passChecks, markConfirmed, markWarnings)
}

// evalMatch reports whether a match of the property test's vocabulary
// matches a packet from src with l4 (ip4 to 10.0.0.2).
func evalMatch(match, src, l4 string) (bool, error) {
	d := compile.Dialect(release.MustLookup("26.03.1"))
	mf, err := d.ParseMicroflow("ip4.src == "+src+" && ip4.dst == 10.0.0.2 && ip.ttl == 64 && "+l4, nil)
	if err != nil {
		return false, err
	}
	e, err := d.Parse(match, nil)
	if err != nil {
		return false, err
	}
	return expr.Eval(e, mf, nil)
}

// pipeIndex is 0 for the ingress pipeline, 1 for egress.
func pipeIndex(p string) int {
	if p == "egress" {
		return 1
	}
	return 0
}

// pipeOf is the pipeline index of ACL id's stage.
func pipeOf(snap *nbschema.Snapshot, id string) int {
	if snap.ACLs[id].Direction == "to-lport" {
		return 1
	}
	return 0
}
