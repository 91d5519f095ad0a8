package lflow

import (
	"bufio"
	"bytes"
	"io"
	"slices"
	"strings"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// diffKey is a flow's identity independent of the layout value its stage
// was placed in: listings of the same release parsed and compiled compare
// equal.
type diffKey struct {
	pipeline Pipeline
	table    int
	stage    string
	priority int
	match    string
	actions  string
}

func keyOf(f Flow) diffKey {
	return diffKey{f.Stage.Pipeline(), f.Stage.Table(), f.Stage.Name(), f.Priority, f.Match, f.Actions}
}

// Change is one flow present on only one side of a diff.
type Change struct {
	Datapath string
	Flow     Flow
	Added    bool // true: only in B; false: only in A
}

// Diff compares two listings semantically: datapaths are matched by name
// (UUIDs differ between an aclc listing and the SB), flows by stage,
// priority, match and actions. Order, duplicates and Source are ignored.
// The result is sorted by datapath, then flow order, removals before
// additions of the same place.
func Diff(a, b *Listing) []Change {
	idx := func(l *Listing) map[string]map[diffKey]Flow {
		m := map[string]map[diffKey]Flow{}
		for _, d := range l.Datapaths {
			fm := m[d.Name]
			if fm == nil {
				fm = map[diffKey]Flow{}
				m[d.Name] = fm
			}
			for _, f := range d.Flows {
				fm[keyOf(f)] = f
			}
		}
		return m
	}
	am, bm := idx(a), idx(b)
	var out []Change
	for dp, fa := range am {
		fb := bm[dp]
		for k, f := range fa {
			if _, ok := fb[k]; !ok {
				out = append(out, Change{Datapath: dp, Flow: f})
			}
		}
	}
	for dp, fb := range bm {
		fa := am[dp]
		for k, f := range fb {
			if _, ok := fa[k]; !ok {
				out = append(out, Change{Datapath: dp, Flow: f, Added: true})
			}
		}
	}
	slices.SortFunc(out, func(x, y Change) int {
		if c := strings.Compare(x.Datapath, y.Datapath); c != 0 {
			return c
		}
		if c := Compare(x.Flow, y.Flow); c != 0 {
			return c
		}
		switch {
		case x.Added == y.Added:
			return 0
		case !x.Added:
			return -1
		}
		return 1
	})
	return out
}

// WriteDiff prints changes as a unified-style diff with one hunk header per
// datapath and pipeline:
//
//	--- A
//	+++ B
//	@@ Datapath: "sw0"  Pipeline: ingress @@
//	-  table=8 (ls_in_acl          ), priority=2002 , match=(...), action=(...)
//	+  table=8 (ls_in_acl          ), priority=2002 , match=(...), action=(...)
func WriteDiff(w io.Writer, nameA, nameB string, changes []Change) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("--- " + nameA + "\n+++ " + nameB + "\n")
	lastDP, lastPipe := "", Pipeline(255)
	var buf []byte
	for i, c := range changes {
		p := c.Flow.Stage.Pipeline()
		if i == 0 || c.Datapath != lastDP || p != lastPipe {
			bw.WriteString("@@ Datapath: \"" + c.Datapath + "\"  Pipeline: " + p.String() + " @@\n")
			lastDP, lastPipe = c.Datapath, p
		}
		if c.Added {
			bw.WriteByte('+')
		} else {
			bw.WriteByte('-')
		}
		buf = AppendFlowLine(buf[:0], c.Flow)
		bw.Write(buf)
	}
	return bw.Flush()
}
