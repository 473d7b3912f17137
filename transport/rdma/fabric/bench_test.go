//go:build cgo && goshmem_fabric

package fabric

import (
	"testing"

	"github.com/goshmem/shmem/transport"
)

// The benchmarks mirror package rdma's (bench_test.go there): two nodes of
// one process, here over the test provider (tcp;ofi_rxm on loopback unless
// GOSHMEM_FABRIC_PROVIDER says otherwise).

func benchPath(b *testing.B, heap int) (transport.Path, transport.Engine) {
	w := newWorld(b, 2, heap, nil)
	return w.path(b, 0, 1), w.nodes[0].Engine()
}

func BenchmarkPut8Quiet(b *testing.B) {
	p, eng := benchPath(b, 4096)
	src := make([]byte, 8)
	p.Put(0, src)
	eng.Quiet()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.Put(0, src); err != nil {
			b.Fatal(err)
		}
		if err := eng.Quiet(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGet8(b *testing.B) {
	p, _ := benchPath(b, 4096)
	dst := make([]byte, 8)
	p.Get(dst, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.Get(dst, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFetchAdd(b *testing.B) {
	p, _ := benchPath(b, 4096)
	p.Atomic(transport.AtomicFetchAdd, 8, 0, 1, 0)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Atomic(transport.AtomicFetchAdd, 8, 0, 1, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPut1MiB(b *testing.B) {
	const n = 1 << 20
	p, eng := benchPath(b, n)
	src := make([]byte, n)
	p.Put(0, src)
	eng.Quiet()
	b.SetBytes(n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.Put(0, src); err != nil {
			b.Fatal(err)
		}
	}
	if err := eng.Quiet(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkGet1MiB(b *testing.B) {
	const n = 1 << 20
	p, _ := benchPath(b, n)
	dst := make([]byte, n)
	p.Get(dst, 0)
	b.SetBytes(n)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.Get(dst, 0); err != nil {
			b.Fatal(err)
		}
	}
}
