package failcheck

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/goshmem/shmem"
)

// rmaTowardFinalizing: PE 2 returns to its Finalize once every PE has
// its words; the others learn from their BarrierAll, which fails naming
// PE 2's Finalize, that it is there, and then put, get and add
// atomically on its heap while it waits for them. Finalize is collective
// (it ends when every PE has called it), so PE 2's heap is still there:
// every value must land and read back, and every Finalize return nil.
func rmaTowardFinalizing(p *shmem.PE) error {
	const fin = 2
	n := p.NPEs()
	words, err := shmem.Calloc[int64](p, 4*n+1)
	if err != nil {
		return err
	}
	me := p.MyPE()
	if me == fin {
		return nil
	}
	err = p.BarrierAll()
	if !errors.Is(err, shmem.ErrPEFailed) || !strings.Contains(err.Error(), "PE 2 called Finalize") {
		return fmt.Errorf("BarrierAll returned %v, want ErrPEFailed saying PE 2 called Finalize", err)
	}
	mine := words.Slice(4*me, 4*me+4)
	want := []int64{int64(10*me + 1), int64(10*me + 2), int64(10*me + 3), int64(10*me + 4)}
	if err := shmem.Put(p, mine, want, fin); err != nil {
		return err
	}
	if err := p.Quiet(); err != nil {
		return err
	}
	got := make([]int64, 4)
	if err := shmem.Get(p, got, mine, fin); err != nil {
		return err
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("Get from the finalizing PE 2 read %v after putting %v", got, want)
	}
	count := words.Slice(4*n, 4*n+1)
	old, err := shmem.AtomicFetchAdd(p, count, 1, fin)
	if err != nil {
		return err
	}
	if old < 0 || old >= int64(n-1) {
		return fmt.Errorf("AtomicFetchAdd on the finalizing PE 2 fetched %d, want 0-%d", old, n-2)
	}
	// Every PE but PE 2 adds 1: the count ends at n-1.
	for {
		v, err := shmem.AtomicFetch(p, count, fin)
		if err != nil {
			return err
		}
		if v == int64(n-1) {
			return nil
		}
		if v < 1 || v > int64(n-1) {
			return fmt.Errorf("AtomicFetch on the finalizing PE 2 read %d, want 1-%d", v, n-1)
		}
	}
}
