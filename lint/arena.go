package lint

import "sync"

// An arena's chunks are recycled when its switch is released (after
// lintSwitch, nothing refers to a switch's own products: findings are
// plain data, and the caches that outlive a switch hold sets built
// outside arenas). At 50k ACLs the products were a fifth of all the bytes
// a lint allocated; recycled, the two workers reuse a few switches' worth.
var (
	fcChunks   = sync.Pool{New: func() any { c := make([]fc, arenaFcs); return &c }}
	cubeChunks = sync.Pool{New: func() any { c := make([]cube, arenaCubes); return &c }}
	setChunks  = sync.Pool{New: func() any { c := make([]set, arenaSets); return &c }}
)

// arenaSets is the number of sets in a chunk (splitSet's products).
const arenaSets = 64

// newSet returns a set of the arena (splitSet's product: one per own
// instance of the switch) with the given cubes.
func (ar *arena) newSet(over, under []cube, exact bool) *set {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if len(ar.sets) == 0 {
		ar.sets = chunk(&setChunks, &ar.heldSets)
	}
	s := &ar.sets[0]
	ar.sets = ar.sets[1:]
	*s = set{over: over, under: under, exact: exact}
	return s
}

// recycleArenas and poisonArenas are for TestArenaRecycling: without
// recycling, chunks are left to the collector; poisoned, a recycled chunk
// is filled with constraints no cube has, so that a product still in use
// after its switch's release changes the report.
var recycleArenas, poisonArenas = true, false

// chunk takes a chunk from pool that the arena holds (in held) until
// recycle. The caller holds ar.mu.
func chunk[T any](pool *sync.Pool, held *[]*[]T) []T {
	c := pool.Get().(*[]T)
	*held = append(*held, c)
	return *c
}

// reserve makes room in the arena's current chunks for n constraints and
// m cubes (which fit a chunk). The caller holds ar.mu.
func (ar *arena) reserve(n, m int) {
	if len(ar.fcs) < n {
		ar.fcs = chunk(&fcChunks, &ar.held)
	}
	if len(ar.cubes) < m {
		ar.cubes = chunk(&cubeChunks, &ar.heldCubes)
	}
}

// putBack clears the chunks and returns them to pool.
func putBack[T any](pool *sync.Pool, held []*[]T) {
	for _, c := range held {
		clear(*c) // no pointers kept alive from the pool
		pool.Put(c)
	}
}

// recycle returns the arena's chunks to the pools: nothing built in the
// arena may be used after.
func (ar *arena) recycle() {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if recycleArenas {
		if poisonArenas {
			for _, c := range ar.held {
				for i := range *c {
					(*c)[i] = fc{id: ^fieldID(0), val: u128{^uint64(0), ^uint64(0)}}
				}
				fcChunks.Put(c)
			}
		} else {
			putBack(&fcChunks, ar.held)
		}
		putBack(&cubeChunks, ar.heldCubes)
		putBack(&setChunks, ar.heldSets)
	}
	ar.held, ar.heldCubes, ar.fcs, ar.cubes = nil, nil, nil, nil
	ar.heldSets, ar.sets = nil, nil
}

// carve returns n constraints and m cubes from the arena, ok false when
// they do not fit a chunk or there is no arena (the caller allocates them
// instead).
func (ar *arena) carve(n, m int) (fcs []fc, cubes []cube, ok bool) {
	if ar == nil || n > arenaFcs/4 || m > arenaCubes/4 {
		return nil, nil, false
	}
	ar.mu.Lock()
	defer ar.mu.Unlock()
	ar.reserve(n, m)
	fcs, cubes = ar.fcs[:n:n], ar.cubes[:m:m]
	ar.fcs, ar.cubes = ar.fcs[n:], ar.cubes[m:]
	return fcs, cubes, true
}
