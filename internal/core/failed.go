package core

import (
	"slices"
	"sync"
)

// failedSet holds why each failed PE failed, by world rank: the PE
// actor's verdicts, published for the hot path, which reads it only once
// state.nFailed says some PE failed. A map, not a slot per PE: a world
// has few failures, and n slots on each of n simulated PEs are 2 GiB at
// 16384 PEs.
type failedSet struct {
	mu sync.RWMutex
	m  map[int]*string
	// linkLost holds the failed ranks whose notice said a control link
	// to them ended (actors.PEFailed.Link): not a GlobalExit's
	// departure (see settle).
	linkLost map[int]bool
}

// Load returns why rank failed, or nil.
func (f *failedSet) Load(rank int) *string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.m[rank]
}

// Store records why rank failed.
func (f *failedSet) Store(rank int, why *string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = map[int]*string{}
	}
	f.m[rank] = why
}

// StoreLinkLost records that a control link to rank ended without a
// goodbye.
func (f *failedSet) StoreLinkLost(rank int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.linkLost == nil {
		f.linkLost = map[int]bool{}
	}
	f.linkLost[rank] = true
}

// LinkLost reports whether a control link to rank ended without a
// goodbye.
func (f *failedSet) LinkLost(rank int) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.linkLost[rank]
}

// Ranks returns the failed ranks, ascending.
func (f *failedSet) Ranks() []int {
	f.mu.RLock()
	defer f.mu.RUnlock()
	rs := make([]int, 0, len(f.m))
	for r := range f.m {
		rs = append(rs, r)
	}
	slices.Sort(rs)
	return rs
}
