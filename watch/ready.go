package watch

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
)

// Readiness: a watcher is ready once the initial NB is compiled, its
// snapshot (Config.WriteSnapshot) and initial delta line are out, and what
// the load leaves behind is settled (the load's garbage collected and
// returned to the system, the zone-flush state built), so that the first
// change after it is as fast as any later one. Ready is said three ways,
// for whatever starts the watcher: an info log line "ready", the
// aclc_watch_ready gauge, Config.ReadyFile, and — when a service manager
// set NOTIFY_SOCKET (systemd Type=notify) — READY=1 on that socket.

// becomeReady says the watcher is ready.
func (w *Watcher) becomeReady(flows, switches int) {
	release := w.engine.Release().Name()
	endpoint := w.nb.Client.CurrentEndpoint()
	// The log line comes last: whoever sees it finds the file and the
	// gauge already there.
	defer w.log.Info("ready", "endpoint", endpoint, "release", release, "switches", switches, "flows", flows)
	if w.cfg.Metrics != nil {
		w.cfg.Metrics.Ready.Set(1)
	}
	if w.cfg.ReadyFile != "" {
		body := fmt.Sprintf("pid %d\nendpoint %s\nrelease %s\nswitches %d\nflows %d\n",
			os.Getpid(), endpoint, release, switches, flows)
		if err := writeFileAtomic(w.cfg.ReadyFile, []byte(body)); err != nil {
			w.log.Error("cannot write the ready file", "file", w.cfg.ReadyFile, "err", err)
		}
	}
	if err := sdNotify(fmt.Sprintf("READY=1\nSTATUS=following %s: %d flows on %d switches (OVN %s)", endpoint, flows, switches, release)); err != nil {
		w.log.Warn("cannot notify the service manager", "socket", os.Getenv("NOTIFY_SOCKET"), "err", err)
	}
}

// stopping undoes readiness as the watcher stops: the ready file is
// removed (a file left behind would claim readiness for a watcher that is
// gone) and the service manager told.
func (w *Watcher) stopping() {
	if w.cfg.Metrics != nil {
		w.cfg.Metrics.Ready.Set(0)
	}
	if w.cfg.ReadyFile != "" {
		if err := os.Remove(w.cfg.ReadyFile); err != nil && !os.IsNotExist(err) {
			w.log.Warn("cannot remove the ready file", "file", w.cfg.ReadyFile, "err", err)
		}
	}
	sdNotify("STOPPING=1")
}

// writeFileAtomic replaces path with data: a temporary file in the same
// directory, synced, then renamed over path.
func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// sdNotify sends state to the service manager's notification socket
// ($NOTIFY_SOCKET, sd_notify(3): a datagram socket path, or an abstract
// one written with a leading '@'). Without the variable it does nothing.
func sdNotify(state string) error {
	sock := os.Getenv("NOTIFY_SOCKET")
	if sock == "" {
		return nil
	}
	if strings.HasPrefix(sock, "@") {
		sock = "\x00" + sock[1:]
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Write([]byte(state))
	return err
}
