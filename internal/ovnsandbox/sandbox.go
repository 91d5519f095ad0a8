// Package ovnsandbox starts a throwaway OVN central for tests and tools:
// an NB and an SB ovsdb-server on unix sockets plus ovn-northd 23.03, all
// under one directory, and stops them again.
//
// It is the oracle harness: goldens and differential tests run the real
// ovn-northd through it. It depends only on the Debian packages
// ovn-central, ovn-host and openvswitch-switch.
package ovnsandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Schema paths installed by Debian's ovn-common package.
const (
	NBSchema = "/usr/share/ovn/ovn-nb.ovsschema"
	SBSchema = "/usr/share/ovn/ovn-sb.ovsschema"
)

// Sandbox is a running NB + SB + ovn-northd.
type Sandbox struct {
	Dir    string
	NB     string // unix:<dir>/nb.sock
	SB     string // unix:<dir>/sb.sock
	procs  []*os.Process
	northd *os.Process
}

// Options tunes Start.
type Options struct {
	// NoNorthd starts only the two databases.
	NoNorthd bool
}

// Start creates dir (which must not hold a running sandbox) and starts the
// databases and ovn-northd in it.
func Start(dir string, opt Options) (*Sandbox, error) {
	for _, b := range []string{"ovsdb-tool", "ovsdb-server", "ovn-northd"} {
		if _, err := exec.LookPath(b); err != nil {
			return nil, fmt.Errorf("ovnsandbox: %s not found (apt-get install -y ovn-central ovn-host openvswitch-switch): %w", b, err)
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("ovnsandbox: %w", err)
	}
	s := &Sandbox{Dir: dir, NB: "unix:" + filepath.Join(dir, "nb.sock"), SB: "unix:" + filepath.Join(dir, "sb.sock")}
	for _, db := range []struct{ name, schema string }{{"nb", NBSchema}, {"sb", SBSchema}} {
		file := filepath.Join(dir, db.name+".db")
		os.Remove(file)
		if out, err := exec.Command("ovsdb-tool", "create", file, db.schema).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("ovnsandbox: ovsdb-tool create %s: %v: %s", file, err, out)
		}
		if err := s.spawn("ovsdb-server", db.name,
			"--no-chdir", "--remote=punix:"+filepath.Join(dir, db.name+".sock"),
			"--unixctl="+filepath.Join(dir, db.name+".ctl"),
			"--log-file="+filepath.Join(dir, db.name+".log"), file); err != nil {
			s.Stop()
			return nil, err
		}
	}
	for _, db := range []string{"nb", "sb"} {
		if err := waitSocket(filepath.Join(dir, db+".sock"), 10*time.Second); err != nil {
			s.Stop()
			return nil, err
		}
	}
	if !opt.NoNorthd {
		if err := s.spawn("ovn-northd", "northd", "--no-chdir",
			"--ovnnb-db="+s.NB, "--ovnsb-db="+s.SB,
			"--unixctl="+filepath.Join(dir, "northd.ctl"),
			"--log-file="+filepath.Join(dir, "northd.log")); err != nil {
			s.Stop()
			return nil, err
		}
		s.northd = s.procs[len(s.procs)-1]
		if err := waitSocket(filepath.Join(dir, "northd.ctl"), 10*time.Second); err != nil {
			s.Stop()
			return nil, err
		}
	}
	return s, nil
}

func (s *Sandbox) spawn(bin, name string, args ...string) error {
	cmd := exec.Command(bin, args...)
	cmd.Dir = s.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true}
	logf, err := os.Create(filepath.Join(s.Dir, name+".stderr"))
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("ovnsandbox: start %s: %w", bin, err)
	}
	logf.Close()
	s.procs = append(s.procs, cmd.Process)
	os.WriteFile(filepath.Join(s.Dir, name+".pid"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644)
	go cmd.Wait() //nolint:errcheck // reaped here so Stop never leaves zombies
	return nil
}

func waitSocket(path string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("ovnsandbox: %s did not appear within %v", path, d)
}

// Stop terminates every process the sandbox started. It is safe to call twice.
func (s *Sandbox) Stop() {
	for _, p := range s.procs {
		p.Signal(syscall.SIGTERM)
	}
	for _, p := range s.procs {
		for i := 0; i < 100; i++ {
			if err := p.Signal(syscall.Signal(0)); err != nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		p.Kill()
	}
	s.procs = nil
}

// StopNorthd stops ovn-northd and leaves the databases running, so that a
// test can edit the SB without northd putting it back.
func (s *Sandbox) StopNorthd() {
	if s.northd == nil {
		return
	}
	s.northd.Signal(syscall.SIGTERM)
	for i := 0; i < 200; i++ {
		if err := s.northd.Signal(syscall.Signal(0)); err != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.northd.Kill()
	s.northd = nil
}

// Env returns the environment for ovn-nbctl / ovn-sbctl / ovn-trace that
// points them at this sandbox.
func (s *Sandbox) Env() []string {
	return append(os.Environ(), "OVN_NB_DB="+s.NB, "OVN_SB_DB="+s.SB)
}

// Run runs an OVN command line tool against the sandbox and returns stdout.
func (s *Sandbox) Run(ctx context.Context, bin string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = s.Env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// NBCtl runs ovn-nbctl against the sandbox NB.
func (s *Sandbox) NBCtl(ctx context.Context, args ...string) (string, error) {
	return s.Run(ctx, "ovn-nbctl", append([]string{"--db=" + s.NB}, args...)...)
}

// SBCtl runs ovn-sbctl against the sandbox SB.
func (s *Sandbox) SBCtl(ctx context.Context, args ...string) (string, error) {
	return s.Run(ctx, "ovn-sbctl", append([]string{"--db=" + s.SB}, args...)...)
}

// Sync waits until ovn-northd has written the SB for the current NB
// (ovn-nbctl --wait=sb sync).
func (s *Sandbox) Sync(ctx context.Context) error {
	_, err := s.NBCtl(ctx, "--timeout=60", "--wait=sb", "sync")
	return err
}
