package compile

import "slices"

// fanIndex maps a key to the rows that reference it, like refIndex, for
// keys that many rows may share (a meter every ACL logs to, the collector
// of every sample, the share key of a generic sample flow): a key with
// many rows also indexes their positions, so that adding and removing one
// stay O(1) instead of O(rows).
type fanIndex = fanMap[string]

// fanMap is a fanIndex over keys of type K.
type fanMap[K comparable] map[K]*fan

type fan struct {
	list []string
	pos  map[string]int // list index of each row, once the list is long
}

// fanIndexed is the length from which a fan indexes positions.
const fanIndexed = 32

// Add records that v references k.
func (m fanMap[K]) Add(k K, v string) {
	f := m[k]
	if f == nil {
		m[k] = &fan{list: []string{v}}
		return
	}
	if f.index(v) >= 0 {
		return
	}
	f.list = append(f.list, v)
	switch {
	case f.pos != nil:
		f.pos[v] = len(f.list) - 1
	case len(f.list) >= fanIndexed:
		f.pos = make(map[string]int, 2*len(f.list))
		for i, x := range f.list {
			f.pos[x] = i
		}
	}
}

// Del forgets that v references k.
func (m fanMap[K]) Del(k K, v string) {
	f := m[k]
	if f == nil {
		return
	}
	i := f.index(v)
	if i < 0 {
		return
	}
	if len(f.list) == 1 {
		delete(m, k)
		return
	}
	last := len(f.list) - 1
	f.list[i] = f.list[last]
	f.list = f.list[:last]
	if f.pos != nil {
		delete(f.pos, v)
		if i < last {
			f.pos[f.list[i]] = i
		}
	}
}

// Get returns the rows that reference k (shared: do not modify).
func (m fanMap[K]) Get(k K) []string {
	if f := m[k]; f != nil {
		return f.list
	}
	return nil
}

func (f *fan) index(v string) int {
	if f.pos != nil {
		if i, ok := f.pos[v]; ok {
			return i
		}
		return -1
	}
	return slices.Index(f.list, v)
}
