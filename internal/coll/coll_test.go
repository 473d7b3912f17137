package coll

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/team"
	"github.com/goshmem/shmem/transport"
)

// TestSyncBroadcastReduce: on the fake network, Sync, Broadcast and Reduce
// over raw offsets give every member the expected bytes, and each call is
// numbered among the team's operations.
func TestSyncBroadcastReduce(t *testing.T) {
	const n = 5
	w := newFakeWorld(t, n)
	teams := w.worlds(t)
	src, dst := w.dataOff(), w.dataOff()+4096
	for r := 0; r < n; r++ {
		for i := 0; i < 8; i++ {
			binary.LittleEndian.PutUint64(w.nw.Heap(r)[src+uint64(8*i):], uint64(100*r+i))
		}
	}
	sum := func(d, s []byte) {
		for i := 0; i+8 <= len(d); i += 8 {
			binary.LittleEndian.PutUint64(d[i:], binary.LittleEndian.Uint64(d[i:])+binary.LittleEndian.Uint64(s[i:]))
		}
	}
	errsOf := w.each(func(r int) error {
		tm := teams[r]
		for i := 0; i < 3; i++ {
			if err := tm.Sync(); err != nil {
				return err
			}
		}
		a := Args{Kind: KindBroadcast, Type: 1, Elem: 8, Count: 8, Root: 2, DstOff: dst, DstLen: 8}
		if err := tm.Broadcast(a, dst, src, 64); err != nil {
			return err
		}
		if !bytes.Equal(w.nw.Heap(r)[dst:dst+64], w.nw.Heap(2)[src:src+64]) {
			return fmt.Errorf("PE %d: broadcast gave %v", r, w.nw.Heap(r)[dst:dst+64])
		}
		a = Args{Kind: KindReduce, Type: 1, Elem: 8, Count: 8, Op: 1, DstOff: dst, DstLen: 8}
		if err := tm.Reduce(a, dst, src, 64, kernelFunc(sum)); err != nil {
			return err
		}
		for i := 0; i < 8; i++ {
			want := uint64(100*(0+1+2+3+4) + n*i)
			if got := binary.LittleEndian.Uint64(w.nw.Heap(r)[dst+uint64(8*i):]); got != want {
				return fmt.Errorf("PE %d: sum[%d] = %d, want %d", r, i, got, want)
			}
		}
		if ops := tm.Ops(); ops != 5 {
			return fmt.Errorf("PE %d: %d operations numbered, want 5", r, ops)
		}
		return nil
	})
	if err := errors.Join(errsOf...); err != nil {
		t.Fatal(err)
	}
}

// TestMismatchedArgsFailEveryMember: members that pass different roots
// fail on every member, before any data moves.
func TestMismatchedArgsFailEveryMember(t *testing.T) {
	const n = 4
	w := newFakeWorld(t, n)
	teams := w.worlds(t)
	src, dst := w.dataOff(), w.dataOff()+4096
	errsOf := w.each(func(r int) error {
		a := Args{Kind: KindBroadcast, Type: 1, Elem: 8, Count: 1, Root: r % 2, DstOff: dst, DstLen: 1}
		return teams[r].Broadcast(a, dst, src, 8)
	})
	for r, err := range errsOf {
		if !errors.Is(err, errs.ErrInvalidArgument) {
			t.Errorf("PE %d: %v, want ErrInvalidArgument", r, err)
		}
	}
}

// TestSplitAndDestroy: a strided split gives its members a team with the
// right membership on a slot free everywhere, the others nil; Destroy
// returns the slot.
func TestSplitAndDestroy(t *testing.T) {
	const n = 5
	w := newFakeWorld(t, n)
	teams := w.worlds(t)
	errsOf := w.each(func(r int) error {
		nt, err := teams[r].SplitStrided(1, 2, 2)
		if err != nil {
			return err
		}
		if r != 1 && r != 3 {
			if nt != nil {
				return fmt.Errorf("PE %d outside the split got a team", r)
			}
			return nil
		}
		if !slices.Equal(nt.Members(), []int{1, 3}) || nt.MyPE() != r/2 {
			return fmt.Errorf("PE %d: members %v, me %d", r, nt.Members(), nt.MyPE())
		}
		inUse := w.rts[r].pool.InUse()
		if err := nt.Barrier(); err != nil {
			return err
		}
		if err := nt.Destroy(); err != nil {
			return err
		}
		if got := w.rts[r].pool.InUse(); got != inUse-1 {
			return fmt.Errorf("PE %d: %d slots in use after Destroy, want %d", r, got, inUse-1)
		}
		if err := nt.Sync(); !errors.Is(err, errs.ErrInvalidArgument) {
			return fmt.Errorf("PE %d: Sync on a destroyed team: %v", r, err)
		}
		return nil
	})
	if err := errors.Join(errsOf...); err != nil {
		t.Fatal(err)
	}
}

// TestSyncEndsWhenAMemberFails: a member that never arrives and then
// fails ends the others' Sync with ErrPEFailed instead of a hang, and a
// split agreement that includes it fails alike.
func TestSyncEndsWhenAMemberFails(t *testing.T) {
	const n, dead = 4, 3
	w := newFakeWorld(t, n)
	teams := w.worlds(t)
	w.fail(dead)
	for _, op := range []struct {
		name string
		f    func(tm *Team) error
	}{
		{"Sync", (*Team).Sync},
		{"SplitStrided", func(tm *Team) error { _, err := tm.SplitStrided(0, 1, n); return err }},
	} {
		errsOf := w.each(func(r int) error { return op.f(teams[r]) }, dead)
		for r, err := range errsOf {
			if r != dead && !errors.Is(err, errs.ErrPEFailed) {
				t.Errorf("%s on PE %d: %v, want ErrPEFailed", op.name, r, err)
			}
		}
	}
}

// TestNumberingRecordsKinds: the team numbers the PE's own operations on
// it (allocation, Finalize) among its collectives.
func TestNumberingRecordsKinds(t *testing.T) {
	w := newFakeWorld(t, 1)
	tm := w.worlds(t)[0]
	for _, k := range []team.Kind{team.KindAlloc, team.KindFinalize} {
		if err := tm.Number(k.String(), k); err != nil {
			t.Fatal(err)
		}
	}
	if err := tm.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := tm.Ops(); got != 3 {
		t.Errorf("%d operations, want 3", got)
	}
}

// kernelFunc is a function used as a Kernel.
type kernelFunc func(dst, src []byte)

func (f kernelFunc) Combine(dst, src []byte) { f(dst, src) }

// cutPath is a path whose every operation fails as a network path's does
// when its peer's connection is lost: under the transport's own operation
// name (PutSignal, Atomic, ...), as the runtime's settled paths return it.
type cutPath struct {
	transport.Path
	me, peer int
}

func (c cutPath) cut(op string) error {
	return errs.New(op, c.me, c.peer, errs.ErrPEFailed, "connection to PE %d lost", c.peer)
}
func (c cutPath) Put(uint64, []byte) error    { return c.cut("Put") }
func (c cutPath) Get([]byte, uint64) error    { return c.cut("Get") }
func (c cutPath) GetNBI([]byte, uint64) error { return c.cut("GetNBI") }
func (c cutPath) Ptr(uint64, int) []byte      { return nil }
func (c cutPath) PutSignal(uint64, []byte, uint64, uint64, transport.SignalOp) error {
	return c.cut("PutSignal")
}
func (c cutPath) Atomic(transport.AtomicOp, int, uint64, uint64, uint64) (uint64, error) {
	return 0, c.cut("Atomic")
}
func (c cutPath) AtomicPost(transport.AtomicOp, int, uint64, uint64) error {
	return c.cut("AtomicPost")
}

// TestCollectiveErrorsNameTheCall: a collective whose data path to a peer
// fails reports the call the user made, the failed peer, and the inner
// step after them ("shmem: Reduce (PE 0 -> PE 1): in PutSignal: ..."),
// not the step alone ("shmem: PutSignal (PE 0 -> PE 1): ...", which over
// TCP began 4 of 16 Reduce errors).
func TestCollectiveErrorsNameTheCall(t *testing.T) {
	sum := kernelFunc(func(d, s []byte) {})
	for _, c := range []struct {
		op  string
		run func(tm *Team, src, dst uint64) error
	}{
		{"Reduce", func(tm *Team, src, dst uint64) error {
			return tm.Reduce(Args{Kind: KindReduce, Type: 1, Elem: 8, Count: 8, Op: 1, DstOff: dst, DstLen: 8}, dst, src, 64, sum)
		}},
		{"Broadcast", func(tm *Team, src, dst uint64) error {
			return tm.Broadcast(Args{Kind: KindBroadcast, Type: 1, Elem: 8, Count: 8, Root: 0, DstOff: dst, DstLen: 8}, dst, src, 64)
		}},
		{"FCollect", func(tm *Team, src, dst uint64) error {
			return tm.FCollect(Args{Kind: KindFCollect, Type: 1, Elem: 8, Count: 8, DstOff: dst, DstLen: 16}, dst, src, 64)
		}},
		{"Collect", func(tm *Team, src, dst uint64) error {
			return tm.Collect(Args{Kind: KindCollect, Type: 1, Elem: 8, DstOff: dst, DstLen: 16}, dst, 128, src, 64)
		}},
		{"Alltoall", func(tm *Team, src, dst uint64) error {
			return tm.Alltoall(Args{Kind: KindAlltoall, Type: 1, Elem: 8, Count: 8, DstOff: dst, DstLen: 16}, dst, src, 64)
		}},
		// The split's agreement checks its peers' operation words with
		// an Atomic on the path.
		{"SplitStrided", func(tm *Team, src, dst uint64) error {
			_, err := tm.SplitStrided(0, 1, 2)
			return err
		}},
	} {
		t.Run(c.op, func(t *testing.T) {
			w := newFakeWorld(t, 2)
			w.rts[0].paths[1] = cutPath{Path: w.rts[0].paths[1], me: 0, peer: 1}
			w.rts[0].checkAgree = true
			teams := w.worlds(t)
			src, dst := w.dataOff(), w.dataOff()+4096
			errsOf := w.each(func(r int) error {
				err := c.run(teams[r], src, dst)
				if r == 0 {
					w.fail(0) // ends PE 1's wait for PE 0
				}
				return err
			})
			var e *errs.Error
			if !errors.As(errsOf[0], &e) || e.Op != c.op || e.Target != 1 || !errors.Is(errsOf[0], errs.ErrPEFailed) ||
				!strings.HasPrefix(errsOf[0].Error(), "shmem: "+c.op+" (PE 0 -> PE 1): in ") {
				t.Fatalf("PE 0: %v, want ErrPEFailed of %s naming PE 1, the inner step after it", errsOf[0], c.op)
			}
		})
	}
}
