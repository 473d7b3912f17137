package shmem_test

import (
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

// hotOps returns the per-op calls of the hot path, each addressed from PE 0
// to PE 1, on objects allocated collectively by every PE.
func hotOps(p *shmem.PE) (map[string]func() error, error) {
	buf, err := shmem.Malloc[int64](p, 1024)
	if err != nil {
		return nil, err
	}
	word, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return nil, err
	}
	small := make([]int64, 1)
	big := make([]int64, 1024)
	return map[string]func() error{
		"Put8B":          func() error { return shmem.Put(p, buf, small, 1) },
		"Put8KiB":        func() error { return shmem.Put(p, buf, big, 1) },
		"Get8B":          func() error { return shmem.Get(p, small, buf, 1) },
		"Get8KiB":        func() error { return shmem.Get(p, big, buf, 1) },
		"P":              func() error { return shmem.P(p, word, 7, 1) },
		"G":              func() error { _, err := shmem.G(p, word, 1); return err },
		"AtomicFetchAdd": func() error { _, err := shmem.AtomicFetchAdd(p, word, 1, 1); return err },
		"AtomicAdd":      func() error { return shmem.AtomicAdd(p, word, 1, 1) },
		"Quiet":          func() error { return p.Quiet() },
	}, nil
}

// TestHotPathAllocatesNothing asserts 0 allocations per call for the hot
// path (the benchmarks below report the same with -benchmem).
func TestHotPathAllocatesNothing(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		ops, err := hotOps(p)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			for name, op := range ops {
				var opErr error
				allocs := testing.AllocsPerRun(100, func() {
					if err := op(); err != nil {
						opErr = err
					}
				})
				if opErr != nil {
					return opErr
				}
				if allocs != 0 {
					t.Errorf("%s: %v allocs per call, want 0", name, allocs)
				}
			}
		}
		return p.BarrierAll()
	})
}

// benchOp times op name of hotOps on PE 0 of a simulated world of 2
// made with opts.
func benchOp(b *testing.B, name string, opts ...sim.Option) {
	err := sim.Run(2, func(p *shmem.PE) error {
		ops, err := hotOps(p)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			op := ops[name]
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := op(); err != nil {
					return err
				}
			}
			b.StopTimer()
		}
		return p.BarrierAll()
	}, opts...)
	if err != nil {
		b.Fatal(err)
	}
}

func BenchmarkPut8B(b *testing.B)          { benchOp(b, "Put8B") }
func BenchmarkPut8KiB(b *testing.B)        { benchOp(b, "Put8KiB") }
func BenchmarkGet8B(b *testing.B)          { benchOp(b, "Get8B") }
func BenchmarkGet8KiB(b *testing.B)        { benchOp(b, "Get8KiB") }
func BenchmarkP(b *testing.B)              { benchOp(b, "P") }
func BenchmarkG(b *testing.B)              { benchOp(b, "G") }
func BenchmarkAtomicFetchAdd(b *testing.B) { benchOp(b, "AtomicFetchAdd") }
func BenchmarkAtomicAdd(b *testing.B)      { benchOp(b, "AtomicAdd") }
func BenchmarkQuiet(b *testing.B)          { benchOp(b, "Quiet") }

// BenchmarkBarrierAll measures a barrier of 8 PEs, per barrier.
func BenchmarkBarrierAll(b *testing.B) { benchBarrier(b, 8) }

// BenchmarkBarrierAll2PEs measures a barrier of 2 PEs, the same-host pair
// of bench/compare.sh (the in-process world's paths are the udma ones).
func BenchmarkBarrierAll2PEs(b *testing.B) { benchBarrier(b, 2) }

// benchBarrier times BarrierAll on n PEs, per barrier.
func benchBarrier(b *testing.B, n int) {
	err := sim.Run(n, func(p *shmem.PE) error {
		if p.MyPE() == 0 {
			b.ReportAllocs()
			b.ResetTimer()
		}
		for i := 0; i < b.N; i++ {
			if err := p.BarrierAll(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}
