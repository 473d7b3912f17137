package shmem_test

import (
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
)

// TestFenceOrdersPuts: PE 0 writes a block tagged i, fences, then writes
// flag = i, round after round, while PE 1 reads flag then the block. Since
// the block is written before the flag in every round, a reader that saw
// flag = f must find every word of the block >= f.
func TestFenceOrdersPuts(t *testing.T) {
	const rounds, words = 300, 257 // not a multiple of 8 bytes: a plain copy
	run(t, 2, func(p *shmem.PE) error {
		data, _ := shmem.Calloc[int32](p, words)
		flag, _ := shmem.Calloc[int64](p, 1)
		done, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 0 {
			block := make([]int32, words)
			for i := 1; i <= rounds; i++ {
				for k := range block {
					block[k] = int32(i)
				}
				if err := shmem.PutNBI(p, data, block, 1); err != nil {
					return err
				}
				p.Fence()
				if err := shmem.P(p, flag, int64(i), 1); err != nil {
					return err
				}
			}
			return shmem.WaitUntil(p, done, shmem.CmpEQ, 1)
		}
		local := data.Local(p)
		for seen := int64(0); seen < rounds; {
			if err := shmem.WaitUntil(p, flag, shmem.CmpGT, seen); err != nil {
				return err
			}
			seen, _ = shmem.AtomicFetch(p, flag, 1)
			for k := range local {
				// Atomic read of our own word: PE 0 may be writing the next round.
				v, err := shmem.AtomicFetch(p, data.Slice(k, k+1), 1)
				if err != nil {
					return err
				}
				if int64(v) < seen {
					return fmt.Errorf("flag %d seen before data word %d (= %d)", seen, k, v)
				}
			}
		}
		return shmem.P(p, done, 1, 0)
	})
}

// TestQuietCompletesNBI: after Quiet, NBI puts are visible at the target
// and NBI gets have filled their buffers; a flag written after Quiet is
// never seen before the data.
func TestQuietCompletesNBI(t *testing.T) {
	run(t, 3, func(p *shmem.PE) error {
		me, np := p.MyPE(), p.NPEs()
		data, _ := shmem.Calloc[int64](p, 100*np)
		flags, err := shmem.Calloc[int64](p, np)
		if err != nil {
			return err
		}
		src := make([]int64, 100)
		for i := range src {
			src[i] = int64(me*1000 + i + 1)
		}
		for pe := 0; pe < np; pe++ {
			if err := shmem.PutNBI(p, data.Slice(me*100, me*100+100), src, pe); err != nil {
				return err
			}
		}
		if err := p.Quiet(); err != nil {
			return err
		}
		for pe := 0; pe < np; pe++ {
			if err := shmem.AtomicSet(p, flags.Slice(me, me+1), 1, pe); err != nil {
				return err
			}
		}
		if err := shmem.WaitUntilAll(p, flags, nil, shmem.CmpEQ, 1); err != nil {
			return err
		}
		local := data.Local(p)
		for pe := 0; pe < np; pe++ {
			for i := 0; i < 100; i++ {
				if err := want(p, fmt.Sprintf("from %d [%d]", pe, i), local[pe*100+i], int64(pe*1000+i+1)); err != nil {
					return err
				}
			}
		}
		got := make([]int64, 100*np)
		if err := shmem.GetNBI(p, got, data, (me+1)%np); err != nil {
			return err
		}
		if err := p.Quiet(); err != nil {
			return err
		}
		for i := range got {
			if err := want(p, fmt.Sprintf("GetNBI[%d]", i), got[i], local[i]); err != nil {
				return err
			}
		}
		return p.BarrierAll()
	})
}

// TestBarrierCompletesPuts: NBI puts issued before BarrierAll are visible
// everywhere after it, with no Quiet of their own.
func TestBarrierCompletesPuts(t *testing.T) {
	run(t, 7, func(p *shmem.PE) error {
		me, np := p.MyPE(), p.NPEs()
		s, err := shmem.Calloc[int32](p, np)
		if err != nil {
			return err
		}
		for round := 1; round <= 20; round++ {
			for pe := 0; pe < np; pe++ {
				if err := shmem.PutNBI(p, s.Slice(me, me+1), []int32{int32(round*100 + me)}, pe); err != nil {
					return err
				}
			}
			if err := p.BarrierAll(); err != nil {
				return err
			}
			for pe, v := range s.Local(p) {
				if err := want(p, fmt.Sprintf("round %d from %d", round, pe), v, int32(round*100+pe)); err != nil {
					return err
				}
			}
			if err := p.BarrierAll(); err != nil { // nobody overwrites before all read
				return err
			}
		}
		return nil
	})
}

// TestSyncAllWithQuiet: SyncAll alone only synchronizes; OpenSHMEM says it
// does not complete puts. The correct idiom, Quiet then SyncAll, makes them
// visible. (On the simulator every put completes at once, so the absence
// of completion in SyncAll itself cannot be observed here.)
func TestSyncAllWithQuiet(t *testing.T) {
	run(t, 4, func(p *shmem.PE) error {
		me, np := p.MyPE(), p.NPEs()
		s, err := shmem.Calloc[int64](p, np)
		if err != nil {
			return err
		}
		for pe := 0; pe < np; pe++ {
			if err := shmem.PutNBI(p, s.Slice(me, me+1), []int64{int64(me + 1)}, pe); err != nil {
				return err
			}
		}
		if err := p.Quiet(); err != nil {
			return err
		}
		if err := p.SyncAll(); err != nil {
			return err
		}
		for pe, v := range s.Local(p) {
			if err := want(p, fmt.Sprintf("from %d", pe), v, int64(pe+1)); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestFenceOrdersAtomics: an atomic after a fence lands after the put
// before it, on every PE pair at once.
func TestFenceOrdersAtomics(t *testing.T) {
	run(t, 4, func(p *shmem.PE) error {
		me, np := p.MyPE(), p.NPEs()
		data, _ := shmem.Calloc[int64](p, 3*np)
		cnt, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		for pe := 0; pe < np; pe++ {
			if err := shmem.Put(p, data.Slice(3*me, 3*me+3), []int64{int64(me), int64(me * 2), int64(me * 3)}, pe); err != nil {
				return err
			}
			p.Fence()
			if err := shmem.AtomicInc(p, cnt, pe); err != nil {
				return err
			}
		}
		if err := shmem.WaitUntil(p, cnt, shmem.CmpEQ, int64(np)); err != nil {
			return err
		}
		local := data.Local(p)
		for pe := 0; pe < np; pe++ {
			if local[3*pe+2] != int64(pe*3) || local[3*pe+1] != int64(pe*2) {
				return fmt.Errorf("PE %d: counter complete but block from %d is %v", me, pe, local[3*pe:3*pe+3])
			}
		}
		return p.BarrierAll()
	})
}
