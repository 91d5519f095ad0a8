package nbschema

import (
	"io"
	"log/slog"
	"time"
)

// timedReader notes when the first and the last bytes of the NB's reply
// arrived, for the debug log line that splits a one-shot read into the
// server's part (request → first byte: ovsdb-server builds its whole reply
// before it sends any of it) and the client's (first byte → decoded).
type timedReader struct {
	r           io.Reader
	first, last time.Time
	n           int64
}

func (t *timedReader) Read(p []byte) (int, error) {
	k, err := t.r.Read(p)
	if k > 0 {
		now := time.Now()
		if t.first.IsZero() {
			t.first = now
		}
		t.last = now
		t.n += int64(k)
	}
	return k, err
}

// log writes the debug line, times counted from sent (the request
// written).
func (t *timedReader) log(remote string, sent time.Time) {
	if t.first.IsZero() {
		return
	}
	slog.Debug("NB read", "nb", remote, "bytes", t.n,
		"first byte", t.first.Sub(sent).Round(time.Millisecond),
		"last byte", t.last.Sub(sent).Round(time.Millisecond),
		"decoded", time.Since(sent).Round(time.Millisecond))
}
