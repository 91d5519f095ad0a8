package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aclc/aclc/internal/ovnsandbox"
	"github.com/aclc/aclc/internal/testenv"
	"github.com/aclc/aclc/release"
)

// TestCompileDetectsRelease: aclc compile --nb on each release's live NB
// compiles for that release without flags (its stage names in the output);
// an NB of a schema version no release has is refused with nothing on
// stdout, unless --ovn-version says which release to read it as.
func TestCompileDetectsRelease(t *testing.T) {
	const fx = "../../testdata/fixtures/seed-stateless.yaml"
	for _, r := range testenv.LiveReleases(t) {
		t.Run(r.Name(), func(t *testing.T) {
			testenv.NeedRelease(t, r)
			sb, err := ovnsandbox.Start(t.TempDir(), ovnsandbox.Options{NoNorthd: true, Release: r})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(sb.Stop)
			if l := aclc(t, "", "nb", "load", "--nb", sb.NB, fx); l.code != 0 {
				t.Fatalf("nb load: exit %d: %s", l.code, l.stderr)
			}
			c := aclc(t, "", "compile", "--nb", sb.NB)
			if c.code != 0 {
				t.Fatalf("compile --nb: exit %d: %s", c.code, c.stderr)
			}
			golden, err := os.ReadFile(filepath.Join("../../testdata/golden", r.Name(), "seed-stateless.lflows"))
			if err != nil {
				t.Fatal(err)
			}
			if c.stdout != string(golden) {
				t.Errorf("compile --nb on an OVN %s NB differs from that release's golden", r)
			}
			d := aclc(t, "", "nb", "dump", "--nb", sb.NB)
			if d.code != 0 || !strings.HasPrefix(d.stdout, "ovn: "+r.Name()+"\n") {
				t.Errorf("nb dump: exit %d, %.80q", d.code, d.stdout)
			}
		})
	}

	t.Run("unknown", func(t *testing.T) {
		testenv.NeedBinaries(t, "ovsdb-tool", "ovsdb-server")
		dir := t.TempDir()
		schema, err := os.ReadFile(ovnsandbox.NBSchema)
		if err != nil {
			t.Fatal(err)
		}
		schema = bytes.Replace(schema, []byte(`"version": "7.0.0"`), []byte(`"version": "7.99.1"`), 1)
		os.WriteFile(filepath.Join(dir, "nb.ovsschema"), schema, 0o644)
		db, sock := filepath.Join(dir, "nb.db"), filepath.Join(dir, "nb.sock")
		if out, err := exec.Command("ovsdb-tool", "create", db, filepath.Join(dir, "nb.ovsschema")).CombinedOutput(); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		srv := exec.Command("ovsdb-server", "--remote=punix:"+sock, "--unixctl="+filepath.Join(dir, "ctl"), db)
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
		for i := 0; i < 200; i++ {
			if _, err := os.Stat(sock); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(50 * time.Millisecond)
		c := aclc(t, "", "compile", "--nb", "unix:"+sock)
		if c.code == 0 || c.stdout != "" || !strings.Contains(c.stderr, "7.99.1") || !strings.Contains(c.stderr, "26.03.1 (NB schema 7.18.0)") {
			t.Errorf("unknown schema: exit %d, stdout %q, stderr %q", c.code, c.stdout, c.stderr)
		}
		c = aclc(t, "", "compile", "--nb", "unix:"+sock, "--ovn-version", "23.03")
		if c.code != 0 || !strings.Contains(c.stderr, "overrides") {
			t.Errorf("--ovn-version over an unknown schema: exit %d, stderr %q", c.code, c.stderr)
		}
		// Every command that reads the NB: refused without --ovn-version,
		// read as the given release with it.
		const flow = `inport == "nope" && eth.dst == 00:00:00:00:00:01`
		for _, args := range [][]string{{"trace", flow}, {"nb", "dump"}, {"lint"}, {"match", "check", "ip4"}} {
			c = aclc(t, "", append(args, "--nb", "unix:"+sock)...)
			if c.code != 1 || c.stdout != "" || !strings.Contains(c.stderr, "7.99.1") {
				t.Errorf("%s on an unknown schema: exit %d, stdout %q, stderr %q", args[0], c.code, c.stdout, c.stderr)
			}
		}
		c = aclc(t, "", "trace", flow, "--nb", "unix:"+sock, "--ovn-version", "23.03")
		if c.code != 2 || !strings.Contains(c.stderr, "overrides") || !strings.Contains(c.stderr, `unknown port "nope"`) {
			t.Errorf("trace --ovn-version over an unknown schema: exit %d, stderr %q", c.code, c.stderr)
		}
	})
}

// TestStageAndDiffEachRelease: --stage takes each release's own stage
// names (and says what the release calls another release's), and `aclc
// diff` compares a release's full `ovn-sbctl lflow-list` — every stage of
// its layout, routers' too — with `aclc compile --nb --sb`: equal, and one
// edited ACL-stage flow is reported in that release's stage name.
func TestStageAndDiffEachRelease(t *testing.T) {
	const fx = "../../testdata/fixtures/persist-established.yaml"
	stages := map[string][2]string{ // release -> a stage to keep, another release's name of a stage
		"23.03": {"ls_in_acl", "ls_in_acl_eval"},
		"25.03": {"ls_in_acl_sample", "ls_in_acl"},
		"26.03": {"ls_out_network_function", "ls_out_acl"},
		"26.09": {"ls_out_network_function", "ls_out_acl"},
	}
	for _, r := range release.All() {
		t.Run(r.Name(), func(t *testing.T) {
			t.Parallel()
			want := stages[r.Series()]
			kept := regexp.MustCompile(`^  table=\d+ ?\(` + want[0] + ` *\)`)
			c := aclc(t, "", "compile", "--ovn-version", r.Series(), "--stage", want[0], fx)
			if c.code != 0 || !strings.Contains(c.stdout, want[0]) {
				t.Errorf("--stage %s: exit %d %s\n%.300s", want[0], c.code, c.stderr, c.stdout)
			}
			for _, l := range strings.Split(c.stdout, "\n") {
				if strings.HasPrefix(l, "  table=") && !kept.MatchString(l) {
					t.Errorf("--stage %s printed %s", want[0], l)
				}
			}
			c = aclc(t, "", "compile", "--ovn-version", r.Series(), "--stage", want[1], fx)
			if c.code != 2 || c.stdout != "" || !strings.Contains(c.stderr, "OVN "+r.Series()+" has no stage \""+want[1]+"\"") {
				t.Errorf("--stage %s: exit %d, stderr %q", want[1], c.code, c.stderr)
			}

			sb := startCentral(t, r, false)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if l := aclc(t, "", "nb", "load", "--nb", sb.NB, "../../testdata/routers/two-switches.yaml", "--ovn-version", r.Series()); l.code != 0 {
				t.Fatalf("nb load: %s", l.stderr)
			}
			if err := sb.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			full, err := sb.SBCtl(ctx, "lflow-list")
			if err != nil {
				t.Fatal(err)
			}
			sbFile := writeFile(t, "sb.lflows", full)
			own := aclc(t, "", "compile", "--nb", sb.NB, "--sb", sb.SB, "--format", "json")
			if own.code != 0 {
				t.Fatalf("compile: %s", own.stderr)
			}
			ownFile := writeFile(t, "aclc.json", own.stdout)
			if d := aclc(t, "", "diff", sbFile, ownFile); d.code != 0 {
				t.Errorf("diff of the full SB listing and compile --sb: exit %d\n%s%s", d.code, d.stdout, d.stderr)
			}
			edited := regexp.MustCompile(`(?m)^(  table=\d+ \(ls_out_pre_acl +\), priority=100  , match=\(ip)\), `).ReplaceAllString(full, "$1 && tcp), ")
			if edited == full {
				t.Fatal("no ls_out_pre_acl priority 100 flow to edit")
			}
			d := aclc(t, "", "diff", writeFile(t, "edited.lflows", edited), ownFile)
			if d.code != 1 || !strings.Contains(d.stdout, "ls_out_pre_acl") {
				t.Errorf("diff of an edited flow: exit %d\n%s%s", d.code, d.stdout, d.stderr)
			}
		})
	}
}

// TestReleasesColumns: `aclc releases` lists each verified version with its
// NB and SB schema versions and its oracle; --oracles gives scripts (test.sh)
// the same in fixed fields.
func TestReleasesColumns(t *testing.T) {
	r := aclc(t, "", "releases")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != len(release.All())+1 || strings.Join(strings.Fields(lines[0]), " ") != "VERSION NB-SCHEMA SB-SCHEMA VERIFIED-BY IN-CI CARRIED-BY NOTES" {
		t.Fatalf("exit %d:\n%s", r.code, r.stdout)
	}
	o := aclc(t, "", "releases", "--oracles")
	olines := strings.Split(strings.TrimSpace(o.stdout), "\n")
	if o.code != 0 || len(olines) != len(release.All()) {
		t.Fatalf("--oracles: exit %d:\n%s", o.code, o.stdout)
	}
	for i, rel := range release.All() {
		f := strings.Fields(lines[i+1])
		if want := []string{rel.Name(), rel.NBSchema, rel.SBSchema}; strings.Join(f[:3], " ") != strings.Join(want, " ") {
			t.Errorf("line %q, want %v", lines[i+1], want)
		}
		if !strings.Contains(lines[i+1], rel.Oracle.String()) {
			t.Errorf("line %q does not say %q", lines[i+1], rel.Oracle)
		}
		of := strings.Fields(olines[i])
		var want []string
		switch {
		case rel.Oracle.Host:
			want = []string{rel.Name(), "host", rel.Oracle.Suite, rel.Oracle.Package}
		case rel.Oracle.Debian():
			want = []string{rel.Name(), "debian", rel.Oracle.Suite, rel.Oracle.Package}
		default:
			want = []string{rel.Name(), "source", rel.Oracle.Tag, rel.Oracle.Commit, rel.Oracle.OVSCommit}
		}
		if strings.Join(of, " ") != strings.Join(want, " ") {
			t.Errorf("--oracles line %q, want %v", olines[i], want)
		}
	}
	f := aclc(t, "", "releases", "--facts")
	if f.code != 0 || !strings.Contains(f.stdout, "commit-in-hint") {
		t.Errorf("--facts: exit %d\n%s", f.code, f.stdout)
	}
}
