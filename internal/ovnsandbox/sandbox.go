// Package ovnsandbox starts a throwaway OVN central for tests and tools:
// an NB and an SB ovsdb-server on unix sockets plus ovn-northd of a given
// OVN release, all under one directory, and stops them again.
//
// It is the oracle harness: goldens and differential tests run the real
// ovn-northd through it. The host release (23.03.1) runs the host's Debian
// packages (ovn-central, ovn-host, openvswitch-switch); any other release
// runs inside the Debian root scripts/ovn-release-root.sh made for it
// (internal/ovnroot), with its run directory under that root so that the
// sockets are reachable from the host and several sandboxes of one release
// can run at once. Run, NBCtl, SBCtl and Trace use the release's own
// ovn-nbctl, ovn-sbctl and ovn-trace.
package ovnsandbox

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/aclc/aclc/internal/ovnroot"
	"github.com/aclc/aclc/release"
)

// Schema paths installed by Debian's ovn-common package (of the host
// release; a root has them at the same place under it).
const (
	NBSchema = "/usr/share/ovn/ovn-nb.ovsschema"
	SBSchema = "/usr/share/ovn/ovn-sb.ovsschema"
)

// Sandbox is a running NB + SB + ovn-northd.
type Sandbox struct {
	Release *release.Release
	// Dir is the run directory as the host sees it; NB and SB are the
	// host's remotes for the two databases (for aclc and libovsdb).
	Dir string
	NB  string // unix:<dir>/nb.sock
	SB  string // unix:<dir>/sb.sock
	// root is "/" for the host release, else the release's root; inner is
	// Dir as the processes in the root see it.
	root, inner string
	removeDir   bool
	procs       []*os.Process
	northd      *os.Process
	northdDone  chan struct{} // closed when ovn-northd has exited
	nbProc      *os.Process   // the NB ovsdb-server (nil: not running)
	nbDone      chan struct{}
	lastDone    chan struct{} // of the process spawn started last
}

// Options tunes Start.
type Options struct {
	// NoNorthd starts only the two databases.
	NoNorthd bool
	// NBDown creates the NB database but does not start its server (nor
	// wait for it): StartNB does, later, so that a test can start a
	// client before its NB. ovn-northd starts and waits for the NB, as it
	// does in a deployment.
	NBDown bool
	// Release is the OVN release to run; nil is the host's, 23.03.1.
	Release *release.Release
}

// Start starts the databases and ovn-northd of opt.Release. For the host
// release it creates dir (which must not hold a running sandbox) and runs
// them there; for a release in a root it ignores dir and makes a fresh run
// directory under the root's /tmp, which Stop removes again.
func Start(dir string, opt Options) (*Sandbox, error) {
	r := opt.Release
	if r == nil {
		r = ovnroot.HostRelease()
	}
	if err := ovnroot.Check(r); err != nil {
		return nil, fmt.Errorf("ovnsandbox: %w", err)
	}
	s := &Sandbox{Release: r, root: ovnroot.Dir(r)}
	if ovnroot.OnHost(r) {
		for _, b := range []string{"ovsdb-tool", "ovsdb-server", "ovn-northd"} {
			if _, err := exec.LookPath(b); err != nil {
				return nil, fmt.Errorf("ovnsandbox: %s not found (apt-get install -y ovn-central ovn-host openvswitch-switch): %w", b, err)
			}
		}
		var err error
		if dir, err = filepath.Abs(dir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("ovnsandbox: %w", err)
		}
		s.Dir, s.inner = dir, dir
	} else {
		tmp := filepath.Join(s.root, "tmp")
		d, err := os.MkdirTemp(tmp, "aclc-sandbox-")
		if err != nil {
			return nil, fmt.Errorf("ovnsandbox: %w", err)
		}
		s.Dir, s.inner, s.removeDir = d, "/"+strings.TrimPrefix(d, s.root+"/"), true
	}
	s.NB, s.SB = "unix:"+filepath.Join(s.Dir, "nb.sock"), "unix:"+filepath.Join(s.Dir, "sb.sock")
	for _, db := range []struct{ name, schema string }{{"nb", NBSchema}, {"sb", SBSchema}} {
		file := filepath.Join(s.Dir, db.name+".db")
		os.Remove(file)
		if out, err := s.command("ovsdb-tool", "create", s.in(file), db.schema).CombinedOutput(); err != nil {
			s.Stop()
			return nil, fmt.Errorf("ovnsandbox: ovsdb-tool create %s: %v: %s", file, err, out)
		}
		if db.name == "nb" && opt.NBDown {
			continue
		}
		if err := s.startDB(db.name); err != nil {
			s.Stop()
			return nil, err
		}
	}
	for _, db := range []string{"nb", "sb"} {
		if db == "nb" && opt.NBDown {
			continue
		}
		if err := waitSocket(filepath.Join(s.Dir, db+".sock"), 10*time.Second); err != nil {
			s.Stop()
			return nil, err
		}
	}
	if !opt.NoNorthd {
		if err := s.spawn("ovn-northd", "northd", "--no-chdir",
			"--ovnnb-db="+s.in(s.NB), "--ovnsb-db="+s.in(s.SB),
			"--unixctl="+s.in(filepath.Join(s.Dir, "northd.ctl")),
			"--log-file="+s.in(filepath.Join(s.Dir, "northd.log"))); err != nil {
			s.Stop()
			return nil, err
		}
		s.northd, s.northdDone = s.procs[len(s.procs)-1], s.lastDone
		if err := waitSocket(filepath.Join(s.Dir, "northd.ctl"), 10*time.Second); err != nil {
			s.Stop()
			return nil, err
		}
	}
	return s, nil
}

// startDB starts the ovsdb-server of database name ("nb", "sb") on its
// file and socket.
func (s *Sandbox) startDB(name string) error {
	if err := s.spawn("ovsdb-server", name,
		"--no-chdir", "--remote=punix:"+s.in(filepath.Join(s.Dir, name+".sock")),
		"--unixctl="+s.in(filepath.Join(s.Dir, name+".ctl")),
		"--log-file="+s.in(filepath.Join(s.Dir, name+".log")), s.in(filepath.Join(s.Dir, name+".db"))); err != nil {
		return err
	}
	if name == "nb" {
		s.nbProc, s.nbDone = s.procs[len(s.procs)-1], s.lastDone
	}
	return nil
}

// StartNB starts the NB ovsdb-server (after Options.NBDown or StopNB) on
// the database file it had and waits until it accepts connections.
func (s *Sandbox) StartNB() error {
	if s.nbProc != nil {
		return fmt.Errorf("ovnsandbox: the NB server is running")
	}
	if err := s.startDB("nb"); err != nil {
		return err
	}
	return waitSocket(filepath.Join(s.Dir, "nb.sock"), 10*time.Second)
}

// StopNB kills the NB ovsdb-server (SIGKILL: as a crash, nothing said to
// its clients) and removes its socket; the database file stays, for
// StartNB.
func (s *Sandbox) StopNB() {
	if s.nbProc == nil {
		return
	}
	s.nbProc.Kill()
	<-s.nbDone
	s.procs = slices.DeleteFunc(s.procs, func(p *os.Process) bool { return p == s.nbProc })
	s.nbProc, s.nbDone = nil, nil
	os.Remove(filepath.Join(s.Dir, "nb.sock"))
	os.Remove(filepath.Join(s.Dir, "nb.ctl"))
}

// in rewrites host paths under Dir in arg to the paths the processes in
// the release's root see (the identity for the host release).
func (s *Sandbox) in(arg string) string {
	if s.inner == s.Dir {
		return arg
	}
	return strings.ReplaceAll(arg, s.Dir, s.inner)
}

// command prepares bin of the sandbox's release: the host's for the host
// release, else the root's, run chrooted into it. Arguments naming files
// under Dir are rewritten to the paths inside the root.
func (s *Sandbox) command(bin string, args ...string) *exec.Cmd {
	return s.commandContext(context.Background(), bin, args...)
}

func (s *Sandbox) commandContext(ctx context.Context, bin string, args ...string) *exec.Cmd {
	name := bin
	if !ovnroot.OnHost(s.Release) {
		name = "/usr/sbin/chroot"
		args = append([]string{s.root, bin}, args...)
		for i := range args[2:] {
			args[2+i] = s.in(args[2+i])
		}
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = s.Dir
	return cmd
}

func (s *Sandbox) spawn(bin, name string, args ...string) error {
	cmd := s.command(bin, args...)
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
	done := make(chan struct{})
	s.lastDone = done
	go func() { cmd.Wait(); close(done) }() //nolint:errcheck // reaped here so Stop never leaves zombies
	return nil
}

// waitSocket waits until path accepts connections (a unix socket exists a
// moment before its server listens on it), or, for a file that is not a
// socket, until it exists.
func waitSocket(path string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if st, err := os.Stat(path); err == nil {
			if st.Mode()&os.ModeSocket == 0 {
				return nil
			}
			if c, err := net.Dial("unix", path); err == nil {
				c.Close()
				return nil
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("ovnsandbox: %s did not accept connections within %v", path, d)
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
	if s.removeDir {
		os.RemoveAll(s.Dir)
		s.removeDir = false
	}
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
	s.northd, s.northdDone = nil, nil
}

// Env returns the environment for ovn-nbctl / ovn-sbctl / ovn-trace that
// points them at this sandbox (host paths; Run rewrites them for a root).
func (s *Sandbox) Env() []string {
	return append(os.Environ(), "OVN_NB_DB="+s.NB, "OVN_SB_DB="+s.SB)
}

// Run runs an OVN command line tool of the sandbox's release against the
// sandbox and returns stdout. Arguments naming files under Dir (such as
// "--db="+s.SB) are rewritten for a release that runs in a root.
func (s *Sandbox) Run(ctx context.Context, bin string, args ...string) (string, error) {
	cmd := s.Command(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %s: %w: %s", bin, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// Command prepares an OVN command line tool of the sandbox's release for
// the caller to run (to time it or read its resource use), with the
// environment and argument rewriting of Run.
func (s *Sandbox) Command(ctx context.Context, bin string, args ...string) *exec.Cmd {
	cmd := s.commandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "OVN_NB_DB="+s.in(s.NB), "OVN_SB_DB="+s.in(s.SB))
	return cmd
}

// NBCtl runs ovn-nbctl against the sandbox NB.
func (s *Sandbox) NBCtl(ctx context.Context, args ...string) (string, error) {
	return s.Run(ctx, "ovn-nbctl", append([]string{"--db=" + s.NB}, args...)...)
}

// SBCtl runs ovn-sbctl against the sandbox SB.
func (s *Sandbox) SBCtl(ctx context.Context, args ...string) (string, error) {
	return s.Run(ctx, "ovn-sbctl", append([]string{"--db=" + s.SB}, args...)...)
}

// Trace runs the release's ovn-trace against the sandbox SB.
func (s *Sandbox) Trace(ctx context.Context, args ...string) (string, error) {
	return s.Run(ctx, "ovn-trace", append([]string{"--db=" + s.SB}, args...)...)
}

// Sync waits until ovn-northd has written the SB for the current NB
// (ovn-nbctl --wait=sb sync). When northd dies meanwhile (26.03.1 asserts
// on some NB changes) it says so at once, with the end of northd's log.
func (s *Sandbox) Sync(ctx context.Context) error { return s.SyncWithin(ctx, time.Minute) }

// SyncWithin is Sync waiting at most timeout (a large NB takes northd
// minutes).
func (s *Sandbox) SyncWithin(ctx context.Context, timeout time.Duration) error {
	arg := fmt.Sprintf("--timeout=%d", int(timeout.Seconds()))
	if s.northdDone == nil {
		_, err := s.NBCtl(ctx, arg, "--wait=sb", "sync")
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := s.NBCtl(ctx, arg, "--wait=sb", "sync")
		errc <- err
	}()
	select {
	case err := <-errc:
		return err
	case <-s.northdDone:
		cancel()
		<-errc
		return fmt.Errorf("ovnsandbox: ovn-northd %s exited: %s", s.Release, s.northdLogTail())
	}
}

// NorthdExited reports whether the sandbox's ovn-northd has exited.
func (s *Sandbox) NorthdExited() bool {
	if s.northdDone == nil {
		return false
	}
	select {
	case <-s.northdDone:
		return true
	default:
		return false
	}
}

// NorthdPeakRSS is the last peak resident set size ovn-northd's log
// reported (KiB; its memory module logs it as it grows), 0 when none: the
// figure left of a northd that was killed, for instance by the OOM killer.
func (s *Sandbox) NorthdPeakRSS() int64 {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "northd.log"))
	var kb int64
	for _, l := range strings.Split(string(b), "\n") {
		if _, rest, ok := strings.Cut(l, "peak resident set size grew"); ok {
			if _, v, ok := strings.Cut(rest, " to "); ok {
				fmt.Sscanf(v, "%d kB", &kb)
			}
		}
	}
	return kb
}

// northdLogTail returns northd's last error lines.
func (s *Sandbox) northdLogTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "northd.log"))
	var keep []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "|EMER|") || strings.Contains(l, "|ERR|") {
			keep = append(keep, l)
		}
	}
	if len(keep) > 5 {
		keep = keep[len(keep)-5:]
	}
	if len(keep) == 0 {
		return "no error in " + filepath.Join(s.Dir, "northd.log")
	}
	return strings.Join(keep, "; ")
}
