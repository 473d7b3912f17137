package shmem_test

import (
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
)

// Fence orders the delivery of every kind the spec's table lists (puts,
// NBI puts, AMOs, put-with-signal) to one PE on one context: PE 0 writes
// data of each kind, fences, and raises a flag of each kind; PE 1, once
// it sees the flag, sees the data. Under Lazy delivery a missing Fence
// fails this; the same through a context, with the context's Fence.
func TestSpecFenceOrdersEveryKind(t *testing.T) { bothDeliveries(t, 2, specFenceOrdersEveryKind) }

func specFenceOrdersEveryKind(p *shmem.PE) error {
	const rounds = 12
	data, err := shmem.Calloc[int64](p, 4)
	if err != nil {
		return err
	}
	flag, err := shmem.Calloc[uint64](p, 1)
	if err != nil {
		return err
	}
	ctx, err := p.CreateCtx(shmem.CtxSerialized)
	if err != nil {
		return err
	}
	if ctx.Team() != p.TeamWorld() || ctx.CtxOptions() != shmem.CtxSerialized || ctx.DefaultCtx() != p {
		return fmt.Errorf("context: team %v options %v", ctx.Team(), ctx.CtxOptions())
	}
	for r := 1; r <= rounds; r++ {
		on := p
		if r%2 == 0 {
			on = ctx
		}
		if p.MyPE() == 0 {
			v := int64(r)
			var err error
			switch r % 4 {
			case 0, 1:
				err = shmem.Put(on, data, []int64{v, v, v}, 1)
			case 2:
				err = shmem.PutNBI(on, data, []int64{v, v, v}, 1)
			case 3:
				err = shmem.PutNBI(on, data.Slice(0, 2), []int64{v, v}, 1)
				if err == nil {
					err = shmem.AtomicSet(on, data.Slice(2, 3), v, 1)
				}
			}
			if err == nil {
				err = shmem.AtomicAdd(on, data.Slice(3, 4), 1, 1)
			}
			if err != nil {
				return err
			}
			on.Fence()
			switch r % 3 {
			case 0:
				err = shmem.AtomicSet(on, flag, uint64(r), 1)
			case 1:
				err = shmem.PutSignal(on, data.Slice(0, 0), nil, flag, uint64(r), shmem.SignalSet, 1)
			case 2:
				err = shmem.PutSignalNBI(on, data.Slice(0, 0), nil, flag, 1, shmem.SignalAdd, 1)
			}
			if err != nil {
				return err
			}
		} else {
			if _, err := shmem.SignalWaitUntil(p, flag, shmem.CmpEQ, uint64(r)); err != nil {
				return err
			}
			d := data.Local(p)
			if d[0] != int64(r) || d[1] != int64(r) || d[2] != int64(r) || d[3] != int64(r) {
				return fmt.Errorf("round %d: data %v when the flag came", r, d)
			}
		}
		if err := ctx.Quiet(); err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
	}
	return ctx.Destroy()
}

// A context's Destroy completes its operations: data put through it, then
// the context destroyed, then a flag through the PE itself; the flag's
// reader sees the data. And a team context addresses PEs by team number.
func TestSpecCtxDestroyCompletes(t *testing.T) { bothDeliveries(t, 4, specCtxDestroyCompletes) }

func specCtxDestroyCompletes(p *shmem.PE) error {
	me := p.MyPE()
	odd, err := p.TeamWorld().SplitStrided(1, 2, 2) // world 1, 3
	if err != nil {
		return err
	}
	data, err := shmem.Calloc[int32](p, 8)
	if err != nil {
		return err
	}
	flag, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	if odd != nil {
		tc, err := odd.CreateCtx(shmem.CtxPrivate)
		if err != nil {
			return err
		}
		if tc.Team() != odd {
			return fmt.Errorf("team context's Team is not the team")
		}
		other := 1 - odd.MyPE() // team numbering
		if err := shmem.Put(tc, data.Slice(2, 6), []int32{1, 2, 3, int32(me)}, other); err != nil {
			return err
		}
		if err := tc.Destroy(); err != nil {
			return err
		}
		if err := shmem.AtomicSet(p, flag, int64(me), odd.TranslatePE(other, p.TeamWorld())); err != nil {
			return err
		}
		peer := 4 - me // world 1 <-> 3
		if err := shmem.WaitUntil(p, flag, shmem.CmpEQ, int64(peer)); err != nil {
			return err
		}
		if d := data.Local(p); d[2] != 1 || d[3] != 2 || d[4] != 3 || d[5] != int32(peer) {
			return fmt.Errorf("PE %d: data %v after the flag", me, d)
		}
		if err := odd.Destroy(); err != nil {
			return err
		}
	}
	return p.BarrierAll()
}

// shmem_team_destroy "destroys all shareable contexts created from the
// referenced team", and destroying a context quiets it: data put through
// a shareable team context is complete once the team's Destroy returns,
// so a flag raised after it, through the PE itself, finds it delivered.
func TestSpecTeamDestroyQuietsItsContexts(t *testing.T) {
	bothDeliveries(t, 2, specTeamDestroyQuietsItsContexts)
}

func specTeamDestroyQuietsItsContexts(p *shmem.PE) error {
	me := p.MyPE()
	data, err := shmem.Calloc[int64](p, 64)
	if err != nil {
		return err
	}
	flag, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	tm, err := p.TeamWorld().SplitStrided(0, 1, 2)
	if err != nil {
		return err
	}
	ctx, err := tm.CreateCtx() // shareable: no CtxPrivate
	if err != nil {
		return err
	}
	src := make([]int64, 64)
	for i := range src {
		src[i] = int64(me*1000 + i)
	}
	for i := 0; i < 64; i += 8 {
		if err := shmem.PutNBI(ctx, data.Slice(i, i+8), src[i:i+8], 1-me); err != nil {
			return err
		}
	}
	if err := tm.Destroy(); err != nil {
		return err
	}
	if err := shmem.AtomicSet(p, flag, 1, 1-me); err != nil {
		return err
	}
	if err := shmem.WaitUntil(p, flag, shmem.CmpEQ, 1); err != nil {
		return err
	}
	for i, v := range data.Local(p) {
		if v != int64((1-me)*1000+i) {
			return fmt.Errorf("PE %d: data[%d] = %d after the team (and its context) was destroyed", me, i, v)
		}
	}
	return p.BarrierAll()
}

// Fetching NBI atomics issued on a context are complete at that context's
// Quiet: every PE fetch-adds 64 times into each other PE's counter
// through a context, and after ctx.Quiet the fetched values are each old
// value exactly once.
func TestSpecCtxFetchNBI(t *testing.T) { bothDeliveries(t, 3, specCtxFetchNBI) }

func specCtxFetchNBI(p *shmem.PE) error {
	const k = 64
	me, n := p.MyPE(), p.NPEs()
	ctr, err := shmem.Calloc[uint64](p, 1)
	if err != nil {
		return err
	}
	ctx, err := p.CreateCtx(shmem.CtxPrivate)
	if err != nil {
		return err
	}
	got := make([]uint64, k*n)
	for i := 0; i < k; i++ {
		for pe := 0; pe < n; pe++ {
			if err := shmem.AtomicFetchAddNBI(ctx, &got[pe*k+i], ctr, 1<<(20*uint(me)), pe); err != nil {
				return err
			}
		}
	}
	if err := ctx.Quiet(); err != nil {
		return err
	}
	for pe := 0; pe < n; pe++ {
		// My own adds, seen in the low (or my) 20-bit field, count 0..k-1.
		seen := map[uint64]bool{}
		for i := 0; i < k; i++ {
			mine := got[pe*k+i] >> (20 * uint(me)) & (1<<20 - 1)
			if mine >= k || seen[mine] {
				return fmt.Errorf("PE %d: fetch %d from PE %d saw my count %d (seen %v)", me, i, pe, mine, seen[mine])
			}
			seen[mine] = true
		}
	}
	if err := ctx.Destroy(); err != nil {
		return err
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	want := uint64(0)
	for q := 0; q < n; q++ {
		want += k << (20 * uint(q))
	}
	if v := ctr.Local(p)[0]; v != want {
		return fmt.Errorf("PE %d: counter %#x, want %#x", me, v, want)
	}
	return p.BarrierAll()
}
