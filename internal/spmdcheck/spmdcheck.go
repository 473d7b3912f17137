// Package spmdcheck is the SPMD program the multi-process and multi-host
// tests run on every PE: one pass over the main calls, checking every
// value, so that each test of a start-up or transport path proves the
// whole API works across it.
package spmdcheck

import (
	"fmt"

	"github.com/goshmem/shmem"
)

// Run checks, with values, put, fetch-add from every PE on one word,
// FCollect, a sum Reduce and put-with-signal across the whole world,
// then the calls of Spec.
// Every PE of the world calls it; it returns the first wrong value.
func Run(p *shmem.PE) error {
	me, n := p.MyPE(), p.NPEs()
	ring, err := shmem.Calloc[int64](p, 2)
	if err != nil {
		return err
	}
	counter, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	if err := shmem.Put(p, ring, []int64{int64(me), int64(me * me)}, (me+1)%n); err != nil {
		return err
	}
	// Fetch-add from every PE on one word of PE n-1: each PE's fetched
	// values rise, and the word ends at the sum.
	const adds = 50
	last := int64(-1)
	for i := 0; i < adds; i++ {
		v, err := shmem.AtomicFetchAdd(p, counter, 1, n-1)
		if err != nil {
			return err
		}
		if v <= last || v >= adds*int64(n) {
			return fmt.Errorf("fetch-add %d returned %d after %d", i, v, last)
		}
		last = v
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	prev := (me - 1 + n) % n
	if got := ring.Local(p); got[0] != int64(prev) || got[1] != int64(prev*prev) {
		return fmt.Errorf("ring put: PE %d holds %v, want [%d %d]", me, got, prev, prev*prev)
	}
	if v, err := shmem.G(p, counter, n-1); err != nil || v != adds*int64(n) {
		return fmt.Errorf("counter at PE %d = %d (%v), want %d", n-1, v, err, adds*n)
	}
	src, err := shmem.Malloc[int32](p, 2)
	if err != nil {
		return err
	}
	dst, err := shmem.Malloc[int32](p, 2*n)
	if err != nil {
		return err
	}
	copy(src.Local(p), []int32{int32(me), int32(-me)})
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if err := shmem.FCollect(p.TeamWorld(), dst, src); err != nil {
		return err
	}
	for i, v := range dst.Local(p) {
		want := int32(i / 2)
		if i%2 == 1 {
			want = -want
		}
		if v != want {
			return fmt.Errorf("fcollect[%d] = %d, want %d", i, v, want)
		}
	}
	sum, err := shmem.Malloc[int64](p, 1)
	if err != nil {
		return err
	}
	one, err := shmem.Malloc[int64](p, 1)
	if err != nil {
		return err
	}
	one.Local(p)[0] = int64(me + 1)
	if err := shmem.Reduce(p.TeamWorld(), shmem.OpSum, sum, one); err != nil {
		return err
	}
	if got, want := sum.Local(p)[0], int64(n*(n+1)/2); got != want {
		return fmt.Errorf("sum reduce = %d, want %d", got, want)
	}
	sig, err := shmem.Calloc[uint64](p, 1)
	if err != nil {
		return err
	}
	data, err := shmem.Calloc[int64](p, 4096)
	if err != nil {
		return err
	}
	payload := make([]int64, 4096)
	for i := range payload {
		payload[i] = int64(me*100000 + i)
	}
	if err := shmem.PutSignal(p, data, payload, sig, 1, shmem.SignalSet, (me+1)%n); err != nil {
		return err
	}
	if _, err := shmem.SignalWaitUntil(p, sig, shmem.CmpEQ, 1); err != nil {
		return err
	}
	if got := data.Local(p); got[0] != int64(prev*100000) || got[4095] != int64(prev*100000+4095) {
		return fmt.Errorf("put-signal data [%d..%d], want from PE %d", got[0], got[4095], prev)
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	return Spec(p)
}
