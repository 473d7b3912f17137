package spmdcheck

import (
	"errors"
	"fmt"

	"github.com/goshmem/shmem"
)

// Grow checks a heap of initial bytes that may grow to 16 times that: ten
// times the initial heap is allocated (in objects of initial bytes), written
// by puts and atomics from every PE to every PE, read back with gets, freed
// and allocated again; an object from before the growth stays valid; past
// the limit every PE gets ErrOutOfMemory and the heap still works. Every PE
// calls it, in a world made with that heap size and limit.
func Grow(p *shmem.PE, initial int) error {
	me, npes := p.MyPE(), p.NPEs()
	early, err := shmem.Calloc[int64](p, npes)
	if err != nil {
		return err
	}
	words := initial / 8
	stripe := words / npes
	for round := 0; round < 2; round++ {
		var objs []shmem.Sym[int64]
		for i := 0; i < 10; i++ {
			s, err := shmem.Malloc[int64](p, words)
			if err != nil {
				return fmt.Errorf("round %d, object %d of %d bytes: %w", round, i, initial, err)
			}
			objs = append(objs, s)
		}
		counters, err := shmem.Calloc[int64](p, npes)
		if err != nil {
			return err
		}
		// Every PE writes its own stripe of every object on every PE and
		// adds to its own counter there.
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
		got := make([]int64, words)
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
	if _, err := shmem.Malloc[byte](p, 17*initial); !errors.Is(err, shmem.ErrOutOfMemory) {
		return fmt.Errorf("%d bytes in a limit of %d: %v", 17*initial, 16*initial, err)
	}
	var held []shmem.Sym[byte]
	for {
		s, err := shmem.Malloc[byte](p, 4*initial)
		if errors.Is(err, shmem.ErrOutOfMemory) {
			break
		}
		if err != nil {
			return err
		}
		held = append(held, s)
	}
	if len(held) != 3 { // the limit less what the first segment holds already
		return fmt.Errorf("%d blocks of %d bytes fit in the limit, want 3", len(held), 4*initial)
	}
	for _, s := range held {
		if err := shmem.P(p, s.Slice(4*initial-1, 4*initial), byte(me), (me+1)%npes); err != nil {
			return err
		}
	}
	return errors.Join(p.BarrierAll(), shmem.Free(p, early))
}
