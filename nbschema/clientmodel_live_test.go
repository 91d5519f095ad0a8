package nbschema_test

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/nbschema"
	"github.com/aclc/aclc/nbschema/nbdb"
	"github.com/aclc/aclc/release"
)

// schemaNB serves the NB schema file with the host's ovsdb-server (the
// schema is data: any ovsdb-server serves any schema) and returns its
// remote.
func schemaNB(t *testing.T, schema string) string {
	t.Helper()
	testenv.NeedBinaries(t, "ovsdb-server", "ovsdb-tool")
	dir := t.TempDir()
	db, sock := filepath.Join(dir, "nb.db"), filepath.Join(dir, "nb.sock")
	if out, err := exec.Command("ovsdb-tool", "create", db, schema).CombinedOutput(); err != nil {
		t.Fatalf("ovsdb-tool create: %v: %s", err, out)
	}
	cmd := exec.Command("ovsdb-server", "--no-chdir", "--remote=punix:"+sock,
		"--unixctl="+filepath.Join(dir, "nb.ctl"), "--log-file="+filepath.Join(dir, "nb.log"), db)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// The socket file appears at bind(), before listen(): wait until a
	// connection is accepted.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ovsdb-server does not listen on %s", sock)
		}
	}
	return "unix:" + sock
}

const plainFixture = `
switches:
  - name: sw0
    ports:
      - {name: p1, addresses: ["00:00:00:00:00:01 10.0.0.1"]}
      - {name: p2, addresses: ["00:00:00:00:00:02 10.0.0.2"]}
    acls:
      - {direction: from-lport, priority: 1001, match: "ip4 && tcp", action: allow-related}
port_groups:
  - name: pg1
    ports: [p1, p2]
    acls:
      - {direction: to-lport, priority: 1000, match: "outport == @pg1 && ip4.src == $as1", action: drop}
address_sets:
  - {name: as1, addresses: [10.0.0.1, 10.0.0.2]}
`

// TestClientModelsLive: an NB of every committed schema (23.03's 7.0.0 to
// 26.09's 7.19.0) is spoken to with its schema's client model, whatever
// release value names it (ClientModel goes by NBSchema), and a snapshot
// goes through it unchanged by Store, the fast reader and libovsdb's
// cache. On 7.18.0 and 7.19.0 the network-function fixture does too, and
// a network function without outport (optional since 7.19.0) goes through
// 7.19.0 and is refused by 7.18.0, naming the column.
func TestClientModelsLive(t *testing.T) {
	files, err := filepath.Glob("nbdb/*/ovn-nb.ovsschema")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "nbdb/ovn-nb.ovsschema")
	for _, file := range files {
		var s struct {
			Version string `json:"version"`
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatal(err)
		}
		v := s.Version
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			remote := schemaNB(t, file)
			// A release value of its own, as a patch release of a
			// supported series would be.
			r := &release.Release{Version: release.MustVersion("99.99.0"), NBSchema: v}
			opts := nbschema.Options{Remotes: remote, Release: r}
			ctx := context.Background()
			nb, err := nbschema.Connect(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer nb.Close()
			want, err := nbschema.ParseFixture("plain.yaml", []byte(plainFixture))
			if err != nil {
				t.Fatal(err)
			}
			hasNF := nbschema.HasTable(r, nbdb.NetworkFunctionTable)
			if hasNF {
				if want, err = nbschema.LoadFixture("testdata/sampling-nf.yaml"); err != nil {
					t.Fatal(err)
				}
			}
			// The schema's model says whether outport is optional (a
			// pointer) or required.
			cm, err := nbschema.ClientModelFor(v)
			if err != nil {
				t.Fatal(err)
			}
			optionalOutport := false
			var vtap *nbdb.NetworkFunction
			if hasNF {
				f, _ := cm.Types()[nbdb.NetworkFunctionTable].Elem().FieldByName("Outport")
				optionalOutport = f.Type.Kind() == reflect.Pointer
				vtap = &nbdb.NetworkFunction{UUID: nbschema.DerivedUUID(nbdb.NetworkFunctionTable, "vtap"), Name: "nf-vtap", ID: 2}
				for u, p := range want.Ports {
					if p.Name == "nf-in" {
						vtap.Inport = u
					}
				}
				want.NetworkFunctions[vtap.UUID] = vtap
			}
			err = nbschema.Store(ctx, nb.Client, want, nbschema.StoreOptions{})
			switch {
			case hasNF && !optionalOutport:
				if err == nil || !strings.Contains(err.Error(), "Network_Function "+vtap.UUID) || !strings.Contains(err.Error(), "column outport") {
					t.Fatalf("Store of a network function without outport: %v, want an error naming it and the column", err)
				}
				delete(want.NetworkFunctions, vtap.UUID)
				if err := nbschema.Store(ctx, nb.Client, want, nbschema.StoreOptions{}); err != nil {
					t.Fatal(err)
				}
			case err != nil:
				t.Fatal(err)
			}
			live, err := nbschema.LoadLive(ctx, opts)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, live, snapshotCmp...); diff != "" {
				t.Errorf("(-stored +fast reader):\n%s", diff)
			}
			if err := nb.Monitor(ctx); err != nil {
				t.Fatal(err)
			}
			cached, err := nb.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, cached, snapshotCmp...); diff != "" {
				t.Errorf("(-stored +libovsdb):\n%s", diff)
			}
			if optionalOutport && (live.NetworkFunctions[vtap.UUID] == nil || live.NetworkFunctions[vtap.UUID].Outport != nil) {
				t.Errorf("network function without outport read back as %+v", live.NetworkFunctions[vtap.UUID])
			}
		})
	}
}
