// Package pathbench is the benchmark suite every transport.Path provider
// runs, so that their figures measure the same loops: an 8-byte put with
// Quiet, an 8-byte get, a fetch-add, and 1 MiB puts and gets. A provider's
// benchmark file supplies a Setup that returns a path to a peer whose heap
// has at least the requested size, and calls Run.
package pathbench

import (
	"testing"

	"github.com/goshmem/shmem/transport"
)

// Setup returns a path to a peer with a heap of at least heap bytes and
// the engine that completes it; it registers its own cleanup on b.
type Setup func(b *testing.B, heap int) (transport.Path, transport.Engine)

// Run runs the suite as sub-benchmarks of b (Put8Quiet, Get8, FetchAdd,
// Put1MiB, Get1MiB). Each warms the path once before timing.
func Run(b *testing.B, setup Setup) {
	b.Run("Put8Quiet", func(b *testing.B) { put(b, setup, 8, true) })
	b.Run("Get8", func(b *testing.B) { get(b, setup, 8) })
	b.Run("FetchAdd", func(b *testing.B) { fetchAdd(b, setup) })
	b.Run("Put1MiB", func(b *testing.B) { put(b, setup, 1<<20, false) })
	b.Run("Get1MiB", func(b *testing.B) { get(b, setup, 1<<20) })
}

// put times Put of n bytes, each followed by Quiet when quietEach, else one
// Quiet after the loop (a stream).
func put(b *testing.B, setup Setup, n int, quietEach bool) {
	p, eng := setup(b, max(n, 4096))
	src := make([]byte, n)
	p.Put(0, src)
	eng.Quiet()
	if n > 8 {
		b.SetBytes(int64(n))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.Put(0, src); err != nil {
			b.Fatal(err)
		}
		if quietEach {
			if err := eng.Quiet(); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := eng.Quiet(); err != nil {
		b.Fatal(err)
	}
}

func get(b *testing.B, setup Setup, n int) {
	p, _ := setup(b, max(n, 4096))
	dst := make([]byte, n)
	p.Get(dst, 0)
	if n > 8 {
		b.SetBytes(int64(n))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.Get(dst, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func fetchAdd(b *testing.B, setup Setup) {
	p, _ := setup(b, 4096)
	p.Atomic(transport.AtomicFetchAdd, 8, 0, 1, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Atomic(transport.AtomicFetchAdd, 8, 0, 1, 0); err != nil {
			b.Fatal(err)
		}
	}
}
