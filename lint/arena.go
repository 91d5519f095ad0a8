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
		c := setChunks.Get().(*[]set)
		ar.heldSets = append(ar.heldSets, c)
		ar.sets = *c
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

// newFcs returns a chunk of constraints the arena holds until recycle.
// The caller holds ar.mu.
func (ar *arena) newFcs() []fc {
	c := fcChunks.Get().(*[]fc)
	ar.held = append(ar.held, c)
	return *c
}

// newCubes returns a chunk of cubes the arena holds until recycle. The
// caller holds ar.mu.
func (ar *arena) newCubes() []cube {
	c := cubeChunks.Get().(*[]cube)
	ar.heldCubes = append(ar.heldCubes, c)
	return *c
}

// recycle returns the arena's chunks to the pools: nothing built in the
// arena may be used after.
func (ar *arena) recycle() {
	ar.mu.Lock()
	defer ar.mu.Unlock()
	if recycleArenas {
		for _, c := range ar.held {
			if poisonArenas {
				for i := range *c {
					(*c)[i] = fc{id: ^fieldID(0), val: u128{^uint64(0), ^uint64(0)}}
				}
			} else {
				clear(*c) // no pointers kept alive from the pool
			}
			fcChunks.Put(c)
		}
		for _, c := range ar.heldCubes {
			clear(*c)
			cubeChunks.Put(c)
		}
		for _, c := range ar.heldSets {
			clear(*c)
			setChunks.Put(c)
		}
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
	if len(ar.fcs) < n {
		ar.fcs = ar.newFcs()
	}
	if len(ar.cubes) < m {
		ar.cubes = ar.newCubes()
	}
	fcs, cubes = ar.fcs[:n:n], ar.cubes[:m:m]
	ar.fcs, ar.cubes = ar.fcs[n:], ar.cubes[m:]
	return fcs, cubes, true
}
