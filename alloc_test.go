package shmem_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

func TestMallocSymmetric(t *testing.T) {
	const n = 5
	var mu sync.Mutex
	syms := map[int][]shmem.Sym[int64]{}
	run(t, n, func(p *shmem.PE) error {
		var mine []shmem.Sym[int64]
		for i := 0; i < 4; i++ {
			s, err := shmem.Malloc[int64](p, 10*i+1)
			if err != nil {
				return err
			}
			mine = append(mine, s)
		}
		mu.Lock()
		syms[p.MyPE()] = mine
		mu.Unlock()
		return nil
	})
	for pe := 1; pe < n; pe++ {
		for i := range syms[0] {
			if syms[pe][i] != syms[0][i] {
				t.Errorf("allocation %d: PE %d got %v, PE 0 got %v", i, pe, syms[pe][i], syms[0][i])
			}
		}
	}
	if syms[0][0] == syms[0][1] {
		t.Errorf("two allocations got equal Syms")
	}
}

func TestCallocZeroes(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		// Dirty memory, free it, and calloc the same space back.
		s, err := shmem.Malloc[uint64](p, 256)
		if err != nil {
			return err
		}
		for i := range s.Local(p) {
			s.Local(p)[i] = ^uint64(0)
		}
		if err := shmem.Free(p, s); err != nil {
			return err
		}
		z, err := shmem.Calloc[uint64](p, 256)
		if err != nil {
			return err
		}
		if s.Local(p) != nil {
			return fmt.Errorf("Local of a freed Sym is not nil")
		}
		for i, v := range z.Local(p) {
			if v != 0 && i != 0 { // the other PE may already have put 42 in 0
				return fmt.Errorf("PE %d: Calloc element %d = %#x", p.MyPE(), i, v)
			}
		}
		// Calloc also synchronizes: a put right after it is not wiped
		// by the other PE's zeroing.
		if err := shmem.P(p, z, 42, 1-p.MyPE()); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		return want(p, "put after Calloc", z.Local(p)[0], uint64(42))
	})
}

func TestAlign(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		if _, err := shmem.Malloc[int8](p, 3); err != nil { // push the next offset off alignment
			return err
		}
		for _, a := range []int{1, 8, 64, 256, 4096, 1 << 16} {
			s, err := shmem.Align[int32](p, a, 5)
			if err != nil {
				return err
			}
			// The heap mapping is page-aligned, so addresses show offsets.
			addr := uintptr(unsafe.Pointer(&s.Local(p)[0]))
			if addr%uintptr(a) != 0 {
				return fmt.Errorf("Align(%d) gave address %#x", a, addr)
			}
		}
		for _, a := range []int{0, -8, 3, 96} {
			if err := wantErr(second(shmem.Align[int32](p, a, 5)), shmem.ErrInvalidArgument, "Align", "power of two"); err != nil {
				return err
			}
		}
		return nil
	})
}

func TestRealloc(t *testing.T) {
	run(t, 3, func(p *shmem.PE) error {
		me := p.MyPE()
		a, err := shmem.Malloc[int32](p, 10)
		if err != nil {
			return err
		}
		for i := range a.Local(p) {
			a.Local(p)[i] = int32(me*100 + i)
		}
		// b sits right after a, so growing a must move it.
		b, err := shmem.Calloc[int32](p, 1)
		if err != nil {
			return err
		}
		grown, err := shmem.Realloc(p, a, 1000)
		if err != nil {
			return err
		}
		if grown.Len() != 1000 {
			return fmt.Errorf("Realloc len %d", grown.Len())
		}
		for i := 0; i < 10; i++ {
			if i == 5 {
				continue // the left neighbour may already have put -1 there
			}
			if err := want(p, fmt.Sprintf("kept[%d]", i), grown.Local(p)[i], int32(me*100+i)); err != nil {
				return err
			}
		}
		// The old Sym is stale now.
		if err := wantErr(shmem.Put(p, a, []int32{1}, me), shmem.ErrInvalidArgument, "Put", "freed"); err != nil {
			return err
		}
		// Right after Realloc returns, a put to another PE lands in the new
		// object and is not overwritten by that PE's copy of the contents.
		if err := shmem.P(p, grown.Slice(5, 6), int32(-1), (me+1)%3); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if err := want(p, "put after Realloc", grown.Local(p)[5], int32(-1)); err != nil {
			return err
		}
		shrunk, err := shmem.Realloc(p, grown, 3)
		if err != nil {
			return err
		}
		if err := joinFirst(want(p, "shrunk len", shrunk.Len(), 3), want(p, "shrunk[2]", shrunk.Local(p)[2], int32(me*100+2))); err != nil {
			return err
		}
		if err := wantErr(second(shmem.Realloc(p, shrunk.Slice(1, 2), 4)), shmem.ErrInvalidArgument, "Realloc", "slice"); err != nil {
			return err
		}
		// Realloc to 0 elements frees the object and returns the zero Sym,
		// which Realloc then grows as Malloc would.
		gone, err := shmem.Realloc(p, shrunk, 0)
		if err != nil {
			return err
		}
		if gone != (shmem.Sym[int32]{}) {
			return fmt.Errorf("Realloc to 0 returned %+v, want the zero Sym", gone)
		}
		if err := wantErr(shmem.Put(p, shrunk, []int32{1}, me), shmem.ErrInvalidArgument, "Put", "freed"); err != nil {
			return err
		}
		again, err := shmem.Realloc(p, gone, 2)
		if err != nil {
			return err
		}
		if err := want(p, "Realloc of the zero Sym, len", again.Len(), 2); err != nil {
			return err
		}
		return joinFirst(shmem.Free(p, again), shmem.Free(p, b))
	})
}

// TestAllocMismatch: PEs that ask for different things, in any way, all
// fail with ErrInvalidArgument, and the world stays usable.
func TestAllocMismatch(t *testing.T) {
	cases := map[string]func(p *shmem.PE) error{
		"size": func(p *shmem.PE) error {
			_, err := shmem.Malloc[int64](p, 10+p.MyPE())
			return err
		},
		"type size": func(p *shmem.PE) error {
			if p.MyPE() == 0 {
				_, err := shmem.Malloc[int32](p, 4)
				return err
			}
			_, err := shmem.Malloc[int64](p, 4)
			return err
		},
		"align": func(p *shmem.PE) error {
			_, err := shmem.Align[int64](p, 64<<p.MyPE(), 4)
			return err
		},
		"kind": func(p *shmem.PE) error {
			s, err := shmem.Malloc[int64](p, 4)
			if err != nil {
				return err
			}
			if p.MyPE() == 0 {
				return shmem.Free(p, s)
			}
			_, err = shmem.Realloc(p, s, 8)
			return err
		},
		"realloc to 0 on one PE": func(p *shmem.PE) error {
			s, err := shmem.Malloc[int64](p, 4)
			if err != nil {
				return err
			}
			_, err = shmem.Realloc(p, s, 8*p.MyPE())
			return err
		},
		"negative count on one PE": func(p *shmem.PE) error {
			_, err := shmem.Malloc[int64](p, 4-5*p.MyPE())
			return err
		},
		"too big on one PE": func(p *shmem.PE) error {
			_, err := shmem.Malloc[int64](p, 4+p.MyPE()<<40)
			return err
		},
		"bad alignment on one PE": func(p *shmem.PE) error {
			_, err := shmem.Align[int64](p, 64+p.MyPE(), 4)
			return err
		},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			run(t, 3, func(p *shmem.PE) error {
				err := c(p)
				if err == nil || !(errors.Is(err, shmem.ErrInvalidArgument) || errors.Is(err, shmem.ErrOutOfMemory) && p.MyPE() > 0) {
					return fmt.Errorf("PE %d: err = %v, want ErrInvalidArgument", p.MyPE(), err)
				}
				// The collective order is intact: the next allocation works.
				s, err := shmem.Calloc[int64](p, 2)
				if err != nil {
					return fmt.Errorf("allocation after a mismatch: %w", err)
				}
				if err := shmem.P(p, s, 7, (p.MyPE()+1)%3); err != nil {
					return err
				}
				if err := p.BarrierAll(); err != nil {
					return err
				}
				return want(p, "after mismatch", s.Local(p)[0], int64(7))
			}, sim.WithTimeout(20*time.Second))
		})
	}
}

func TestOutOfMemory(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		const heap = 1 << 20
		_, err := shmem.Malloc[byte](p, 2*heap)
		if err := wantErr(err, shmem.ErrOutOfMemory, "Malloc", fmt.Sprint(2*heap), fmt.Sprint(heap)); err != nil {
			return err
		}
		// Fill the heap in 64 KiB blocks until it runs out; the failure
		// names the request and the space left.
		var blocks []shmem.Sym[byte]
		for {
			s, err := shmem.Malloc[byte](p, 64<<10)
			if err != nil {
				if err := wantErr(err, shmem.ErrOutOfMemory, "Malloc", "65536 bytes", "free"); err != nil {
					return err
				}
				break
			}
			blocks = append(blocks, s)
			if len(blocks) > heap/(64<<10) {
				return fmt.Errorf("more 64 KiB blocks than fit in the heap")
			}
		}
		// The team pool (team.PoolSlots) may take up to a quarter of the heap.
		if len(blocks) < heap*3/4/(64<<10)-1 {
			return fmt.Errorf("only %d blocks of 64 KiB fit in 1 MiB", len(blocks))
		}
		// Freeing one block makes room for exactly one again (first fit).
		if err := shmem.Free(p, blocks[3]); err != nil {
			return err
		}
		s, err := shmem.Malloc[byte](p, 64<<10)
		if err != nil {
			return err
		}
		if &s.Local(p)[0] != &blocks[4].Local(p)[0] && uintptr(unsafe.Pointer(&s.Local(p)[0]))+64<<10 != uintptr(unsafe.Pointer(&blocks[4].Local(p)[0])) {
			return fmt.Errorf("first fit did not reuse the freed hole")
		}
		_, err = shmem.Malloc[int64](p, 1<<62)
		if err == nil || !strings.Contains(err.Error(), "Malloc") || !errors.Is(err, shmem.ErrOutOfMemory) {
			return fmt.Errorf("overflowing size: %v", err)
		}
		return nil
	}, sim.WithHeapSize(1<<20))
}

func TestFreeErrors(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		s, err := shmem.Malloc[int64](p, 4)
		if err != nil {
			return err
		}
		if err := shmem.Free(p, s); err != nil {
			return err
		}
		return joinFirst(
			wantErr(shmem.Free(p, s), shmem.ErrInvalidArgument, "Free", "freed"),
			wantErr(second(shmem.Realloc(p, s, 8)), shmem.ErrInvalidArgument, "Realloc", "freed"),
			wantErr(second(shmem.Malloc[int64](p, -1)), shmem.ErrInvalidArgument, "Malloc", "negative"),
			wantErr(second(shmem.Calloc[int64](p, -1)), shmem.ErrInvalidArgument, "Calloc", "negative"),
		)
	}, sim.WithTimeout(20*time.Second))
}

// TestFreeZeroSym: Free of the zero Sym frees nothing (shmem_free(NULL))
// and returns nil when every PE makes it; when one PE frees nothing while
// another frees an object, both fail and the object stays allocated. A
// nil context's Destroy (SHMEM_CTX_INVALID's) does nothing either.
func TestFreeZeroSym(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		if err := shmem.Free(p, shmem.Sym[int64]{}); err != nil {
			return fmt.Errorf("Free of the zero Sym on every PE: %v", err)
		}
		s, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		freed := s
		if p.MyPE() == 0 {
			freed = shmem.Sym[int64]{}
		}
		if err := wantErr(shmem.Free(p, freed), shmem.ErrInvalidArgument, "Free", "different free"); err != nil {
			return err
		}
		if err := shmem.P(p, s, 7, 1-p.MyPE()); err != nil {
			return fmt.Errorf("the object a mismatched Free named is not allocated still: %v", err)
		}
		var ctx *shmem.PE
		if err := ctx.Destroy(); err != nil {
			return fmt.Errorf("Destroy of a nil context: %v", err)
		}
		return shmem.Free(p, s)
	})
}

// TestAllocSyncFailureNamesCall: when a peer dies in the synchronization
// that ends Calloc or Realloc, the survivor's error names the call it
// made, not the SyncAll inside it.
func TestAllocSyncFailureNamesCall(t *testing.T) {
	for _, op := range []string{"Calloc", "Realloc"} {
		var got error
		_ = sim.Run(2, func(p *shmem.PE) error {
			var err error
			if op == "Calloc" {
				_, err = shmem.Calloc[int64](p, 1)
			} else {
				x, merr := shmem.Malloc[int64](p, 1)
				if merr != nil {
					return merr
				}
				_, err = shmem.Realloc(p, x, 4)
			}
			if p.MyPE() == 0 {
				got = err
			}
			return err
		}, sim.WithFailure(1, 0), sim.WithSeed(1)) // PE 1 dies at its first put: the synchronization's
		if err := wantErr(got, shmem.ErrPEFailed, "shmem: "+op+" (PE 0", "PE 1"); err != nil {
			t.Error(err)
		} else if strings.Contains(got.Error(), "SyncAll") {
			t.Errorf("%s: %q names SyncAll", op, got)
		}
	}
}

// TestReallocInPlaceRefusesOldSym: after a Realloc that resizes the object
// where it lies (the last object grows, any object shrinks), the old Sym is
// refused as after one that moves it, and Free of it frees nothing; the new
// Sym keeps the contents. The old Sym used to stay valid, so that it
// reached, and freed, the new object.
func TestReallocInPlaceRefusesOldSym(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		me := p.MyPE()
		z, err := shmem.Calloc[int64](p, 2)
		if err != nil {
			return err
		}
		z.Local(p)[1] = 40 + int64(me)
		z2, err := shmem.Realloc(p, z, 4) // the last object: grows in place
		if err != nil {
			return err
		}
		z3, err := shmem.Realloc(p, z2, 3) // a shrink never moves
		if err != nil {
			return err
		}
		for i, old := range []shmem.Sym[int64]{z, z2} {
			if err := wantErr(shmem.P(p, old, 5, 1-me), shmem.ErrInvalidArgument, "P", "Sym was freed"); err != nil {
				return fmt.Errorf("old Sym %d: %w", i, err)
			}
			if err := wantErr(shmem.Free(p, old), shmem.ErrInvalidArgument, "Free", "freed"); err != nil {
				return fmt.Errorf("old Sym %d: %w", i, err)
			}
		}
		if err := want(p, "contents kept", z3.Local(p)[1], 40+int64(me)); err != nil {
			return err
		}
		if err := shmem.P(p, z3, 7, 1-me); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if err := want(p, "put into the new Sym", z3.Local(p)[0], int64(7)); err != nil {
			return err
		}
		return shmem.Free(p, z3)
	})
}
