package shmem_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/goshmem/shmem"
)

// atomicsOn checks every atomic of the contract on one word of T at PE 1,
// issued by PE 0, and the final values PE 1 sees.
func atomicsOn[T shmem.Integer](t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		w, err := shmem.Calloc[T](p, 2)
		if err != nil {
			return err
		}
		x := w.Slice(1, 2) // element 1: atomics address element 0 of a slice
		if p.MyPE() == 0 {
			steps := []struct {
				name string
				do   func() (T, error)
				old  T
			}{
				{"Set 12", func() (T, error) { return 0, shmem.AtomicSet(p, x, 12, 1) }, 0},
				{"Fetch", func() (T, error) { return shmem.AtomicFetch(p, x, 1) }, 12},
				{"Swap 40", func() (T, error) { return shmem.AtomicSwap(p, x, 40, 1) }, 12},
				{"CompareSwap miss", func() (T, error) { return shmem.AtomicCompareSwap(p, x, 39, 7, 1) }, 40},
				{"CompareSwap hit", func() (T, error) { return shmem.AtomicCompareSwap(p, x, 40, 0b1100, 1) }, 40},
				{"FetchInc", func() (T, error) { return shmem.AtomicFetchInc(p, x, 1) }, 0b1100},
				{"Inc", func() (T, error) { return 0, shmem.AtomicInc(p, x, 1) }, 0},
				{"FetchAdd 2", func() (T, error) { return shmem.AtomicFetchAdd(p, x, 2, 1) }, 0b1110},
				{"Add 1", func() (T, error) { return 0, shmem.AtomicAdd(p, x, 1, 1) }, 0},
				{"FetchAnd 0b1011", func() (T, error) { return shmem.AtomicFetchAnd(p, x, 0b1011, 1) }, 0b10001},
				{"And 0b11", func() (T, error) { return 0, shmem.AtomicAnd(p, x, 0b11, 1) }, 0},
				{"FetchOr 0b100", func() (T, error) { return shmem.AtomicFetchOr(p, x, 0b100, 1) }, 0b1},
				{"Or 0b1000", func() (T, error) { return 0, shmem.AtomicOr(p, x, 0b1000, 1) }, 0},
				{"FetchXor 0b1111", func() (T, error) { return shmem.AtomicFetchXor(p, x, 0b1111, 1) }, 0b1101},
				{"Xor 0b110000", func() (T, error) { return 0, shmem.AtomicXor(p, x, 0b110000, 1) }, 0},
				{"Fetch final", func() (T, error) { return shmem.AtomicFetch(p, x, 1) }, 0b110010},
			}
			for _, s := range steps {
				got, err := s.do()
				if err != nil {
					return fmt.Errorf("%s: %w", s.name, err)
				}
				// A non-fetching atomic may still be in flight when the
				// next (fetching) one runs: only Quiet completes it.
				if err := p.Quiet(); err != nil {
					return err
				}
				if err := want(p, fmt.Sprintf("%T %s returned", got, s.name), got, s.old); err != nil {
					return err
				}
			}
			// Add wraps.
			if err := shmem.AtomicSet(p, w, ^T(0), 1); err != nil {
				return err
			}
			p.Fence() // two non-fetching atomics to one word: unordered without it
			if err := shmem.AtomicInc(p, w, 1); err != nil {
				return err
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if p.MyPE() == 1 {
			return joinFirst(want(p, "final", w.Local(p)[1], T(0b110010)), want(p, "wrapped", w.Local(p)[0], T(0)))
		}
		return nil
	})
}

func TestAtomicsInt32(t *testing.T)  { atomicsOn[int32](t) }
func TestAtomicsUint32(t *testing.T) { atomicsOn[uint32](t) }
func TestAtomicsInt64(t *testing.T)  { atomicsOn[int64](t) }
func TestAtomicsUint64(t *testing.T) { atomicsOn[uint64](t) }
func TestAtomicsInt(t *testing.T)    { atomicsOn[int](t) }
func TestAtomicsUint(t *testing.T)   { atomicsOn[uint](t) }

func TestAtomicFloats(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		f32, _ := shmem.Calloc[float32](p, 1)
		f64, err := shmem.Calloc[float64](p, 1)
		if err != nil {
			return err
		}
		other := 1 - p.MyPE()
		if p.MyPE() == 0 {
			if err := joinFirst(shmem.AtomicSet(p, f32, float32(1.5), other), shmem.AtomicSet(p, f64, -2.25, other)); err != nil {
				return err
			}
			a, _ := shmem.AtomicSwap(p, f32, float32(3.75), other)
			b, _ := shmem.AtomicSwap(p, f64, 1e300, other)
			c, _ := shmem.AtomicFetch(p, f32, other)
			d, err := shmem.AtomicFetch(p, f64, other)
			if err != nil {
				return err
			}
			return joinFirst(want(p, "swap f32", a, float32(1.5)), want(p, "swap f64", b, -2.25),
				want(p, "fetch f32", c, float32(3.75)), want(p, "fetch f64", d, 1e300))
		}
		return nil
	})
}

// TestContention has every PE, from several goroutines each, fetch-inc and
// compare-swap one word on PE 0: the values returned must be exactly
// 0..N-1, each once.
func TestContention(t *testing.T) {
	for _, n := range []int{2, 7, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			const perPE, goroutines = 50, 3
			total := n * perPE * goroutines
			var mu sync.Mutex
			var incs, cass []int64
			run(t, n, func(p *shmem.PE) error {
				ctr, err := shmem.Calloc[int64](p, 2)
				if err != nil {
					return err
				}
				var wg sync.WaitGroup
				errc := make(chan error, 2*goroutines)
				for g := 0; g < goroutines; g++ {
					wg.Add(2)
					go func() { // fetch-inc
						defer wg.Done()
						mine := make([]int64, 0, perPE)
						for i := 0; i < perPE; i++ {
							v, err := shmem.AtomicFetchInc(p, ctr, 0)
							if err != nil {
								errc <- err
								return
							}
							mine = append(mine, v)
						}
						mu.Lock()
						incs = append(incs, mine...)
						mu.Unlock()
					}()
					go func() { // compare-swap increment: retry until it wins
						defer wg.Done()
						c := ctr.Slice(1, 2)
						mine := make([]int64, 0, perPE)
						for i := 0; i < perPE; i++ {
							cur, err := shmem.AtomicFetch(p, c, 0)
							for err == nil {
								var old int64
								old, err = shmem.AtomicCompareSwap(p, c, cur, cur+1, 0)
								if err == nil && old == cur {
									mine = append(mine, cur)
									break
								}
								cur = old
							}
							if err != nil {
								errc <- err
								return
							}
						}
						mu.Lock()
						cass = append(cass, mine...)
						mu.Unlock()
					}()
				}
				wg.Wait()
				close(errc)
				if err := <-errc; err != nil {
					return err
				}
				return p.BarrierAll()
			})
			for name, got := range map[string][]int64{"FetchInc": incs, "CompareSwap": cass} {
				slices.Sort(got)
				if len(got) != total {
					t.Fatalf("%s: %d values, want %d", name, len(got), total)
				}
				for i, v := range got {
					if v != int64(i) {
						t.Fatalf("%s: values are not a permutation of 0..%d: sorted[%d] = %d", name, total-1, i, v)
					}
				}
			}
		})
	}
}

// TestRemoteAndLocalAtomic mixes atomics on one word from its owner (local)
// and from every other PE (remote), 32- and 64-bit: no update is lost.
func TestRemoteAndLocalAtomic(t *testing.T) {
	const n, rounds = 4, 500
	run(t, n, func(p *shmem.PE) error {
		w64, _ := shmem.Calloc[uint64](p, 1)
		w32, err := shmem.Calloc[uint32](p, 1)
		if err != nil {
			return err
		}
		for i := 0; i < rounds; i++ {
			// Every PE, PE 0 included (a local atomic), adds to PE 0's words.
			if err := shmem.AtomicAdd(p, w64, uint64(p.MyPE()+1), 0); err != nil {
				return err
			}
			if _, err := shmem.AtomicFetchAdd(p, w32, 1, 0); err != nil {
				return err
			}
			if err := shmem.AtomicXor(p, w64, 1<<63, 0); err != nil {
				return err
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if p.MyPE() == 0 {
			// An even number of xors of the top bit cancel out.
			return joinFirst(want(p, "sum64", w64.Local(p)[0], uint64(rounds*n*(n+1)/2)),
				want(p, "sum32", w32.Local(p)[0], uint32(rounds*n)))
		}
		return nil
	})
}

// TestGoroutinesShareOnePE has several goroutines of each PE issue puts and
// atomics at once to disjoint and shared targets.
func TestGoroutinesShareOnePE(t *testing.T) {
	const n, g, per = 3, 4, 200
	run(t, n, func(p *shmem.PE) error {
		data, _ := shmem.Calloc[int64](p, n*g*per)
		ctr, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		var wg sync.WaitGroup
		errc := make(chan error, g)
		for k := 0; k < g; k++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < per; i++ {
					slot := (p.MyPE()*g+k)*per + i
					target := (p.MyPE() + 1 + i) % n
					if err := shmem.P(p, data.Slice(slot, slot+1), int64(slot+1), target); err != nil {
						errc <- err
						return
					}
					if err := shmem.AtomicInc(p, ctr, target); err != nil {
						errc <- err
						return
					}
				}
				errc <- p.Quiet()
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			if err != nil {
				return err
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		// Gather the counters: every PE got n*g*per/n increments.
		if err := want(p, "counter", ctr.Local(p)[0], int64(g*per)); err != nil {
			return err
		}
		for slot, v := range data.Local(p) {
			src := slot / (g * per)
			i := slot % per
			if (src+1+i)%n == p.MyPE() {
				if err := want(p, fmt.Sprintf("data[%d]", slot), v, int64(slot+1)); err != nil {
					return err
				}
			} else if v != 0 {
				return fmt.Errorf("PE %d: data[%d] = %d, want 0", p.MyPE(), slot, v)
			}
		}
		return nil
	})
}

// TestAtomicsEveryElement: a misaligned atomic cannot be built through the
// API (objects are 64-byte aligned and Slice moves by whole elements), so
// atomics on every element of 4- and 8-byte arrays succeed and touch only
// their element.
func TestAtomicsEveryElement(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		w32, _ := shmem.Calloc[uint32](p, 17)
		w64, err := shmem.Calloc[int64](p, 17)
		if err != nil {
			return err
		}
		for i := 0; i < 17; i++ {
			if _, err := shmem.AtomicFetchAdd(p, w32.Slice(i, 17), uint32(i+1), 1-p.MyPE()); err != nil {
				return err
			}
			if err := shmem.AtomicOr(p, w64.Slice(i, i+1), int64(i+1)<<32, 1-p.MyPE()); err != nil {
				return err
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		for i := 0; i < 17; i++ {
			if err := joinFirst(want(p, fmt.Sprint("w32 ", i), w32.Local(p)[i], uint32(i+1)),
				want(p, fmt.Sprint("w64 ", i), w64.Local(p)[i], int64(i+1)<<32)); err != nil {
				return err
			}
		}
		return nil
	})
}
