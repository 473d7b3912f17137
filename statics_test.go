package shmem_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/goshmem/shmem"
)

// staticsWorld starts n PEs by unique ID in this process, each with a
// statics region of its own (WithStatics, size bytes), runs body on each
// with its region, and finalizes them.
func staticsWorld(t *testing.T, n, size int, opts []shmem.Option, body func(p *shmem.PE, region []byte) error) {
	t.Helper()
	uid, err := shmem.GetUniqueID(opts...)
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for r := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			region := make([]byte, size)
			all := append([]shmem.Option{shmem.WithUniqueID(uid, r, n), shmem.WithHeapSize(4 << 20), shmem.WithStatics(region)}, opts...)
			p, err := shmem.Init(context.Background(), all...)
			if err != nil {
				errs[r] = err
				return
			}
			errs[r] = errors.Join(body(p, region), p.Finalize())
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// Over TCP every PE reaches every other's statics region, and its own:
// puts, gets, atomics, put-with-signal with either part in the region,
// and a lock whose word is there. The values land in the regions' bytes.
func TestStaticsOverTCP(t *testing.T) {
	const n = 3
	staticsWorld(t, n, 4096, []shmem.Option{shmem.WithNetworkOnly()}, func(p *shmem.PE, region []byte) error {
		me := p.MyPE()
		st, ok := p.Statics()
		if !ok || st.Len() != 4096 {
			return fmt.Errorf("Statics = %d bytes, %v", st.Len(), ok)
		}
		words := shmem.SymAs[int64](st)
		sig, err := shmem.Calloc[uint64](p, 1)
		if err != nil {
			return err
		}
		next := (me + 1) % n
		// A put into the next PE's word me, a put into its own word 8,
		// and a fetch-add on PE 0's word 9 by every PE.
		if err := shmem.P(p, words.Slice(me, me+1), int64(100+me), next); err != nil {
			return err
		}
		if err := shmem.P(p, words.Slice(8, 9), int64(200+me), me); err != nil {
			return err
		}
		if _, err := shmem.AtomicFetchAdd(p, words.Slice(9, 10), 1, 0); err != nil {
			return err
		}
		// Data in the region, signal in the heap; then data in the heap
		// (words 16.. of the region carry nothing) and signal in the region.
		if err := shmem.PutSignal(p, st.Slice(128, 136), []byte("abcdefgh"), sig, 1, shmem.SignalSet, next); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		prev := (me + n - 1) % n
		if got := int64(binary.LittleEndian.Uint64(region[8*prev:])); got != int64(100+prev) {
			return fmt.Errorf("PE %d: word %d of the region = %d, want %d", me, prev, got, 100+prev)
		}
		if got := int64(binary.LittleEndian.Uint64(region[64:])); got != int64(200+me) {
			return fmt.Errorf("PE %d: own put: word 8 = %d", me, got)
		}
		if string(region[128:136]) != "abcdefgh" || sig.Local(p)[0] != 1 {
			return fmt.Errorf("PE %d: put-signal into the region: %q, signal %d", me, region[128:136], sig.Local(p)[0])
		}
		if me == 0 {
			if got := binary.LittleEndian.Uint64(region[72:]); got != n {
				return fmt.Errorf("fetch-adds on PE 0's word 9 = %d, want %d", got, n)
			}
		}
		if got, err := shmem.G(p, words.Slice(me, me+1), next); err != nil || got != int64(100+me) {
			return fmt.Errorf("PE %d: G of its word at PE %d = %d, %v", me, next, got, err)
		}
		buf := make([]byte, 8)
		if err := shmem.Get(p, buf, st.Slice(8*me, 8*me+8), next); err != nil || int64(binary.LittleEndian.Uint64(buf)) != int64(100+me) {
			return fmt.Errorf("PE %d: Get of its word at PE %d = %v, %v", me, next, buf, err)
		}
		heapData, err := shmem.Calloc[byte](p, 8)
		if err != nil {
			return err
		}
		if err := shmem.PutSignal(p, heapData, []byte("12345678"), shmem.SymAs[uint64](st.Slice(256, 264)), 7, shmem.SignalAdd, next); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if string(heapData.Local(p)) != "12345678" || binary.LittleEndian.Uint64(region[256:]) != 7 {
			return fmt.Errorf("PE %d: put-signal with the signal in the region: %q, %d", me, heapData.Local(p), binary.LittleEndian.Uint64(region[256:]))
		}
		// A lock in the region guards a read-modify-write of PE 0's word
		// 10 by plain get and put: every increment stays.
		lock := words.Slice(20, 21)
		for range 20 {
			if err := shmem.SetLock(p, lock); err != nil {
				return err
			}
			v, err := shmem.G(p, words.Slice(10, 11), 0)
			if err == nil {
				err = shmem.P(p, words.Slice(10, 11), v+1, 0)
			}
			if err == nil {
				err = shmem.ClearLock(p, lock)
			}
			if err != nil {
				return err
			}
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		if me == 0 {
			if got := binary.LittleEndian.Uint64(region[80:]); got != 20*n {
				return fmt.Errorf("counter under the lock = %d, want %d", got, 20*n)
			}
		}
		return p.BarrierAll()
	})
}

// What the statics Sym refuses, each with ErrInvalidArgument: calls on the
// caller's own memory, collectives, a put-with-signal on this PE with one
// part in the heap and one in the region (two paths), ranges past the
// region; and a same-host peer, whose heap is mapped, has no statics path.
func TestStaticsRefusals(t *testing.T) {
	staticsWorld(t, 2, 1024, nil, func(p *shmem.PE, region []byte) error {
		me, other := p.MyPE(), 1-p.MyPE()
		st, ok := p.Statics()
		if !ok {
			return fmt.Errorf("no statics")
		}
		words := shmem.SymAs[uint64](st)
		sig, err := shmem.Calloc[uint64](p, 1)
		if err != nil {
			return err
		}
		if st.Local(p) != nil {
			return fmt.Errorf("Local of the statics Sym is not nil")
		}
		var refusals []error
		refusals = append(refusals,
			shmem.WaitUntil(p, words.Slice(0, 1), shmem.CmpEQ, 0),
			shmem.Broadcast(p.TeamWorld(), st.Slice(0, 8), st.Slice(8, 16), 0),
			shmem.PutSignal(p, st.Slice(0, 8), make([]byte, 8), sig, 1, shmem.SignalSet, me),
			shmem.PutSignal(p, sig, []uint64{1}, words.Slice(1, 2), 1, shmem.SignalSet, me),
			shmem.Put(p, st.Slice(1020, 1024), make([]byte, 8), other),
			shmem.P(p, st.Slice(0, 1), 1, other), // mapped: no statics path
		)
		for i, err := range refusals {
			if !errors.Is(err, shmem.ErrInvalidArgument) {
				return fmt.Errorf("refusal %d: %v, want ErrInvalidArgument", i, err)
			}
		}
		// A put to itself reaches its own region.
		if err := shmem.P(p, st.Slice(5, 6), 42, me); err != nil || region[5] != 42 {
			return fmt.Errorf("own put: %v, byte %d", err, region[5])
		}
		if !slices.Equal(region[:5], make([]byte, 5)) {
			return fmt.Errorf("own put wrote elsewhere")
		}
		return p.BarrierAll()
	})
}

// Without WithStatics a PE has no statics region.
func TestStaticsAbsent(t *testing.T) {
	run(t, 2, func(p *shmem.PE) error {
		if st, ok := p.Statics(); ok || st.Len() != 0 {
			return fmt.Errorf("Statics = %d bytes, %v without WithStatics", st.Len(), ok)
		}
		return nil
	})
}

// PEs whose statics regions differ in size (different executables, for
// the C API) are refused at Init, each naming the other.
func TestStaticsSizeMismatch(t *testing.T) {
	uid, err := shmem.GetUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for r := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := shmem.Init(context.Background(), shmem.WithUniqueID(uid, r, 2), shmem.WithHeapSize(4<<20),
				shmem.WithStatics(make([]byte, 1024*(r+1))))
			if err == nil {
				err = errors.Join(errors.New("Init succeeded"), p.Finalize())
			}
			errs[r] = err
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if !errors.Is(err, shmem.ErrInvalidArgument) || !strings.Contains(err.Error(), fmt.Sprintf("PE %d has %d bytes of statics", 1-r, 1024*(2-r))) {
			t.Errorf("PE %d: %v, want ErrInvalidArgument naming PE %d's statics", r, err, 1-r)
		}
	}
}
