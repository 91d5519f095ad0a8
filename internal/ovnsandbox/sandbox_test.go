package ovnsandbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnroot"
	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
)

// TestStartEachRelease starts every release's NB + SB + northd (two at once
// per release, as parallel tests do), checks that each runs that release's
// binaries and schema, and that northd turns an NB switch into an SB
// datapath.
func TestStartEachRelease(t *testing.T) {
	for _, r := range testenv.LiveReleases(t) {
		t.Run(r.Name(), func(t *testing.T) {
			t.Parallel()
			testenv.NeedRelease(t, r)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var sbs []*ovnsandbox.Sandbox
			for i := 0; i < 2; i++ {
				sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{Release: r})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(sb.Stop)
				sbs = append(sbs, sb)
			}
			if sbs[0].Dir == sbs[1].Dir {
				t.Fatalf("two sandboxes share %s", sbs[0].Dir)
			}
			if !ovnroot.OnHost(r) && !strings.HasPrefix(sbs[0].Dir, ovnroot.Dir(r)+"/") {
				t.Errorf("run dir %s is not under the root %s", sbs[0].Dir, ovnroot.Dir(r))
			}
			for i, sb := range sbs {
				ver, err := sb.NBCtl(ctx, "--version")
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(ver, " "+r.Name()+"\n") {
					t.Errorf("ovn-nbctl --version = %q, want %s", ver, r.Name())
				}
				schema, err := sb.Run(ctx, "ovsdb-client", "get-schema-version", sb.NB, "OVN_Northbound")
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.TrimSpace(schema); got != r.NBSchema {
					t.Errorf("NB schema %s, want %s", got, r.NBSchema)
				}
				schema, err = sb.Run(ctx, "ovsdb-client", "get-schema-version", sb.SB, "OVN_Southbound")
				if err != nil {
					t.Fatal(err)
				}
				if got := strings.TrimSpace(schema); got != r.SBSchema {
					t.Errorf("SB schema %s, want %s", got, r.SBSchema)
				}
				name := "sw" + string(rune('0'+i))
				if _, err := sb.NBCtl(ctx, "ls-add", name); err != nil {
					t.Fatal(err)
				}
				if err := sb.Sync(ctx); err != nil {
					t.Fatal(err)
				}
				out, err := sb.SBCtl(ctx, "--bare", "--columns=external_ids", "list", "Datapath_Binding")
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(out, "name="+name) {
					t.Errorf("SB datapaths %q lack %s", out, name)
				}
			}
		})
	}
}
