package watch

import (
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestSdNotify: with NOTIFY_SOCKET set (a path, or '@' for an abstract
// socket), sdNotify sends the state as one datagram, as sd_notify(3)
// does; without it, nothing.
func TestSdNotify(t *testing.T) {
	for _, name := range []string{filepath.Join(t.TempDir(), "notify"), "@aclc-test-notify-" + t.Name()} {
		addr := name
		if addr[0] == '@' {
			addr = "\x00" + addr[1:]
		}
		l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: addr, Net: "unixgram"})
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("NOTIFY_SOCKET", name)
		if err := sdNotify("READY=1\nSTATUS=x"); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 100)
		n, err := l.Read(buf)
		l.Close()
		if err != nil || string(buf[:n]) != "READY=1\nSTATUS=x" {
			t.Fatalf("%s: got %q, %v", name, buf[:n], err)
		}
	}
	os.Unsetenv("NOTIFY_SOCKET")
	if err := sdNotify("READY=1"); err != nil {
		t.Fatalf("without NOTIFY_SOCKET: %v", err)
	}
}
