package pe

import (
	"runtime"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// spinChecks is how often a wait re-checks its condition before it sleeps
// on the bell. Short, because the PE it waits for may need this CPU: with
// more PEs than cores a long spin starves the writer.
const spinChecks = 64

// wakeEvery bounds one sleep on the bell. Rings wake a waiter at once;
// this only limits how late a missed ring (there should be none) is noticed.
const wakeEvery = 10 * time.Millisecond

// WaitLocal blocks until cond holds. cond reads this PE's heap; writers
// ring the bell after changing it. It fails when this PE is finalized, the
// world ended, or any PE has failed (the value it waits for may never come).
func (p *PE) WaitLocal(op string, cond func() bool) error {
	for i := 0; i < spinChecks; i++ {
		if cond() {
			return nil
		}
		if i >= 8 {
			runtime.Gosched()
		}
	}
	b := p.s.bell
	for {
		if err := p.waitable(op); err != nil {
			return err
		}
		armed := b.Arm()
		if cond() {
			b.Disarm()
			return nil
		}
		b.Wait(armed, wakeEvery)
		b.Disarm()
		if cond() {
			return nil
		}
	}
}

func (p *PE) waitable(op string) error {
	if err := p.usable(); err != nil {
		return p.annotate(err, op, errs.NoPE)
	}
	if p.s.nFailed.Load() != 0 {
		for r := range p.s.failed {
			if why := p.s.failed[r].Load(); why != nil {
				return errs.New(op, p.s.cfg.Rank, r, errs.ErrPEFailed, "%s", *why)
			}
		}
	}
	return nil
}
