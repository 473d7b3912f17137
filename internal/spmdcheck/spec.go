package spmdcheck

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/goshmem/shmem"
)

// Spec checks, with values, the OpenSHMEM 1.5 calls beyond the core:
// contexts (world and team ones, each completing its own puts), the
// non-blocking fetching atomics and the _vector waits; and goshmem's
// waits that a Go context ends (PE.WithContext). Every PE calls it.
func Spec(p *shmem.PE) error {
	for _, f := range []func(*shmem.PE) error{specContexts, specTeamCtx, specFetchNBI, specVectorWait, specContextWait} {
		if err := f(p); err != nil {
			return err
		}
	}
	return nil
}

// specContexts: two contexts and the default one each put to the next PE;
// each context's Quiet completes its own put, and a barrier shows all.
func specContexts(p *shmem.PE) error {
	me, n := p.MyPE(), p.NPEs()
	next := (me + 1) % n
	buf, err := shmem.Calloc[int64](p, 3*1024)
	if err != nil {
		return err
	}
	var ctxs [2]*shmem.PE
	for i := range ctxs {
		if ctxs[i], err = p.CreateCtx(shmem.CtxSerialized); err != nil {
			return err
		}
		if ctxs[i].Team() != p.TeamWorld() || ctxs[i].DefaultCtx() != p {
			return errors.New("a world context's Team or DefaultCtx is wrong")
		}
	}
	src := make([]int64, 1024)
	for k, c := range []*shmem.PE{p, ctxs[0], ctxs[1]} {
		for i := range src {
			src[i] = int64(me*1_000_000 + k*10_000 + i)
		}
		if err := shmem.PutNBI(c, buf.Slice(k*1024, (k+1)*1024), src, next); err != nil {
			return err
		}
		if err := c.Quiet(); err != nil {
			return err
		}
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	prev := (me - 1 + n) % n
	got := buf.Local(p)
	for k := 0; k < 3; k++ {
		for _, i := range []int{0, 511, 1023} {
			if want := int64(prev*1_000_000 + k*10_000 + i); got[k*1024+i] != want {
				return fmt.Errorf("context %d's put: element %d = %d, want %d", k, i, got[k*1024+i], want)
			}
		}
	}
	for _, c := range ctxs {
		if err := c.Destroy(); err != nil {
			return err
		}
	}
	return errors.Join(shmem.Free(p, buf), p.BarrierAll())
}

// specTeamCtx: a context on the team of even PEs addresses PEs by their
// number in that team.
func specTeamCtx(p *shmem.PE) error {
	me, n := p.MyPE(), p.NPEs()
	word, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	even, err := p.TeamWorld().SplitStrided(0, 2, (n+1)/2)
	if err != nil {
		return err
	}
	if even != nil {
		ctx, err := even.CreateCtx()
		if err != nil {
			return err
		}
		if ctx.Team() != even {
			return errors.New("a team context's Team is not its team")
		}
		// Team PE 0 is world PE 0: everyone adds its team number + 1.
		if err := shmem.AtomicAdd(ctx, word, int64(even.MyPE()+1), 0); err != nil {
			return err
		}
		if err := ctx.Destroy(); err != nil {
			return err
		}
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if me == 0 {
		m := int64((n + 1) / 2)
		if got := word.Local(p)[0]; got != m*(m+1)/2 {
			return fmt.Errorf("team context adds: %d, want %d", got, m*(m+1)/2)
		}
	}
	if even != nil {
		if err := even.Destroy(); err != nil {
			return err
		}
	}
	return errors.Join(shmem.Free(p, word), p.BarrierAll())
}

// specFetchNBI: fetch-add NBI from every PE on one word of PE 0, each
// into its own variable, read after Quiet.
func specFetchNBI(p *shmem.PE) error {
	me, n := p.MyPE(), p.NPEs()
	word, err := shmem.Calloc[uint64](p, 1)
	if err != nil {
		return err
	}
	const rounds = 20
	fetched := make([]uint64, rounds)
	ctx, err := p.CreateCtx()
	if err != nil {
		return err
	}
	for i := range fetched {
		if err := shmem.AtomicFetchAddNBI(ctx, &fetched[i], word, uint64(1)<<(me%8*8), 0); err != nil {
			return err
		}
	}
	if err := ctx.Quiet(); err != nil {
		return err
	}
	// This PE's byte of the word counts its own adds, so the values it
	// fetched show 0, 1, ... rounds-1 there.
	for i, v := range fetched {
		if got := int(v >> (me % 8 * 8) & 0xff); n <= 8 && got != i {
			return fmt.Errorf("fetch-add NBI %d fetched %#x: own count %d", i, v, got)
		}
	}
	var old uint64
	if err := shmem.AtomicCompareSwapNBI(ctx, &old, word, 0, 0, 0); err != nil {
		return err
	}
	if err := errors.Join(ctx.Quiet(), ctx.Destroy(), p.BarrierAll()); err != nil {
		return err
	}
	if me == 0 {
		var want uint64
		for r := 0; r < n; r++ {
			want += rounds << (r % 8 * 8)
		}
		if got := word.Local(p)[0]; got != want {
			return fmt.Errorf("after fetch-add NBI the word is %#x, want %#x", got, want)
		}
	}
	return errors.Join(shmem.Free(p, word), p.BarrierAll())
}

// specVectorWait: each PE sets element i of the next PE's ivars to
// vals[i]; the next PE waits for all of them with the _vector form.
func specVectorWait(p *shmem.PE) error {
	me, n := p.MyPE(), p.NPEs()
	const k = 16
	ivars, err := shmem.Calloc[int64](p, k)
	if err != nil {
		return err
	}
	vals := make([]int64, k)
	for i := range vals {
		vals[i] = int64(i*i + 1)
	}
	for i := k - 1; i >= 0; i-- {
		if err := shmem.P(p, ivars.Slice(i, i+1), vals[i], (me+1)%n); err != nil {
			return err
		}
	}
	if err := shmem.WaitUntilAllVector(p, ivars, nil, shmem.CmpEQ, vals); err != nil {
		return err
	}
	if !shmem.TestAllVector(p, ivars, nil, shmem.CmpEQ, vals) {
		return errors.New("TestAllVector false after WaitUntilAllVector")
	}
	return errors.Join(p.BarrierAll(), shmem.Free(p, ivars), p.BarrierAll())
}

// specContextWait: each PE waits, through a WithContext handle whose
// deadline passes first, for a word nobody sets, which must end with the
// deadline; then, through a handle whose context stays live, for the
// signal the previous PE sends, which must arrive.
func specContextWait(p *shmem.PE) error {
	me, n := p.MyPE(), p.NPEs()
	sig, err := shmem.Calloc[uint64](p, 2)
	if err != nil {
		return err
	}
	timed, stop := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer stop()
	_, err = shmem.SignalWaitUntil(p.WithContext(timed), sig.Slice(0, 1), shmem.CmpEQ, 1)
	if !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("PE %d: SignalWaitUntil past its context's deadline returned %v", me, err)
	}
	live, cancel := context.WithCancel(context.Background())
	defer cancel()
	if err := shmem.P(p, sig.Slice(1, 2), uint64(me+1), (me+1)%n); err != nil {
		return err
	}
	if err := p.Quiet(); err != nil {
		return err
	}
	from := uint64((me+n-1)%n + 1)
	if _, err := shmem.SignalWaitUntil(p.WithContext(live), sig.Slice(1, 2), shmem.CmpEQ, from); err != nil {
		return fmt.Errorf("PE %d: SignalWaitUntil with a live context: %w", me, err)
	}
	return errors.Join(p.BarrierAll(), shmem.Free(p, sig), p.BarrierAll())
}
