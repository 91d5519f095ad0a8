package ovsdbconn_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovsdbconn"
	"github.com/aclc/aclc/internal/raftnb"
)

var nb = ovsdbconn.Target{DB: "OVN_Northbound", Label: "NB"}

// TestDialRawCluster: against a 3-member Raft NB listed followers first,
// a one-shot reader connects to the leader, or with NoLeaderOnly to the
// first follower; once a member has lost the rest of its cluster it is
// used by neither, and the error says why.
func TestDialRawCluster(t *testing.T) {
	c := raftnb.Start(t)
	ctx := context.Background()
	leader := c.WaitLeader(30 * time.Second)
	var order []string
	var followers []*raftnb.Member
	for _, m := range c.Members {
		if m != leader {
			order = append(order, m.Remote)
			followers = append(followers, m)
		}
	}
	order = append(order, leader.Remote)
	remotes := strings.Join(order, ",")

	conn, remote, err := ovsdbconn.DialRaw(ctx, nb, ovsdbconn.Options{Remotes: remotes})
	if err != nil {
		t.Fatalf("DialRaw: %v", err)
	}
	conn.Close()
	if remote != leader.Remote {
		t.Errorf("leader-only DialRaw chose %s, want the leader %s", remote, leader.Remote)
	}

	conn, remote, err = ovsdbconn.DialRaw(ctx, nb, ovsdbconn.Options{Remotes: remotes, NoLeaderOnly: true})
	if err != nil {
		t.Fatalf("DialRaw --no-leader-only: %v", err)
	}
	conn.Close()
	if remote != order[0] {
		t.Errorf("DialRaw with NoLeaderOnly chose %s, want the first remote %s", remote, order[0])
	}

	// Only the leader listed: leader-only asks again until the timeout,
	// then names the follower.
	_, _, err = ovsdbconn.DialRaw(ctx, nb, ovsdbconn.Options{Remotes: followers[0].Remote, Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), followers[0].Remote+" is a follower") || !strings.Contains(err.Error(), "--no-leader-only") {
		t.Errorf("DialRaw of a follower alone: %v, want it named as a follower", err)
	}

	// Cut one member off: kill the two others. Once it notices, it is
	// used neither as leader nor as follower.
	c.Kill(leader)
	c.Kill(followers[1])
	lone := followers[0]
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, _, err = ovsdbconn.DialRaw(ctx, nb, ovsdbconn.Options{Remotes: lone.Remote, NoLeaderOnly: true, Timeout: time.Second})
		if err != nil && strings.Contains(err.Error(), lone.Remote+" is not connected to its cluster") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("DialRaw of a member cut off from its cluster: %v, want it refused as not connected", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
