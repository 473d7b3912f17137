package shmem_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/internal/spmdcheck"
	"github.com/goshmem/shmem/sim"
)

const (
	growInitial = 1 << 20
	growLimit   = 16 << 20
)

// A heap of 1 MiB that may grow to 16 (spmdcheck.Grow, which the process
// tests run over shared memory and TCP too).
func TestHeapGrowsTenfold(t *testing.T) {
	run(t, 4, func(p *shmem.PE) error { return spmdcheck.Grow(p, growInitial) },
		sim.WithHeapSize(growInitial), sim.WithHeapLimit(16*growInitial))
}

// Without a limit the heap does not grow, as before.
func TestHeapWithoutLimitDoesNotGrow(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		if _, err := shmem.Malloc[byte](p, 2<<20); !errors.Is(err, shmem.ErrOutOfMemory) {
			return fmt.Errorf("2 MiB in a 1 MiB heap: %v", err)
		}
		return nil
	}, sim.WithHeapSize(growInitial))
}

// BenchmarkPutGrownSegment: an 8-byte and an 8 KiB put into the first
// segment of a grown heap and into its last segment cost the same (the
// offset space is one range: no segment lookup on the path).
func BenchmarkPutGrownSegment(b *testing.B) {
	for _, where := range []string{"first", "grown"} {
		for _, n := range []int{1, 1024} {
			b.Run(fmt.Sprintf("%s/%dB", where, 8*n), func(b *testing.B) {
				err := sim.Run(2, func(p *shmem.PE) error {
					first, err := shmem.Malloc[int64](p, 1024)
					if err != nil {
						return err
					}
					// Fill the initial heap so the next object lands in a grown segment.
					filler, err := shmem.Malloc[byte](p, growInitial/2)
					if err != nil {
						return err
					}
					grown, err := shmem.Malloc[int64](p, growInitial/8)
					if err != nil {
						return err
					}
					dst := first
					if where == "grown" {
						dst = grown.Slice(growInitial/8-1024, growInitial/8)
					}
					src := make([]int64, n)
					if p.MyPE() == 0 {
						b.ReportAllocs()
						b.ResetTimer()
						for i := 0; i < b.N; i++ {
							if err := shmem.Put(p, dst, src, 1); err != nil {
								return err
							}
						}
						b.StopTimer()
					}
					_ = filler
					return p.BarrierAll()
				}, sim.WithHeapSize(growInitial), sim.WithHeapLimit(growLimit))
				if err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}
