package core

import (
	"runtime"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// wakeEvery bounds one sleep on the bell. Rings wake a waiter at once;
// this only limits how late a missed ring (there should be none) is noticed.
const wakeEvery = 10 * time.Millisecond

// WaitLocal blocks until cond holds. cond reads this PE's heap; writers
// ring the bell after changing it. It fails when this PE is finalized, the
// world ended, or any PE has failed (the value it waits for may never come).
func (p *PE) WaitLocal(op string, cond func() bool) error {
	b := p.s.bell
	// Most waits end within a microsecond; only longer ones arm the kick.
	if poll(cond, 0) {
		return nil
	}
	defer p.s.kick.stop()
	for {
		p.s.kick.kick()
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

// tightChecks is how many times poll checks without yielding: about a
// microsecond, the time a peer on another core takes to answer.
const tightChecks = 256

// poll checks cond until it holds or spinFor passes (only the tight
// checks when spinFor is 0). After the tight checks it yields between
// checks: to goroutines of this process, and every 64 checks to other
// processes, since with more PEs than cores the PE being waited for may
// need this core.
func poll(cond func() bool, spinFor time.Duration) bool {
	for i := 0; i < tightChecks; i++ {
		if cond() {
			return true
		}
	}
	if spinFor <= 0 {
		return false
	}
	start := time.Now()
	for i := 1; ; i++ {
		if cond() {
			return true
		}
		switch {
		case i%64 == 0:
			if time.Since(start) > spinFor {
				return false
			}
			transport.OSYield()
		case i%8 == 0:
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
