package main

import (
	"bytes"
	"testing"

	"github.com/aclc/aclc/compile"
	"github.com/aclc/aclc/lflow"
	"github.com/aclc/aclc/nbgen"
	"github.com/aclc/aclc/release"
)

// TestWriteTextSameBytes checks that writeText, formatting chunks of
// datapaths on every core, writes what lflow.WriteText writes: for a
// listing of many chunks, one of a single datapath and an empty one.
func TestWriteTextSameBytes(t *testing.T) {
	p := nbgen.Default()
	p.ACLs, p.Switches, p.PortGroups, p.AddressSets = 3000, 60, 150, 300
	res := compile.CompileWith(nbgen.Generate(p), compile.Options{Release: release.MustLookup("26.03.1")})
	for _, l := range []*lflow.Listing{res.Flows, {Datapaths: res.Flows.Datapaths[:1]}, {}} {
		var want, got bytes.Buffer
		if err := lflow.WriteText(&want, l); err != nil {
			t.Fatal(err)
		}
		if err := writeText(&got, l); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%d datapaths: writeText wrote %d bytes, lflow.WriteText %d, not the same", len(l.Datapaths), got.Len(), want.Len())
		}
	}
	if n := len(res.Flows.Datapaths); n < 20 {
		t.Fatalf("only %d datapaths: too few chunks to test", n)
	}
}
