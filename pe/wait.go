package pe

import (
	"runtime"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// spinFor is how long a wait polls its condition before it sleeps on the
// bell, and again after every wake-up. While a waiter polls it is not
// armed, so writers skip the wake-up syscall: a burst of puts into a
// waiting PE costs one wake, not one per put. It is short, and the poll
// yields the CPU (to goroutines and to other processes), because with more
// PEs than cores the PE being waited for may need this core.
const spinFor = 20 * time.Microsecond

// wakeEvery bounds one sleep on the bell. Rings wake a waiter at once;
// this only limits how late a missed ring (there should be none) is noticed.
const wakeEvery = 10 * time.Millisecond

// WaitLocal blocks until cond holds. cond reads this PE's heap; writers
// ring the bell after changing it. It fails when this PE is finalized, the
// world ended, or any PE has failed (the value it waits for may never come).
func (p *PE) WaitLocal(op string, cond func() bool) error {
	b := p.s.bell
	for {
		if poll(cond) {
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

// poll checks cond until it holds or spinFor passes.
func poll(cond func() bool) bool {
	var start time.Time
	for i := 0; ; i++ {
		if cond() {
			return true
		}
		switch {
		case i < 16:
		case i == 16:
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
