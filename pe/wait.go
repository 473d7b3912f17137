package pe

import (
	"runtime"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// wakeEvery bounds one sleep on the bell. Rings wake a waiter at once;
// this only limits how late a missed ring (there should be none) is noticed.
const wakeEvery = 10 * time.Millisecond

// WaitLocal blocks until cond holds. cond reads this PE's heap; writers
// ring the bell after changing it. It fails when this PE is finalized, the
// world ended, or any PE has failed (the value it waits for may never come).
func (p *PE) WaitLocal(op string, cond func() bool) error {
	b := p.s.bell
	for {
		if poll(cond, p.s.cfg.Spin) {
			return nil
		}
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
	}
}

// poll checks cond until it holds or spinFor passes (a few checks when
// spinFor is 0).
func poll(cond func() bool, spinFor time.Duration) bool {
	var start time.Time
	for i := 0; ; i++ {
		if cond() {
			return true
		}
		switch {
		case i < 16:
		case i == 16:
			if spinFor <= 0 {
				return false
			}
			start = time.Now()
		case i%16 == 0:
			if time.Since(start) > spinFor {
				return false
			}
			osYield()
		default:
			runtime.Gosched()
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
