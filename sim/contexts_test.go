package sim_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

var errCtxStale = errors.New("flag seen before the context's data")

// ctxPutThenFlag has PE 0 put data on PE 1 through a context, then call
// sep(p, ctx), then raise the flag through flagOn(p, ctx); PE 1 waits for
// the flag and fails with errCtxStale when the data is not all there.
func ctxPutThenFlag(sep func(p, ctx *shmem.PE) error, flagOn func(p, ctx *shmem.PE) *shmem.PE) func(p *shmem.PE) error {
	return func(p *shmem.PE) error {
		data, _ := shmem.Calloc[int64](p, 4)
		flag, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 1 {
			if err := shmem.WaitUntil(p, flag, shmem.CmpEQ, 1); err != nil {
				return err
			}
			if got := data.Local(p); got[3] != 4 {
				return fmt.Errorf("%w: %v", errCtxStale, got)
			}
			return nil
		}
		ctx, err := p.CreateCtx()
		if err != nil {
			return err
		}
		if err := shmem.Put(ctx, data, []int64{1, 2, 3, 4}, 1); err != nil {
			return err
		}
		if err := sep(p, ctx); err != nil {
			return err
		}
		if err := shmem.P(flagOn(p, ctx), flag, 1, 1); err != nil {
			return err
		}
		return ctx.Destroy()
	}
}

func onPE(p, _ *shmem.PE) *shmem.PE    { return p }
func onCtx(_, ctx *shmem.PE) *shmem.PE { return ctx }

// TestLazyContextsCompleteApart: in Lazy mode a context's writes are
// completed by its own Quiet and ordered by its own Fence, as over TCP,
// where each context has connections of its own: a Quiet or Fence on the
// PE after a put on a context leaves the put in flight, and the flag
// beats the data in some seeds, where a Quiet on the context (or a Fence
// on it, with the flag on it too) never lets it.
func TestLazyContextsCompleteApart(t *testing.T) {
	pQuiet := func(p, _ *shmem.PE) error { return p.Quiet() }
	pFence := func(p, _ *shmem.PE) error { p.Fence(); return nil }
	ctxQuiet := func(_, ctx *shmem.PE) error { return ctx.Quiet() }
	ctxFence := func(_, ctx *shmem.PE) error { ctx.Fence(); return nil }
	for _, c := range []struct {
		name  string
		body  func(p *shmem.PE) error
		wrong bool
	}{
		{"Quiet on the PE", ctxPutThenFlag(pQuiet, onPE), true},
		{"Fence on the PE", ctxPutThenFlag(pFence, onCtx), true},
		{"Quiet on the context", ctxPutThenFlag(ctxQuiet, onPE), false},
		{"Fence on the context", ctxPutThenFlag(ctxFence, onCtx), false},
	} {
		stale := 0
		for s := int64(1); s <= seeds; s++ {
			err := sim.Run(2, c.body, lazy(s)...)
			switch {
			case errors.Is(err, errCtxStale):
				stale++
			case err != nil:
				t.Fatalf("%s, seed %d: %v", c.name, s, err)
			}
		}
		if c.wrong && stale == 0 {
			t.Errorf("%s: the flag never beat the context's data over %d seeds", c.name, seeds)
		}
		if !c.wrong && stale > 0 {
			t.Errorf("%s: the flag beat the context's data in %d seeds of %d", c.name, stale, seeds)
		}
	}
}
