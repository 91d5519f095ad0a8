package main

import (
	"bytes"
	"io"
	"runtime"
	"sync"

	"github.com/aclc/aclc/lflow"
)

// textChunkFlows is about how many flows one chunk of writeText holds
// (~700 KB of text).
const textChunkFlows = 4096

// writeText is lflow.WriteText(w, l), the same bytes, with the text of
// consecutive groups of datapaths formatted on every core and written in
// order; at most two chunks per core are formatted ahead of the writer.
func writeText(w io.Writer, l *lflow.Listing) error {
	var chunks []*lflow.Listing
	for start, n := 0, 0; start < len(l.Datapaths); {
		end := start
		for n = 0; end < len(l.Datapaths) && n < textChunkFlows; end++ {
			n += len(l.Datapaths[end].Flows)
		}
		chunks = append(chunks, &lflow.Listing{Datapaths: l.Datapaths[start:end]})
		start = end
	}
	procs := runtime.GOMAXPROCS(0)
	if len(chunks) < 2 || procs < 2 {
		return lflow.WriteText(w, l)
	}
	done := make([]chan *bytes.Buffer, len(chunks))
	for i := range done {
		done[i] = make(chan *bytes.Buffer, 1)
	}
	var bufs sync.Pool
	ahead := make(chan struct{}, 2*procs)
	go func() {
		for i, c := range chunks {
			ahead <- struct{}{}
			go func() {
				b, _ := bufs.Get().(*bytes.Buffer)
				if b == nil {
					b = new(bytes.Buffer)
				}
				b.Reset()
				lflow.WriteText(b, c) // a bytes.Buffer takes every write
				done[i] <- b
			}()
		}
	}()
	var err error
	for i := range chunks {
		b := <-done[i]
		if err == nil {
			_, err = w.Write(b.Bytes())
		}
		bufs.Put(b)
		<-ahead
	}
	return err
}
