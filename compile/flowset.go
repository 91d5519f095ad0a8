package compile

import (
	"slices"
	"sort"

	"github.com/aclc/aclc/lflow"
)

// chunkSize is the number of flows a flowSet chunk holds when it is built;
// a patch cuts a chunk that grows past twice this back into chunks of this
// size. 32 flows are 2 KiB.
const chunkSize = 32

// flowSet is one switch's flows in lflow-list order, held as a list of
// sorted chunks so that a patch copies only the chunks it touches. The
// engine treats a flowSet as immutable: a patch returns a new one that
// shares every untouched chunk with the old, so a Listing taken earlier
// stays valid. Copying a whole switch's flows per patch (about 40 KB at
// 50k ACLs) cost more in fresh pages than in the copy itself inside a
// long-running watcher.
type flowSet struct {
	chunks [][]lflow.Flow
	n      int
}

// newFlowSet returns a flowSet over flows, which must be sorted and free of
// duplicates. The chunks share flows' array (each capped at its own end, so
// no append can write into a neighbour).
func newFlowSet(flows []lflow.Flow) flowSet {
	fs := flowSet{n: len(flows)}
	for i := 0; i < len(flows); i += chunkSize {
		j := min(i+chunkSize, len(flows))
		fs.chunks = append(fs.chunks, flows[i:j:j])
	}
	return fs
}

// Len returns the number of flows.
func (fs flowSet) Len() int { return fs.n }

// appendTo appends the flows, in order, to dst.
func (fs flowSet) appendTo(dst []lflow.Flow) []lflow.Flow {
	dst = slices.Grow(dst, fs.n)
	for _, c := range fs.chunks {
		dst = append(dst, c...)
	}
	return dst
}

// find returns the chunk that holds f or would hold it, and f's position
// in it.
func (fs flowSet) find(f lflow.Flow) (ci, pos int, found bool) {
	// The first chunk whose last flow is not before f; past the end, f
	// goes at the end of the last chunk.
	ci = sort.Search(len(fs.chunks), func(i int) bool {
		c := fs.chunks[i]
		return lflow.Compare(c[len(c)-1], f) >= 0
	})
	if ci == len(fs.chunks) {
		ci--
	}
	pos, found = slices.BinarySearchFunc(fs.chunks[ci], f, lflow.Compare)
	return ci, pos, found
}

// chunkEdit is what a patch does to one chunk: positions to drop and flows
// to insert at positions, both in the chunk's old numbering.
type chunkEdit struct {
	drops []int
	ins   []chunkInsert
}

type chunkInsert struct {
	pos int
	f   lflow.Flow
}

// patch returns fs without the flows of rm and with those of add, still
// sorted and without duplicates, and the flows actually added and
// removed. A flow in both add and rm stays (another producer keeps it).
// add is sorted in place.
func (fs flowSet) patch(add, rm []lflow.Flow) (out flowSet, added, removed []lflow.Flow) {
	slices.SortFunc(add, lflow.Compare)
	add = slices.CompactFunc(add, func(a, b lflow.Flow) bool { return lflow.Compare(a, b) == 0 })
	if len(fs.chunks) == 0 {
		flows := slices.Clone(add)
		return newFlowSet(flows), flows, nil
	}
	edits := map[int]*chunkEdit{}
	edit := func(ci int) *chunkEdit {
		e := edits[ci]
		if e == nil {
			e = &chunkEdit{}
			edits[ci] = e
		}
		return e
	}
	for _, f := range rm {
		if ci, pos, found := fs.find(f); found {
			e := edit(ci)
			if !slices.Contains(e.drops, pos) {
				e.drops = append(e.drops, pos)
			}
		}
	}
	for _, f := range add {
		ci, pos, found := fs.find(f)
		if !found {
			e := edit(ci)
			e.ins = append(e.ins, chunkInsert{pos, f})
			continue
		}
		// Already there: if it was to go, it stays.
		if e := edits[ci]; e != nil {
			if k := slices.Index(e.drops, pos); k >= 0 {
				e.drops = slices.Delete(e.drops, k, k+1)
			}
		}
	}
	out = flowSet{n: fs.n, chunks: make([][]lflow.Flow, 0, len(fs.chunks)+1)}
	for ci, c := range fs.chunks {
		e := edits[ci]
		if e == nil || (len(e.drops) == 0 && len(e.ins) == 0) {
			out.chunks = append(out.chunks, c)
			continue
		}
		nc, a, r := e.apply(c)
		added = append(added, a...)
		removed = append(removed, r...)
		out.n += len(a) - len(r)
		switch {
		case len(nc) == 0:
		case len(nc) > 2*chunkSize:
			// Grown past twice the size (a big patch may add any number
			// of flows to one chunk): cut it back into chunks of
			// chunkSize, sharing its array.
			for len(nc) > chunkSize {
				out.chunks = append(out.chunks, nc[:chunkSize:chunkSize])
				nc = nc[chunkSize:]
			}
			out.chunks = append(out.chunks, nc)
		default:
			out.chunks = append(out.chunks, nc)
		}
	}
	// Inserts were placed in chunk order and each chunk's in flow order,
	// so added is sorted; removed too.
	return out, added, removed
}

// apply returns a new chunk: c with e's drops and inserts, and the flows
// added and removed. ins must be in flow order (the patch visits add
// sorted), which is also position order.
func (e *chunkEdit) apply(c []lflow.Flow) (nc, added, removed []lflow.Flow) {
	slices.Sort(e.drops)
	nc = make([]lflow.Flow, 0, len(c)-len(e.drops)+len(e.ins))
	prev, di, ii := 0, 0, 0
	for di < len(e.drops) || ii < len(e.ins) {
		if ii < len(e.ins) && (di >= len(e.drops) || e.ins[ii].pos <= e.drops[di]) {
			nc = append(nc, c[prev:e.ins[ii].pos]...)
			nc = append(nc, e.ins[ii].f)
			added = append(added, e.ins[ii].f)
			prev = e.ins[ii].pos
			ii++
			continue
		}
		nc = append(nc, c[prev:e.drops[di]]...)
		removed = append(removed, c[e.drops[di]])
		prev = e.drops[di] + 1
		di++
	}
	nc = append(nc, c[prev:]...)
	return nc, added, removed
}

// cursor walks a flowSet in order.
type cursor struct {
	fs     flowSet
	ci, fi int
}

func (c *cursor) ok() bool { return c.ci < len(c.fs.chunks) }

func (c *cursor) flow() lflow.Flow { return c.fs.chunks[c.ci][c.fi] }

func (c *cursor) next() {
	c.fi++
	if c.fi == len(c.fs.chunks[c.ci]) {
		c.ci, c.fi = c.ci+1, 0
	}
}

// dpFlows is one switch as the engine holds it: its header and its flows.
// Like a flowSet it is never modified once built.
type dpFlows struct {
	name, name2, uuid string
	flows             flowSet

	// flat is the lflow.Datapath form, built on first use by Listing.
	flat *lflow.Datapath
}

// newDPFlows takes over dp (sorted), sharing its flows.
func newDPFlows(dp *lflow.Datapath) *dpFlows {
	return &dpFlows{name: dp.Name, name2: dp.Name2, uuid: dp.UUID, flows: newFlowSet(dp.Flows), flat: dp}
}

// datapath returns the lflow.Datapath form of d, shared: do not modify it.
func (d *dpFlows) datapath() *lflow.Datapath {
	if d.flat == nil {
		d.flat = &lflow.Datapath{Name: d.name, Name2: d.name2, UUID: d.uuid, Flows: d.flows.appendTo(nil)}
	}
	return d.flat
}
