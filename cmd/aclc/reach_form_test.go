package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aclc/aclc/acl/expr"
)

// reachFormFixture has a port group's named ACLs with a CMS's
// external_ids, a switch ACL, and a default.
const reachFormFixture = `switches:
  - name: ls
    ports:
      - {name: p1, addresses: ["00:00:00:00:00:01 10.0.0.1"]}
      - {name: p2, addresses: ["00:00:00:00:00:02 10.0.0.2"]}
    acls:
      - {direction: from-lport, priority: 100, match: "ip4", action: allow-related}
port_groups:
  - name: pg_web
    ports: [p2]
    acls:
      - {direction: to-lport, priority: 1001, match: "outport == @pg_web && tcp && tcp.dst == {80, 443}", action: allow-related, name: allow-web, external_ids: {"k8s.ovn.org/name": web, "k8s.ovn.org/owner-type": NetworkPolicy}}
      - {direction: to-lport, priority: 1000, match: "outport == @pg_web && ip4", action: drop, name: default-deny}
`

// TestReachCLIACLsAndMatch checks the deciding ACLs as objects and the
// parts' match in aclc reach's JSON and text: the web traffic's part
// names the port group's ACL with its name, tier, action, pipeline and
// external_ids, and its match (read back) is TCP to ports 80 and 443;
// the non-IP part is decided by the stages' defaults, named by stage.
func TestReachCLIACLsAndMatch(t *testing.T) {
	fx := filepath.Join(t.TempDir(), "web.yaml")
	if err := os.WriteFile(fx, []byte(reachFormFixture), 0o644); err != nil {
		t.Fatal(err)
	}
	r := aclc(t, "", "reach", fx, "--from", "p1", "--to", "p2", "--format", "json")
	if r.code != 3 { // the ARP/ND part
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var web, defaults, switchACL bool
	notOVN := 0
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var l reachLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatal(err)
		}
		if l.Match == "" || l.MatchError != "" || l.MatchTruncated {
			t.Errorf("no whole match: %s", line)
			continue
		}
		if strings.Contains(l.Match, "inport") || strings.Contains(l.Match, "outport") {
			t.Errorf("match names the pair: %s", line)
		}
		if _, err := expr.OVN2303().ParseNegatedNominals(l.Match, nil); err != nil {
			t.Errorf("match %q does not parse: %v", l.Match, err)
		}
		if l.MatchOVN == nil || *l.MatchOVN != (expr.OVN2303().Valid(l.Match, nil) == nil) {
			t.Errorf("match_ovn wrong: %s", line)
		}
		if l.MatchOVN != nil && !*l.MatchOVN {
			notOVN++
		}
		if l.Verdict == "allow" && len(l.ACLs) == 2 && l.ACLs[1].Name == "allow-web" {
			web = true
			a := l.ACLs[1]
			if a.Owner != "pg_web" || a.OwnerType != "Port_Group" || a.Direction != "to-lport" || a.Priority != 1001 || a.Action != "allow-related" ||
				a.Pipeline != "egress" || a.ExternalIDs["k8s.ovn.org/name"] != "web" || a.UUID == "" || a.UUID == "default" {
				t.Errorf("web ACL: %+v", a)
			}
			if i := l.ACLs[0]; i.UUID != "default" && (i.Owner != "ls" || i.OwnerType != "Logical_Switch" || i.Name != "" || i.Pipeline != "ingress" || i.Priority != 100) {
				t.Errorf("switch ACL: %+v", i)
			}
			switchACL = switchACL || l.ACLs[0].Owner == "ls"
			if !strings.Contains(l.Match, "tcp.dst == {80, 443}") || strings.Contains(line, `"name":""`) {
				t.Errorf("web part: %s", line)
			}
		}
		if l.Verdict == "allow" && !l.Conntrack && len(l.ACLs) == 2 && l.ACLs[0].UUID == "default" && l.ACLs[1].UUID == "default" {
			defaults = true
			if l.ACLs[0].Stage == "" || l.ACLs[0].Pipeline != "ingress" || l.ACLs[1].Pipeline != "egress" || l.ACLs[0].Owner != "" {
				t.Errorf("defaults: %s", line)
			}
			if !strings.Contains(l.Match, "!(ip || arp)") {
				t.Errorf("the non-IPv4 part's match: %s", l.Match)
			}
		}
	}
	if notOVN == 0 {
		t.Error("no match negates a nominal test (the IPv6 default part is every packet but some protocols')")
	}
	if !web || !defaults || !switchACL {
		t.Errorf("web part %v (switch ACL %v), default part %v in %s", web, switchACL, defaults, r.stdout)
	}
	r = aclc(t, "", "reach", fx, "--from", "p1", "--to", "p2")
	for _, want := range []string{"acls=ls/from-lport/100,pg_web/allow-web/to-lport/1001", "acls=default(ingress),default(egress)", "\n    match: ip4 && !vlan.present && tcp.dst == {80, 443} && "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("text output lacks %q:\n%s", want, r.stdout)
		}
	}
}
