package watch_test

import (
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
	"github.com/aclc/aclc/watch"
)

// TestWatchFollowsNorthdVersion: the watcher compiles for the version of
// the ovn-northd that serves the NB, and follows it when another takes
// over (an upgrade rewrites NB_Global options:northd_internal_version): on
// a 26.03 NB no northd has run on it assumes 26.03's newest verified
// version; when 26.03.0's northd version appears it rebuilds every switch
// for 26.03.0 (which lacks the EVPN flows of evpn-vni), and a version aclc
// cannot vouch for stops it with an error naming it.
func TestWatchFollowsNorthdVersion(t *testing.T) {
	r0 := release.MustLookup("26.03.1") // the NB's schema: Debian sid's
	sb, ctx := startReleaseNB(t, r0)
	snap, err := nbschema.LoadFixtureWith("../testdata/fixtures/evpn-vni.yaml", nbschema.FixtureOptions{Release: r0})
	if err != nil {
		t.Fatal(err)
	}
	nb, err := nbschema.Connect(ctx, nbschema.Options{Remotes: sb.NB})
	if err != nil {
		t.Fatal(err)
	}
	err = nbschema.Store(ctx, nb.Client, snap, nbschema.StoreOptions{Replace: true})
	nb.Close()
	if err != nil {
		t.Fatal(err)
	}
	w := startWatch(t, sb.NB, watch.Config{})
	want := func(v string) *lflow.Listing {
		return compile.CompileWith(snap, compile.Options{Release: release.MustLookup(v)}).Flows
	}
	w.waitSnapshot(t, "26.03's newest (no northd has run)", want(release.MustLookup("26.03").Name()), 10*time.Second)

	if _, err := sb.NBCtl(ctx, "set", "NB_Global", ".", `options:northd_internal_version="26.03.0-21.8.0-80.1"`); err != nil {
		t.Fatal(err)
	}
	old, new := want(release.MustLookup("26.03").Name()), want("26.03.0")
	if len(lflow.Diff(old, new)) == 0 {
		t.Fatal("evpn-vni compiles alike for 26.03.0 and 26.03's newest: the test shows nothing")
	}
	w.waitSnapshot(t, "26.03.0 once its northd took over", new, 10*time.Second)
	if !strings.Contains(w.logs.String(), "another ovn-northd serves the NB") {
		t.Errorf("no log line for the change of northd:\n%s", w.logs.String())
	}

	if _, err := sb.NBCtl(ctx, "set", "NB_Global", ".", `options:northd_internal_version="26.03.9-21.8.0-80.1"`); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-w.done:
		if err == nil || !strings.Contains(err.Error(), "newer than") || !strings.Contains(err.Error(), "--ovn-version") {
			t.Errorf("watch over an NB of 26.03.9 stopped with %v; want a refusal naming the version", err)
		}
		w.done <- nil // the cleanup expects a result
	case <-time.After(10 * time.Second):
		t.Fatal("watch went on over an NB of a version aclc cannot vouch for")
	}
}
