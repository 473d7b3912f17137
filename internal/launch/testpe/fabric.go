package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"

	"github.com/goshmem/shmem"
	lt "github.com/goshmem/shmem/internal/launch/launchtest"
	"github.com/goshmem/shmem/internal/spmdcheck"
)

// fabricChecks runs, on a world whose network paths are the fabric
// provider's, what spmdcheck does not: a PE asleep in WaitUntil woken by a
// fabric put, put-quiet-flag and put-fence-flag ordering, gets, atomics
// with values, a broadcast; then spmdcheck itself.
func fabricChecks(p *shmem.PE) error {
	me, n := p.MyPE(), p.NPEs()
	next, prev := (me+1)%n, (me-1+n)%n
	ready, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	word, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	// Wake-up: each PE announces on prev's ready word that it waits, then
	// sleeps on its own word; prev waits for the announcement (itself a
	// remote atomic into a waiting PE) and only then puts the value.
	if err := shmem.AtomicSet(p, ready, 1, prev); err != nil {
		return err
	}
	if err := shmem.WaitUntil(p, ready, shmem.CmpEQ, 1); err != nil {
		return err
	}
	if err := shmem.P(p, word, int64(1000+me), next); err != nil {
		return err
	}
	if err := shmem.WaitUntil(p, word, shmem.CmpNE, 0); err != nil {
		return err
	}
	if got := word.Local(p)[0]; got != int64(1000+prev) {
		return fmt.Errorf("woken by a fabric put: word %d, want %d", got, 1000+prev)
	}
	// Ordering: 64 KiB of data (the pinned route) and a small put, then
	// Quiet, then the flag; after a Fence, a second round. A PE that sees
	// a flag must see the data that preceded it.
	data, err := shmem.Calloc[int64](p, 8192)
	if err != nil {
		return err
	}
	flag, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	for round := int64(1); round <= 2; round++ {
		buf := make([]int64, 8192)
		for i := range buf {
			buf[i] = round*1_000_000 + int64(me*10_000+i)
		}
		if err := shmem.Put(p, data, buf, next); err != nil {
			return err
		}
		if round == 1 {
			err = p.Quiet()
		} else {
			p.Fence()
		}
		if err != nil {
			return err
		}
		if err := shmem.P(p, flag, round, next); err != nil {
			return err
		}
		if err := shmem.WaitUntil(p, flag, shmem.CmpEQ, round); err != nil {
			return err
		}
		got := data.Local(p)
		if w0, wl := round*1_000_000+int64(prev*10_000), round*1_000_000+int64(prev*10_000+8191); got[0] != w0 || got[8191] != wl {
			return fmt.Errorf("round %d: flag seen with data [%d..%d], want [%d..%d]", round, got[0], got[8191], w0, wl)
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
	}
	// Gets and atomics with values, on the next PE's data and word.
	g := make([]int64, 3)
	if err := shmem.Get(p, g, data.Slice(0, 3), next); err != nil {
		return err
	}
	if want := 2_000_000 + int64(me*10_000); g[0] != want || g[2] != want+2 {
		return fmt.Errorf("Get from PE %d: %v, want from %d", next, g, want)
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if old, err := shmem.AtomicCompareSwap(p, word, int64(1000+me), int64(7), next); err != nil || old != int64(1000+me) {
		return fmt.Errorf("compare-swap on PE %d: old %d (%v), want %d", next, old, err, 1000+me)
	}
	if old, err := shmem.AtomicFetchAdd(p, word, 5, next); err != nil || old != 7 {
		return fmt.Errorf("fetch-add on PE %d: old %d (%v), want 7", next, old, err)
	}
	if old, err := shmem.AtomicSwap(p, word, 99, next); err != nil || old != 12 {
		return fmt.Errorf("swap on PE %d: old %d (%v), want 12", next, old, err)
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if got := word.Local(p)[0]; got != 99 {
		return fmt.Errorf("word after the atomics: %d, want 99", got)
	}
	src, err := shmem.Calloc[int32](p, 4)
	if err != nil {
		return err
	}
	dst, err := shmem.Calloc[int32](p, 4)
	if err != nil {
		return err
	}
	if me == n-1 {
		copy(src.Local(p), []int32{4, 3, 2, 1})
	}
	if err := shmem.Broadcast(p.TeamWorld(), dst, src, n-1); err != nil {
		return err
	}
	if got := dst.Local(p); got[0] != 4 || got[3] != 1 {
		return fmt.Errorf("broadcast from PE %d: %v", n-1, got)
	}
	return spmdcheck.Run(p)
}

// fabricDie: PE who exits once everyone is up; the others put to it
// and Quiet until that fails, which must be ErrPEFailed (exit code 3).
func fabricDie(p *shmem.PE) error {
	w, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	last := who(p)
	if p.MyPE() == last {
		os.Exit(lt.DieStatus)
	}
	for i := int64(1); ; i++ {
		if err := shmem.P(p, w, i, last); err != nil {
			return err
		}
		if err := p.Quiet(); err != nil {
			return err
		}
	}
}

// fabricLeft reports goroutines of the fabric provider that outlived
// Finalize (its progress loop, its remote-write watcher).
func fabricLeft() error {
	buf := make([]byte, 1<<20)
	all := string(buf[:runtime.Stack(buf, true)])
	for _, g := range strings.Split(all, "\n\n") {
		if strings.Contains(g, "/transport/rdma/fabric.") {
			return fmt.Errorf("a fabric goroutine outlived Finalize:\n%s", g)
		}
	}
	return nil
}
