package shmem_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

var worlds = []int{1, 2, 3, 4, 7, 8}

func val(pe, i int) int64 { return int64(pe*1000003 + i*7 + 1) }

func check[T comparable](what string, pe int, got []T, want func(i int) T) error {
	for i := range got {
		if w := want(i); got[i] != w {
			return fmt.Errorf("%s: PE %d index %d = %v, want %v", what, pe, i, got[i], w)
		}
	}
	return nil
}

func TestBroadcast(t *testing.T) {
	for _, n := range worlds {
		for _, size := range []int{0, 1, 5, 100, 20000} {
			t.Run(fmt.Sprintf("n%d_%d", n, size), func(t *testing.T) {
				runSim(t, n, func(p *shmem.PE) error {
					w := p.TeamWorld()
					src, err := shmem.Malloc[int64](p, size)
					if err != nil {
						return err
					}
					dst, err := shmem.Malloc[int64](p, size+1)
					if err != nil {
						return err
					}
					me := p.MyPE()
					for _, root := range []int{0, n - 1, n / 2} {
						for i := range src.Local(p) {
							src.Local(p)[i] = val(me, i)
						}
						dst.Local(p)[size] = -5
						if err := shmem.Broadcast(w, dst.Slice(0, size), src, root); err != nil {
							return err
						}
						if err := check("broadcast", me, dst.Local(p)[:size], func(i int) int64 { return val(root, i) }); err != nil {
							return err
						}
						if dst.Local(p)[size] != -5 {
							return fmt.Errorf("broadcast wrote past its count")
						}
						// In place: dst == src.
						if err := shmem.Broadcast(w, src, src, root); err != nil {
							return err
						}
						if err := check("broadcast in place", me, src.Local(p), func(i int) int64 { return val(root, i) }); err != nil {
							return err
						}
					}
					return nil
				})
			})
		}
	}
}

func TestFCollect(t *testing.T) {
	for _, n := range worlds {
		for _, size := range []int{0, 1, 3, 3000} {
			t.Run(fmt.Sprintf("n%d_%d", n, size), func(t *testing.T) {
				runSim(t, n, func(p *shmem.PE) error {
					src, err := shmem.Malloc[int64](p, size)
					if err != nil {
						return err
					}
					dst, err := shmem.Malloc[int64](p, n*size)
					if err != nil {
						return err
					}
					me := p.MyPE()
					for i := range src.Local(p) {
						src.Local(p)[i] = val(me, i)
					}
					if err := shmem.FCollect(p.TeamWorld(), dst, src); err != nil {
						return err
					}
					return check("fcollect", me, dst.Local(p), func(i int) int64 { return val(i/size, i%size) })
				})
			})
		}
	}
}

func TestCollect(t *testing.T) {
	for _, n := range worlds {
		for _, scale := range []int{0, 1, 1500} {
			t.Run(fmt.Sprintf("n%d_x%d", n, scale), func(t *testing.T) {
				runSim(t, n, func(p *shmem.PE) error {
					me := p.MyPE()
					// PE i contributes i*scale elements: PE 0 gives none.
					buf, err := shmem.Malloc[int32](p, (n-1)*scale)
					if err != nil {
						return err
					}
					total := n * (n - 1) / 2 * scale
					dst, err := shmem.Malloc[int32](p, total+1)
					if err != nil {
						return err
					}
					src := buf.Slice(0, me*scale)
					for i := range src.Local(p) {
						src.Local(p)[i] = int32(val(me, i))
					}
					dst.Local(p)[total] = -9
					if err := shmem.Collect(p.TeamWorld(), dst, src); err != nil {
						return err
					}
					var want []int32
					for q := 0; q < n; q++ {
						for i := 0; i < q*scale; i++ {
							want = append(want, int32(val(q, i)))
						}
					}
					want = append(want, -9)
					return check("collect", me, dst.Local(p), func(i int) int32 { return want[i] })
				})
			})
		}
	}
}

func TestAlltoall(t *testing.T) {
	for _, n := range worlds {
		for _, block := range []int{0, 1, 4, 3000} {
			t.Run(fmt.Sprintf("n%d_%d", n, block), func(t *testing.T) {
				runSim(t, n, func(p *shmem.PE) error {
					me := p.MyPE()
					src, err := shmem.Malloc[uint16](p, n*block)
					if err != nil {
						return err
					}
					dst, err := shmem.Malloc[uint16](p, n*block)
					if err != nil {
						return err
					}
					// Element k of the block for PE j encodes (me, j, k).
					enc := func(from, to, k int) uint16 { return uint16(from*100 + to*10 + k) }
					for j := 0; j < n; j++ {
						for k := 0; k < block; k++ {
							src.Local(p)[j*block+k] = enc(me, j, k)
						}
					}
					if err := shmem.Alltoall(p.TeamWorld(), dst, src); err != nil {
						return err
					}
					return check("alltoall", me, dst.Local(p), func(i int) uint16 { return enc(i/block, me, i%block) })
				})
			})
		}
	}
}

func TestAlltoalls(t *testing.T) {
	for _, n := range []int{1, 3, 4, 7} {
		// The last two send blocks over 64 KiB: a strided source is
		// packed in pieces (coll's packMax), a contiguous one is not.
		for _, st := range [][3]int{{1, 1, 3}, {2, 3, 2}, {3, 1, 4}, {1, 2, 1}, {2, 2, 0}, {1, 2, 9000}, {1, 1, 9000}} {
			ds, ss, cnt := st[0], st[1], st[2]
			t.Run(fmt.Sprintf("n%d_d%d_s%d_c%d", n, ds, ss, cnt), func(t *testing.T) {
				runSim(t, n, func(p *shmem.PE) error {
					me := p.MyPE()
					src, err := shmem.Malloc[int64](p, ss*n*cnt+1)
					if err != nil {
						return err
					}
					dst, err := shmem.Malloc[int64](p, ds*n*cnt+1)
					if err != nil {
						return err
					}
					for i := range src.Local(p) {
						src.Local(p)[i] = -1
					}
					for i := range dst.Local(p) {
						dst.Local(p)[i] = -7
					}
					for j := 0; j < n; j++ {
						for k := 0; k < cnt; k++ {
							src.Local(p)[ss*(j*cnt+k)] = int64(me*100000000 + j*100000 + k)
						}
					}
					if err := shmem.Alltoalls(p.TeamWorld(), dst, src, ds, ss, cnt); err != nil {
						return err
					}
					return check("alltoalls", me, dst.Local(p), func(i int) int64 {
						if i%ds != 0 || i/ds >= n*cnt {
							return -7 // gaps and the tail are untouched
						}
						e := i / ds
						return int64((e/cnt)*100000000 + me*100000 + e%cnt)
					})
				})
			})
		}
	}
}

func TestBackToBack(t *testing.T) {
	const rounds = 100
	for _, n := range []int{3, 4, 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			runSim(t, n, func(p *shmem.PE) error {
				w, me := p.TeamWorld(), p.MyPE()
				src, err := shmem.Malloc[int64](p, 8*n)
				if err != nil {
					return err
				}
				dst, err := shmem.Malloc[int64](p, 8*n*n)
				if err != nil {
					return err
				}
				fill := func(r int) {
					for i := range src.Local(p) {
						src.Local(p)[i] = int64(r*100000 + me*100 + i)
					}
				}
				for r := 0; r < rounds; r++ {
					fill(r)
					if err := shmem.Broadcast(w, dst.Slice(0, 8), src.Slice(0, 8), r%n); err != nil {
						return err
					}
					if err := check("b2b broadcast", me, dst.Local(p)[:8], func(i int) int64 { return int64(r*100000 + (r%n)*100 + i) }); err != nil {
						return err
					}
				}
				for r := 0; r < rounds; r++ {
					fill(r)
					if err := shmem.FCollect(w, dst.Slice(0, 8*n), src.Slice(0, 8)); err != nil {
						return err
					}
					if err := check("b2b fcollect", me, dst.Local(p)[:8*n], func(i int) int64 { return int64(r*100000 + (i/8)*100 + i%8) }); err != nil {
						return err
					}
				}
				for r := 0; r < rounds; r++ {
					fill(r)
					if err := shmem.Collect(w, dst, src.Slice(0, me)); err != nil {
						return err
					}
					k := 0
					for q := 0; q < n; q++ {
						for i := 0; i < q; i++ {
							if got, want := dst.Local(p)[k], int64(r*100000+q*100+i); got != want {
								return fmt.Errorf("b2b collect round %d: PE %d index %d = %d want %d", r, me, k, got, want)
							}
							k++
						}
					}
				}
				for r := 0; r < rounds; r++ {
					fill(r)
					if err := shmem.Alltoall(w, dst.Slice(0, 8*n), src); err != nil {
						return err
					}
					if err := check("b2b alltoall", me, dst.Local(p)[:8*n], func(i int) int64 { return int64(r*100000 + (i/8)*100 + me*8 + i%8) }); err != nil {
						return err
					}
				}
				for r := 0; r < rounds; r++ {
					fill(r)
					if err := shmem.Alltoalls(w, dst, src, 2, 1, 8); err != nil {
						return err
					}
					got := dst.Local(p)
					for q := 0; q < n; q++ {
						for k := 0; k < 8; k++ {
							if g, want := got[2*(q*8+k)], int64(r*100000+q*100+me*8+k); g != want {
								return fmt.Errorf("b2b alltoalls round %d: PE %d from %d elem %d = %d want %d", r, me, q, k, g, want)
							}
						}
					}
				}
				for r := 0; r < rounds; r++ {
					fill(r)
					if err := shmem.Reduce(w, shmem.OpSum, dst.Slice(0, 8), src.Slice(0, 8)); err != nil {
						return err
					}
					if err := check("b2b reduce", me, dst.Local(p)[:8], func(i int) int64 {
						return int64(n*(r*100000+i) + 100*n*(n-1)/2)
					}); err != nil {
						return err
					}
				}
				return nil
			})
		})
	}
}

func TestCollectiveMismatch(t *testing.T) {
	errorsOnEvery(t, 4, shmem.ErrInvalidArgument, func(p *shmem.PE) error {
		src, _ := shmem.Malloc[int32](p, 4)
		dst, _ := shmem.Malloc[int32](p, 16)
		return shmem.FCollect(p.TeamWorld(), dst, src.Slice(0, 1+p.MyPE()%2))
	})
	errorsOnEvery(t, 4, shmem.ErrInvalidArgument, func(p *shmem.PE) error {
		s, _ := shmem.Malloc[int32](p, 4)
		return shmem.Broadcast(p.TeamWorld(), s, s, p.MyPE()%2)
	})
	errorsOnEvery(t, 3, shmem.ErrInvalidArgument, func(p *shmem.PE) error {
		s, _ := shmem.Malloc[int32](p, 4)
		return shmem.Reduce(p.TeamWorld(), shmem.Op(1+p.MyPE()%2), s, s)
	})
	// One PE's own check fails (root out of range only there): all fail.
	errorsOnEvery(t, 3, shmem.ErrInvalidArgument, func(p *shmem.PE) error {
		s, _ := shmem.Malloc[int32](p, 4)
		root := 0
		if p.MyPE() == 2 {
			root = 9
		}
		return shmem.Broadcast(p.TeamWorld(), s, s, root)
	})
	errorsOnEvery(t, 2, shmem.ErrInvalidArgument, func(p *shmem.PE) error {
		s, _ := shmem.Malloc[float32](p, 4)
		return shmem.Reduce(p.TeamWorld(), shmem.OpXor, s, s)
	})
	errorsOnEvery(t, 3, shmem.ErrInvalidArgument, func(p *shmem.PE) error {
		s, _ := shmem.Malloc[int64](p, 12)
		return shmem.Alltoall(p.TeamWorld(), s.Slice(0, 6), s.Slice(3, 9))
	})
	// 6 elements over 4 PEs: a block of 1 would drop 2 elements silently.
	errorsOnEvery(t, 4, shmem.ErrInvalidArgument, func(p *shmem.PE) error {
		src, _ := shmem.Malloc[int64](p, 6)
		dst, _ := shmem.Malloc[int64](p, 8)
		return shmem.Alltoall(p.TeamWorld(), dst, src)
	})
	// After mismatches the team still works.
	runSim(t, 3, func(p *shmem.PE) error {
		s, _ := shmem.Malloc[int32](p, 4)
		if err := shmem.Broadcast(p.TeamWorld(), s, s, p.MyPE()); !errors.Is(err, shmem.ErrInvalidArgument) {
			return fmt.Errorf("mismatched roots: %v", err)
		}
		s.Local(p)[0] = int32(p.MyPE() + 40)
		if err := shmem.Broadcast(p.TeamWorld(), s.Slice(1, 2), s.Slice(0, 1), 2); err != nil {
			return err
		}
		if got := s.Local(p)[1]; got != 42 {
			return fmt.Errorf("broadcast after a mismatch: %d", got)
		}
		return nil
	})
}

// TestCollectivesOnSplitTeams runs each collective over a team with a
// negative stride, whose team numbers differ from world numbers.
func TestCollectivesOnSplitTeams(t *testing.T) {
	runSim(t, 7, func(p *shmem.PE) error {
		const n = 4
		src, _ := shmem.Malloc[int64](p, n*3)
		dst, _ := shmem.Malloc[int64](p, n*3)
		nt, err := p.TeamWorld().SplitStrided(6, -2, n) // world 6, 4, 2, 0
		if err != nil || nt == nil {
			return err
		}
		me := nt.MyPE()
		for i := range src.Local(p) {
			src.Local(p)[i] = int64(me*100 + i)
		}
		if err := shmem.FCollect(nt, dst, src.Slice(0, 3)); err != nil {
			return err
		}
		if err := check("split fcollect", me, dst.Local(p), func(i int) int64 { return int64((i/3)*100 + i%3) }); err != nil {
			return err
		}
		if err := shmem.Alltoall(nt, dst, src); err != nil {
			return err
		}
		if err := check("split alltoall", me, dst.Local(p), func(i int) int64 { return int64((i/3)*100 + me*3 + i%3) }); err != nil {
			return err
		}
		if err := shmem.Reduce(nt, shmem.OpMax, dst, src); err != nil {
			return err
		}
		if err := check("split max", me, dst.Local(p), func(i int) int64 { return int64(300 + i) }); err != nil {
			return err
		}
		return nt.Destroy()
	})
}

func TestCollectives64(t *testing.T) {
	if testing.Short() {
		t.Skip("64 PEs")
	}
	const n = 64
	runSim(t, n, func(p *shmem.PE) error {
		w, me := p.TeamWorld(), p.MyPE()
		src, _ := shmem.Malloc[int32](p, 2*n)
		dst, _ := shmem.Malloc[int32](p, 2*n*n)
		for i := range src.Local(p) {
			src.Local(p)[i] = int32(me*1000 + i)
		}
		if err := shmem.Broadcast(w, dst.Slice(0, 2), src.Slice(0, 2), 63); err != nil {
			return err
		}
		if err := check("64 broadcast", me, dst.Local(p)[:2], func(i int) int32 { return int32(63000 + i) }); err != nil {
			return err
		}
		if err := shmem.FCollect(w, dst.Slice(0, 2*n), src.Slice(0, 2)); err != nil {
			return err
		}
		if err := check("64 fcollect", me, dst.Local(p)[:2*n], func(i int) int32 { return int32((i/2)*1000 + i%2) }); err != nil {
			return err
		}
		if err := shmem.Collect(w, dst, src.Slice(0, me%3)); err != nil {
			return err
		}
		if err := shmem.Alltoall(w, dst.Slice(0, 2*n), src); err != nil {
			return err
		}
		if err := check("64 alltoall", me, dst.Local(p)[:2*n], func(i int) int32 { return int32((i/2)*1000 + me*2 + i%2) }); err != nil {
			return err
		}
		if err := shmem.Alltoalls(w, dst, src, 3, 2, 1); err != nil {
			return err
		}
		if err := shmem.Reduce(w, shmem.OpSum, dst.Slice(0, 2*n), src); err != nil {
			return err
		}
		if err := check("64 sum", me, dst.Local(p)[:2*n], func(i int) int32 { return int32(1000*n*(n-1)/2 + n*i) }); err != nil {
			return err
		}
		return w.Barrier()
	})
}

// TestCollectiveMismatchNamesThisCall: when two PEs' collectives differ,
// each error says how this call's arguments differed, even though the PE
// that found it first has already gone on to its next collective (it
// publishes that one's arguments). The message was sometimes empty
// ("passed different arguments: ") or named the peer's next call.
func TestCollectiveMismatchNamesThisCall(t *testing.T) {
	runSim(t, 2, func(p *shmem.PE) error {
		me := p.MyPE()
		w := p.TeamWorld()
		a, _ := shmem.Calloc[int64](p, 2)
		b, err := shmem.Calloc[int64](p, 2)
		if err != nil {
			return err
		}
		aDst, aSrc, bDst, bSrc := a.Slice(0, 1), a.Slice(1, 2), b.Slice(0, 1), b.Slice(1, 2)
		for round := range 20 {
			// Swapped: both calls differ in their destination, never in kind.
			var first, second error
			if me == 0 {
				first, second = shmem.Reduce(w, shmem.OpSum, aDst, aSrc), shmem.Reduce(w, shmem.OpSum, bDst, bSrc)
			} else {
				first, second = shmem.Reduce(w, shmem.OpSum, bDst, bSrc), shmem.Reduce(w, shmem.OpSum, aDst, aSrc)
			}
			for i, err := range []error{first, second} {
				if err := wantErr(err, shmem.ErrInvalidArgument, "Reduce", "destination offset: PE 0 passed", ", PE 1 passed"); err != nil {
					return fmt.Errorf("round %d, swapped Reduce %d: %w", round, i+1, err)
				}
			}
			// Then PE 0 broadcasts where PE 1 reduces again: only the
			// second call differs in kind.
			if me == 0 {
				first = shmem.Reduce(w, shmem.OpSum, aDst, aSrc)
			} else {
				first = shmem.Reduce(w, shmem.OpSum, bDst, bSrc)
			}
			if err := wantErr(first, shmem.ErrInvalidArgument, "Reduce", "destination offset: PE 0 passed"); err != nil {
				return fmt.Errorf("round %d, Reduce before the Broadcast: %w", round, err)
			}
			if me == 0 {
				second = shmem.Broadcast(w, aDst, aSrc, 0)
			} else {
				second = shmem.Reduce(w, shmem.OpSum, aDst, aSrc)
			}
			if err := wantErr(second, shmem.ErrInvalidArgument, "", "collective: PE 0 passed Broadcast, PE 1 passed Reduce"); err != nil {
				return fmt.Errorf("round %d, Broadcast against Reduce: %w", round, err)
			}
		}
		return nil
	})
}

// TestMismatchedElementTypesNamed: members passing different element types
// are told which, by name ("element type: PE 1 passed int32, PE 0 passed
// int64"), not by the codes the comparison uses.
func TestMismatchedElementTypesNamed(t *testing.T) {
	var mu sync.Mutex
	var msgs []string
	_ = sim.Run(2, func(p *shmem.PE) error {
		var err error
		if p.MyPE() == 1 {
			var s shmem.Sym[int32]
			if s, err = shmem.Calloc[int32](p, 2); err == nil {
				err = shmem.Reduce(p.TeamWorld(), shmem.OpSum, s.Slice(0, 1), s.Slice(1, 2))
			}
		} else {
			var s shmem.Sym[int64]
			if s, err = shmem.Calloc[int64](p, 1); err == nil {
				err = shmem.Reduce(p.TeamWorld(), shmem.OpSum, s.Slice(0, 1), s.Slice(0, 1))
			}
		}
		mu.Lock()
		msgs = append(msgs, fmt.Sprint(err))
		mu.Unlock()
		return errors.Join(err, p.Finalize())
	})
	for _, m := range msgs {
		if !strings.Contains(m, "element type") || !strings.Contains(m, "int32") || !strings.Contains(m, "int64") {
			t.Errorf("a member's error does not name both types: %s", m)
		}
	}
	if len(msgs) != 2 {
		t.Fatalf("%d members reported, want 2", len(msgs))
	}
}

// TestMismatchedOperatorNamed: members passing different reduction
// operators are told which by name ("operator: PEs 0-1 passed OpSum, PE 2
// passed OpMax"), not by the numbers the comparison uses, and different
// destinations by heap offsets in hex, as other errors give them.
func TestMismatchedOperatorNamed(t *testing.T) {
	err := sim.Run(3, func(p *shmem.PE) error {
		s, err := shmem.Calloc[int64](p, 4)
		if err != nil {
			return err
		}
		op := shmem.OpSum
		if p.MyPE() == 2 {
			op = shmem.OpMax
		}
		err = shmem.Reduce(p.TeamWorld(), op, s.Slice(0, 1), s.Slice(1, 2))
		if !errors.Is(err, shmem.ErrInvalidArgument) || !strings.Contains(err.Error(), "operator: PEs 0-1 passed OpSum, PE 2 passed OpMax") {
			return fmt.Errorf("mismatched operators: %v", err)
		}
		dst := s.Slice(2, 3)
		if p.MyPE() == 1 {
			dst = s.Slice(3, 4)
		}
		err = shmem.Reduce(p.TeamWorld(), shmem.OpSum, dst, s.Slice(1, 2))
		if !errors.Is(err, shmem.ErrInvalidArgument) || !strings.Contains(err.Error(), "destination offset: PEs 0, 2 passed 0x") {
			return fmt.Errorf("mismatched destinations: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCollectOverflowInElements: contributions that overflow Collect's
// destination are counted in elements, as the other collectives count,
// and the error names no peer (none failed).
func TestCollectOverflowInElements(t *testing.T) {
	err := sim.Run(3, func(p *shmem.PE) error {
		src, err := shmem.Calloc[int64](p, 3)
		if err != nil {
			return err
		}
		dst, err := shmem.Calloc[int64](p, 5)
		if err != nil {
			return err
		}
		err = shmem.Collect(p.TeamWorld(), dst, src.Slice(0, p.MyPE()+1)) // 1+2+3 = 6 elements
		if !errors.Is(err, shmem.ErrInvalidArgument) || !strings.Contains(err.Error(), "6 elements in all, exceed the destination's 5 elements") ||
			strings.Contains(err.Error(), "->") {
			return fmt.Errorf("PE %d: %v", p.MyPE(), err)
		}
		return p.Finalize()
	})
	if err != nil {
		t.Fatal(err)
	}
}
