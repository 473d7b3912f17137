package core

import (
	"sync/atomic"

	"github.com/goshmem/shmem/heap"
	"github.com/goshmem/shmem/transport/udma"
)

// mappedTable is what Mapped reads: the world's identity, the heap, and
// the world's paths that are plain mappings of a peer's heap (*udma.Path:
// the peers in Config.Shared), by rank, nil for the others. It never
// changes; raise takes it away.
type mappedTable struct {
	world uint64
	heap  *heap.Heap
	paths []*udma.Path
}

// newMappedTable returns s's table, or nil when no path is a mapping.
func (s *state) newMappedTable() *mappedTable {
	var t *mappedTable
	for r, path := range s.paths {
		if m, ok := path.(*udma.Path); ok {
			if t == nil {
				t = &mappedTable{world: s.cfg.WorldID, heap: s.cfg.Heap, paths: make([]*udma.Path, len(s.paths))}
			}
			t.paths[r] = m
		}
	}
	return t
}

// Mapped is FastPath for a peer whose heap is mapped here, with the root
// package's check that the object (slot, gen) is live in this world
// folded in: the path as its concrete type, so that the operation calls
// it directly (no interface call, and its word operations inline), or
// nil when the caller must take the checked way: p is nil, pe is out of
// range or not mapped, something has happened to the world (raise took
// the table away), p is a context (whose table stays nil), or the object
// is not live in this world. It inlines: one load of PE state, a bounds
// check, the world and the object's table entry.
func (p *PE) Mapped(pe int, world uint64, slot, gen uint32) *udma.Path {
	if p == nil {
		return nil
	}
	// The bounds test comes after Live's atomic load, so that the
	// compiler drops the index's own check.
	if t := (*mappedTable)(atomic.LoadPointer(p.mapped)); t != nil && world == t.world && t.heap.Live(slot, gen) && uint(pe) < uint(len(t.paths)) {
		return t.paths[pe]
	}
	return nil
}

// QuietWord returns the word that says Quiet's common case, for the
// root package's Quiet to read (atomically) without a call: non-zero
// while every engine is mapped (nothing to complete), nothing has
// happened to the world, p is not a context and counts nothing; Quiet is
// then nil. It is never nil.
func (p *PE) QuietWord() *uint32 { return p.quietFree }
