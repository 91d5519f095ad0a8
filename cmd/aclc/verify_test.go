package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
)

// TestVerifyLive: against a real NB + SB + ovn-northd, verify reports no
// drift once northd has synced; after a hand edit of one SB Logical_Flow it
// reports exactly that flow and exits 1.
func TestVerifyLive(t *testing.T) {
	testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server", "ovn-northd", "ovn-nbctl", "ovn-sbctl")
	sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if r := aclc(t, "", "nb", "load", "--nb", sb.NB, "../../testdata/fixtures/pg-multi-switch.yaml"); r.code != 0 {
		t.Fatalf("nb load: %s", r.stderr)
	}
	if err := sb.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	r := aclc(t, "", "verify", "--nb", sb.NB, "--sb", sb.SB)
	if r.code != 0 || !strings.HasPrefix(r.stdout, "in sync:") {
		t.Fatalf("after sync: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Edit one ACL flow in the SB by hand (northd would put it back on its
	// next recompute; stop it first so the drift stays).
	sb.StopNorthd()
	sb2 := sb
	uuid, err := sb2.SBCtl(ctx, "--bare", "--columns=_uuid", "find", "Logical_Flow",
		`match="reg0[7] == 1 && (outport == @pg_web && ip4 && tcp && tcp.dst == 443)"`)
	if err != nil {
		t.Fatal(err)
	}
	uuid = strings.TrimSpace(strings.Split(strings.TrimSpace(uuid), "\n")[0])
	if uuid == "" {
		t.Fatal("no SB flow for the pg_web allow-related ACL")
	}
	if _, err := sb2.SBCtl(ctx, "set", "Logical_Flow", uuid, `match="reg0[7] == 1 && (outport == @pg_web && ip4 && tcp && tcp.dst == 8443)"`); err != nil {
		t.Fatal(err)
	}
	r = aclc(t, "", "verify", "--nb", sb2.NB, "--sb", sb2.SB)
	if r.code != 1 {
		t.Fatalf("after SB edit: exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, w := range []string{
		`-  table=4 (ls_out_acl         ), priority=2001 , match=(reg0[7] == 1 && (outport == @pg_web && ip4 && tcp && tcp.dst == 8443))`,
		`+  table=4 (ls_out_acl         ), priority=2001 , match=(reg0[7] == 1 && (outport == @pg_web && ip4 && tcp && tcp.dst == 443))`,
		`@@ Datapath: "sw-a"  Pipeline: egress @@`, `@@ Datapath: "sw-b"  Pipeline: egress @@`,
	} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("verify output lacks %q:\n%s", w, r.stdout)
		}
	}
	if del, add := strings.Count(r.stdout, "\n-  table="), strings.Count(r.stdout, "\n+  table="); del != 2 || add != 2 {
		t.Errorf("verify reported %d removed and %d added flows, want 2 and 2 (one flow on each of the pg's two switches):\n%s", del, add, r.stdout)
	}
}
