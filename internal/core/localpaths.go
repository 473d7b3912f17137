package core

import (
	"sync/atomic"

	"github.com/goshmem/shmem/transport"
	"github.com/goshmem/shmem/transport/udma"
)

// tablePathsMax is the largest LocalWorld (without a simulated network)
// whose PEs get a table of paths at start: n² paths, at most 64 Ki here
// (about 5 MiB), which keep the inlined fast path (FastPath) of every
// operation. A larger world makes each PE's paths on first use, as the
// simulator's network does: a world of 16384 PEs would otherwise hold
// 268 M paths, while a PE reaches about log2 n peers in a collective.
const tablePathsMax = 256

// lazyPaths is one PE's paths in a large LocalWorld, made on first use.
// A lookup is two atomic loads, no lock: the table is cut into chunks of
// chunkPaths slots, each allocated when a path in it is first made, so a
// PE that reaches k peers holds n/chunkPaths pointers and at most k
// chunks.
type lazyPaths struct {
	chunks  []atomic.Pointer[pathChunk]
	newPath func(q int) *udma.Path
	made    *atomic.Int64 // the world's count of paths made (LocalWorld.PathsMade)
}

const chunkPaths = 64

type pathChunk [chunkPaths]atomic.Pointer[udma.Path]

func newLazyPaths(n int, newPath func(q int) *udma.Path, made *atomic.Int64) *lazyPaths {
	return &lazyPaths{chunks: make([]atomic.Pointer[pathChunk], (n+chunkPaths-1)/chunkPaths), newPath: newPath, made: made}
}

// path returns the path to q (Config.PathTo), making it if it is the
// first use. Two goroutines of the PE making it at once keep one.
func (l *lazyPaths) path(q int) transport.Path {
	slot := &l.chunks[q/chunkPaths]
	c := slot.Load()
	if c == nil {
		c = new(pathChunk)
		if !slot.CompareAndSwap(nil, c) {
			c = slot.Load()
		}
	}
	e := &c[q%chunkPaths]
	if p := e.Load(); p != nil {
		return p
	}
	if p := l.newPath(q); e.CompareAndSwap(nil, p) {
		l.made.Add(1)
		return p
	}
	return e.Load()
}
