package nbschema_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/ovn-kubernetes/libovsdb/ovsdb"

	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/release"
)

// libovsdbSnapshot reads the NB the way aclc watch does: libovsdb
// Connect, Monitor and Snapshot.
func libovsdbSnapshot(t *testing.T, remote string) *nbschema.Snapshot {
	t.Helper()
	ctx := context.Background()
	nb := connect(t, remote)
	if err := nb.Monitor(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := nb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nb.Close()
	return s
}

// TestReadTablesMatchMonitor checks that the fast reader asks for the
// tables and columns libovsdb's Monitor does.
func TestReadTablesMatchMonitor(t *testing.T) {
	sb := sandbox(t)
	fast, monitor, errs := nbschema.ReadColumns(connect(t, sb.NB))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if diff := cmp.Diff(monitor, fast); diff != "" {
		t.Errorf("fast reader columns differ from monitoredTables (-monitor +fast):\n%s", diff)
	}
}

// TestFastReadEqualsLibovsdb stores fixtures and generated NBs in a real
// NB and checks that the fast reader, with either read method, gives
// exactly the Snapshot libovsdb's path gives, down to empty-versus-nil,
// set order and Origin.
func TestFastReadEqualsLibovsdb(t *testing.T) {
	sb := sandbox(t)
	type nbCase struct {
		name string
		snap func(t *testing.T) *nbschema.Snapshot
	}
	var cases []nbCase
	files, err := filepath.Glob("../testdata/fixtures/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range append([]string{fullFixture}, files...) {
		cases = append(cases, nbCase{filepath.Base(f), func(t *testing.T) *nbschema.Snapshot {
			s, _ := loadForRelease(t, f, release.MustLookup("23.03.1")) // the host NB's release
			return s
		}})
	}
	for _, acls := range []int{2000, 5000} {
		cases = append(cases, nbCase{"nbgen-" + strconv.Itoa(acls), func(*testing.T) *nbschema.Snapshot {
			p := nbgen.Default()
			p.ACLs, p.Switches, p.PortGroups, p.AddressSets, p.LoadBalancers, p.Seed = acls, 50, 100, 200, 20, uint64(acls)
			return nbgen.Generate(p)
		}})
	}
	cases = append(cases, nbCase{"empty", func(*testing.T) *nbschema.Snapshot { return nbschema.NewSnapshot() }})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snap := tc.snap(t)
			if snap == nil {
				return // 23.03 cannot express the fixture
			}
			if err := store(t, sb.NB, snap, nbschema.StoreOptions{Replace: true}); err != nil {
				t.Fatal(err)
			}
			want := libovsdbSnapshot(t, sb.NB)
			// Small buffers put buffer refills at every position of
			// the reply.
			for _, buf := range []int{0, 16, 37} {
				if buf > 0 {
					defer nbschema.SetReadBufferSize(buf)()
				}
				for _, method := range []string{"pipelined", "transact", "monitor"} {
					got, err := nbschema.FastRead(context.Background(), nbschema.Options{Remotes: sb.NB}, method)
					if err != nil {
						t.Fatalf("%s, buffer %d: %v", method, buf, err)
					}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("%s, buffer %d: fast reader differs from libovsdb (-libovsdb +fast):\n%.4000s", method, buf, diff)
					}
				}
			}
			got := loadLive(t, sb.NB)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("LoadLive differs from libovsdb (-libovsdb +LoadLive):\n%.4000s", diff)
			}
		})
	}
}

// muteSocket returns the unix: remote of a socket that accepts
// connections but never answers.
func muteSocket(t *testing.T) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "mute.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	return "unix:" + sock
}

// TestLoadLiveErrors checks the fast reader's connection errors: the same
// messages as libovsdb's Connect gives.
func TestLoadLiveErrors(t *testing.T) {
	sb := sandbox(t)
	dir := t.TempDir()
	down := "unix:" + filepath.Join(dir, "nb.sock")
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not pem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mute := muteSocket(t)
	tests := []struct {
		name string
		opts nbschema.Options
		want []string // substrings of the error; none: success
	}{
		{"unreachable", nbschema.Options{Remotes: down + ",tcp:127.0.0.1:1"},
			[]string{"cannot reach NB at " + down + ",tcp:127.0.0.1:1"}},
		{"wrong database", nbschema.Options{Remotes: sb.SB},
			[]string{"has no OVN_Northbound database", "serves OVN_Southbound", "that is the OVN Southbound database"}},
		{"no answer", nbschema.Options{Remotes: mute, Timeout: 300 * time.Millisecond},
			[]string{"did not answer within 300ms"}},
		{"passive remote", nbschema.Options{Remotes: "punix:/x"}, []string{`NB remote "punix:/x" is a passive (listening) remote`}},
		{"ssl without files", nbschema.Options{Remotes: "ssl:127.0.0.1:6641"},
			[]string{"ssl: NB remote needs a private key (-p), certificate (-c) and CA certificate (-C)"}},
		{"garbage certificate", nbschema.Options{Remotes: "ssl:127.0.0.1:6641", PrivateKey: garbage, Certificate: garbage, CACert: garbage},
			[]string{"private key " + garbage + ": no PEM data"}},
		{"member down", nbschema.Options{Remotes: down + "," + sb.NB}, nil},
		{"SB then NB", nbschema.Options{Remotes: sb.SB + "," + sb.NB}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := nbschema.LoadLive(context.Background(), nbschema.Options{Remotes: tt.opts.Remotes,
				PrivateKey: tt.opts.PrivateKey, Certificate: tt.opts.Certificate, CACert: tt.opts.CACert,
				Timeout: max(tt.opts.Timeout, 2*time.Second)})
			if tt.opts.Timeout > 0 {
				_, err = nbschema.LoadLive(context.Background(), tt.opts)
			}
			if len(tt.want) == 0 {
				if err != nil {
					t.Errorf("got %v, want success", err)
				}
				return
			}
			for _, w := range tt.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("got %v, want %q", err, w)
				}
			}
		})
	}
}

// TestPipelinedReadConsistent reads an NB with LoadLive while another
// client commits as fast as it can, each transaction changing an ACL's
// match and an address set's addresses to the same generation: a read
// that mixed tables of two states would show two generations. The
// pipelined read alone, without LoadLive's retry, must meet such a
// commit (errConcurrentCommit) at least once, or the test proves nothing.
func TestPipelinedReadConsistent(t *testing.T) {
	defer nbschema.SetReadMethod("pipelined")()
	sb := sandbox(t)
	p := nbgen.Default()
	p.ACLs, p.Switches, p.PortGroups, p.AddressSets, p.Seed = 5000, 50, 100, 200, 5
	if err := store(t, sb.NB, nbgen.Generate(p), nbschema.StoreOptions{Replace: true}); err != nil {
		t.Fatal(err)
	}
	base := loadLive(t, sb.NB)
	var aclUUID, asUUID string
	for u := range base.ACLs {
		aclUUID = max(aclUUID, u)
	}
	for u := range base.AddressSets {
		asUUID = max(asUUID, u)
	}
	gen := func(s *nbschema.Snapshot) (acl, as string) {
		acl, _ = strings.CutPrefix(s.ACLs[aclUUID].Match, "ip4.src == 10.9.")
		if a := s.AddressSets[asUUID].Addresses; len(a) == 1 {
			as, _ = strings.CutPrefix(a[0], "10.9.")
		}
		return acl, as
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := connect(t, sb.NB)
	defer w.Close()
	commits := make(chan int, 1)
	go func() {
		defer close(commits)
		n := 0
		for ctx.Err() == nil {
			n++
			v := strconv.Itoa(n/250) + "." + strconv.Itoa(n%250)
			_, err := w.Client.Transact(ctx,
				ovsdb.Operation{Op: ovsdb.OperationUpdate, Table: "ACL", Where: []ovsdb.Condition{{Column: "_uuid", Function: ovsdb.ConditionEqual, Value: ovsdb.UUID{GoUUID: aclUUID}}},
					Row: ovsdb.Row{"match": "ip4.src == 10.9." + v}},
				ovsdb.Operation{Op: ovsdb.OperationUpdate, Table: "Address_Set", Where: []ovsdb.Condition{{Column: "_uuid", Function: ovsdb.ConditionEqual, Value: ovsdb.UUID{GoUUID: asUUID}}},
					Row: ovsdb.Row{"addresses": ovsdb.OvsSet{GoSet: []any{"10.9." + v}}}})
			if err != nil && ctx.Err() == nil {
				t.Errorf("commit %d: %v", n, err)
				return
			}
		}
		commits <- n
	}()
	conflicts := 0
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; i < 20 || (conflicts == 0 && time.Now().Before(deadline)); i++ {
		if _, err := nbschema.FastRead(ctx, nbschema.Options{Remotes: sb.NB}, "pipelined"); nbschema.IsConcurrentCommit(err) {
			conflicts++
		} else if err != nil {
			t.Fatal(err)
		}
		s := loadLive(t, sb.NB)
		if acl, as := gen(s); acl == "" || acl != as {
			t.Fatalf("read %d: ACL %s has generation %q, address set %s %q: not one state of the NB", i, aclUUID, acl, asUUID, as)
		}
	}
	cancel()
	n := <-commits
	t.Logf("%d commits during the reads; the pipelined read alone met one %d times", n, conflicts)
	if conflicts == 0 {
		t.Errorf("no pipelined read met a commit: the test did not exercise the guard")
	}
}
