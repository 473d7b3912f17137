package shmem_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

const (
	growInitial = 1 << 20
	growLimit   = 16 << 20
)

// A heap of 1 MiB that may grow to 16: ten times the initial heap is
// allocated, written by puts and atomics from every PE to every PE, read
// back, freed and allocated again; an object from before the growth stays
// valid; past the limit every PE gets ErrOutOfMemory.
func TestHeapGrowsTenfold(t *testing.T) {
	const npes = 4
	run(t, npes, func(p *shmem.PE) error {
		me := p.MyPE()
		early, err := shmem.Calloc[int64](p, 8)
		if err != nil {
			return err
		}
		for round := 0; round < 2; round++ {
			var objs []shmem.Sym[int64]
			for i := 0; i < 10; i++ {
				s, err := shmem.Malloc[int64](p, growInitial/8) // 1 MiB each
				if err != nil {
					return fmt.Errorf("round %d, MiB %d: %w", round, i, err)
				}
				objs = append(objs, s)
			}
			counters, err := shmem.Calloc[int64](p, npes)
			if err != nil {
				return err
			}
			// Every PE writes its own stripe of every object on every PE.
			stripe := growInitial / 8 / npes
			src := make([]int64, stripe)
			for k, s := range objs {
				for pe := 0; pe < npes; pe++ {
					for i := range src {
						src[i] = int64(round<<40 | k<<32 | me<<24 | pe<<16 | i)
					}
					if err := shmem.Put(p, s.Slice(me*stripe, (me+1)*stripe), src, pe); err != nil {
						return err
					}
					if err := shmem.AtomicAdd(p, counters.Slice(me, me+1), int64(k+1), pe); err != nil {
						return err
					}
				}
			}
			if err := shmem.Put(p, early.Slice(me, me+1), []int64{int64(round*100 + me)}, (me+1)%npes); err != nil {
				return err
			}
			if err := p.BarrierAll(); err != nil {
				return err
			}
			// Read every object of the next PE with Get, and check the own part.
			got := make([]int64, growInitial/8)
			next := (me + 1) % npes
			for k, s := range objs {
				if err := shmem.Get(p, got, s, next); err != nil {
					return err
				}
				for w := 0; w < npes; w++ {
					for _, i := range []int{0, stripe / 2, stripe - 1} {
						if want := int64(round<<40 | k<<32 | w<<24 | next<<16 | i); got[w*stripe+i] != want {
							return fmt.Errorf("round %d object %d at PE %d, writer %d element %d: %#x, want %#x", round, k, next, w, i, got[w*stripe+i], want)
						}
					}
				}
			}
			for w, c := range counters.Local(p) {
				if c != 55 {
					return fmt.Errorf("counter of writer %d = %d, want 55", w, c)
				}
			}
			prev := (me - 1 + npes) % npes
			if v := early.Local(p)[prev]; v != int64(round*100+prev) {
				return fmt.Errorf("the object allocated before the growth holds %d", v)
			}
			if err := p.BarrierAll(); err != nil {
				return err
			}
			for _, s := range append(objs, counters) {
				if err := shmem.Free(p, s); err != nil {
					return err
				}
			}
		}
		// Past the limit: refused everywhere, and the heap still works.
		if _, err := shmem.Malloc[byte](p, 17<<20); !errors.Is(err, shmem.ErrOutOfMemory) {
			return fmt.Errorf("17 MiB in a 16 MiB limit: %v", err)
		}
		var held []shmem.Sym[byte]
		for {
			s, err := shmem.Malloc[byte](p, 4<<20)
			if errors.Is(err, shmem.ErrOutOfMemory) {
				break
			}
			if err != nil {
				return err
			}
			held = append(held, s)
		}
		if len(held) != 3 { // 16 MiB less what the first MiB holds already
			return fmt.Errorf("%d blocks of 4 MiB fit in the limit, want 3", len(held))
		}
		return p.BarrierAll()
	}, sim.WithHeapSize(growInitial), sim.WithHeapLimit(growLimit))
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
