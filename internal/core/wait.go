package core

import (
	"context"
	"runtime"
	"time"

	"github.com/goshmem/shmem/internal/coll"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// wakeEvery bounds a sleep on the bell after a ring. Rings wake a waiter
// at once, and state changes (a failure, an exit, an abort) ring too; the
// bound only limits how late a missed ring (there should be none) is
// noticed. Each sleep that times out with nothing arriving doubles the
// next bound, up to quietWakeMax, because every backstop wake-up costs a
// waiting PE about 50 µs of CPU (futex, timer, the runtime's hand-off of
// its P): at 10 ms a PE idle in a wait used 1.1% of a core, at
// quietWakeMax well under 0.1%. Duties in real time (peer checks,
// deadlines, the operation timeout) set their own sleeps (longWait.step).
const (
	wakeEvery    = 10 * time.Millisecond
	quietWakeMax = 160 * time.Millisecond
)

// WaitLocal blocks until cond holds. cond reads this PE's heap; writers
// ring the bell after changing it. It fails when this PE is finalized, the
// world ended, any PE has failed (the value it waits for may never come),
// every other PE has called Finalize, or the operation timeout passes.
func (p *PE) WaitLocal(op string, cond func() bool) error {
	return p.WaitVector(context.Background(), op, noWord, cond)
}

// noWord marks a WaitWord whose word is not known.
const noWord = ^uint64(0)

// WaitWord is WaitLocal for a wait whose cond reads only the word (4 or 8
// bytes) at heap offset off, which reports name: writes elsewhere need not
// wake it. It also ends when ctx is done, with an error naming op that
// wraps ctx.Err() (context.Background for a wait that only the PE's state
// ends).
func (p *PE) WaitWord(ctx context.Context, op string, off uint64, cond func() bool) error {
	if poll(cond, 0) {
		return nil
	}
	return p.waitSlow(ctx, op, nil, off, true, cond)
}

// WaitVector is WaitWord for a wait on the elements from heap offset off.
func (p *PE) WaitVector(ctx context.Context, op string, off uint64, cond func() bool) error {
	if poll(cond, 0) {
		return nil
	}
	return p.waitSlow(ctx, op, nil, off, false, cond)
}

// WaitBlocked blocks until cond holds, as WaitLocal does, checking b's
// peers now and then (a team operation: see coll.Blocked). cond reads
// only the 8-byte word at heap offset off.
func (p *PE) WaitBlocked(op string, b coll.Blocked, off uint64, cond func() bool) error {
	// Most waits end within a microsecond; only longer ones register and
	// arm the kick.
	if poll(cond, 0) {
		return nil
	}
	return p.waitSlow(context.Background(), op, b, off, true, cond)
}

// syncArmer is a Bell that can arm a waiter which plain puts into the heap
// need not wake (udma.FutexBell): a team operation's, whose words only
// signals, atomics and notices write, and these always ring.
type syncArmer interface {
	ArmSync() uint32
	DisarmSync()
}

// wordArmer is a Bell that can arm a waiter which only writes to its one
// word need wake (transport.LocalBell: see ArmWord).
type wordArmer interface {
	ArmWord(off uint64) (armed uint32, slot int)
	DisarmWord(slot int)
}

// armer arms the PE's bell for one wait, as narrowly as the bell and the
// wait allow: a wait on one word need not wake for writes elsewhere, nor
// a team operation's for plain puts.
type armer struct {
	bell transport.Bell
	team syncArmer // set: a team wait, armed with ArmSync
	word wordArmer // set: a wait on one word, armed with ArmWord
	off  uint64
	slot int
}

// newArmer returns the armer of a wait whose cond reads only the word at
// off when word is set (and off is not noWord); team says it is a team
// operation's.
func newArmer(bell transport.Bell, team, word bool, off uint64) armer {
	a := armer{bell: bell, off: off}
	if word && off != noWord {
		a.word, _ = bell.(wordArmer)
	}
	if team && a.word == nil {
		a.team, _ = bell.(syncArmer)
	}
	return a
}

func (a *armer) arm() uint32 {
	switch {
	case a.word != nil:
		armed, slot := a.word.ArmWord(a.off)
		a.slot = slot
		return armed
	case a.team != nil:
		return a.team.ArmSync()
	}
	return a.bell.Arm()
}

func (a *armer) disarm() {
	switch {
	case a.word != nil:
		a.word.DisarmWord(a.slot)
	case a.team != nil:
		a.team.DisarmSync()
	default:
		a.bell.Disarm()
	}
}

// waitSlow is the wait of WaitWord, WaitVector and WaitBlocked once their
// first polls failed. ctx ends it when done (one that is never done,
// context.Background, costs nothing): its end rings the PE's bell
// (ringForContext), and the wait looks at it whenever it looks at the
// PE's state.
func (p *PE) waitSlow(ctx context.Context, op string, b coll.Blocked, off uint64, word bool, cond func() bool) error {
	// Counted before it looks at finalized, so that a Finalize either
	// is seen here or waits for this wait to leave before it releases
	// the heap cond reads.
	p.s.inWait.Add(1)
	defer p.s.inWait.Add(-1)
	if p.s.finalized.Load() {
		return p.waitable(op)
	}
	cancellable := ctx.Done() != nil
	if cancellable {
		if ctx.Err() != nil {
			return p.contextEnded(ctx, op)
		}
		defer context.AfterFunc(ctx, p.ringForContext)()
	}
	bell := p.s.bell
	defer p.s.kick.stop()
	var w *longWait
	a := newArmer(bell, b != nil, word, off)
	if b != nil {
		w = p.startLong(op, b)
	} else {
		w = p.startWord(op, off, false, 0)
	}
	defer p.endLong(w)
	// A wait polls for Spin at first and after every sleep a ring ended:
	// writes come in bursts, and a waiter that polls is not armed, so the
	// burst's writers skip the wake-up. After a sleep that timed out (the
	// backstop, or a duty below) nothing was arriving: it checks and sleeps
	// again, with the backstop doubled (wakeEvery), so a PE that waits long
	// (a service between collectives) uses next to no CPU.
	//
	// Without a spin, a waiter woken (by a ring or its timeout) checks
	// once: the write that rang came before the ring, and poll's tight
	// checks find nothing a single one misses when the writer is this
	// process's own server goroutine, which cannot run meanwhile on the
	// PE's one core. They cost a process waiting in a barrier about 6.6k
	// instructions per put or atomic it receives (callgrind, PE 1 of a
	// 2-process fetch-add run over TCP: 256 calls of the barrier's
	// condition), on the core whose server answers them.
	spin, backstop := p.s.cfg.Spin, wakeEvery
	for woken := false; ; woken = true {
		p.s.kick.kick()
		if woken && spin == 0 {
			if cond() {
				return nil
			}
		} else if poll(cond, spin) {
			return nil
		}
		if err := p.waitable(op); err != nil {
			return err
		}
		if cancellable && ctx.Err() != nil {
			return p.contextEnded(ctx, op)
		}
		sleep, err := w.step()
		if err != nil {
			if cond() {
				return nil
			}
			return err
		}
		armed := a.arm()
		if cond() {
			a.disarm()
			return nil
		}
		spin = 0
		if bell.Wait(armed, min(sleep, backstop)) {
			spin, backstop = p.s.cfg.Spin, wakeEvery
		} else {
			backstop = min(2*backstop, quietWakeMax)
		}
		a.disarm()
	}
}

// ringForContext wakes the PE's waits when a context ends one of them.
// It runs on a goroutine of its own (context.AfterFunc), which may start
// just as the wait returns and its PE finalizes: counted as a wait is, it
// rings only before Finalize, which releases the bell once no wait is
// counted.
func (p *PE) ringForContext() {
	p.s.inWait.Add(1)
	defer p.s.inWait.Add(-1)
	if !p.s.finalized.Load() {
		p.s.changed()
	}
}

// contextEnded is the error of a wait of op that ctx ended.
func (p *PE) contextEnded(ctx context.Context, op string) error {
	return errs.New(op, p.MyPE(), errs.NoPE, ctx.Err(), "the caller's context ended the wait")
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
	return p.waitableUnder(op, verdictErr(p.s.blocks.abort.Load()))
}

// waitableUnder is waitable with the abort verdict that applies to the
// wait (see longWait.verdict): nil when none does.
func (p *PE) waitableUnder(op string, verdict error) error {
	if err := p.usable(); err != nil {
		if err == errs.ErrFinalized {
			// The call checked the PE when it began: Finalize came
			// while it waited (another goroutine of this PE).
			return errs.New(op, p.s.cfg.Rank, errs.NoPE, errs.ErrFinalized, "Finalize, called by this PE while the wait was blocked, ended the wait")
		}
		return p.annotate(err, op, errs.NoPE)
	}
	if verdict != nil {
		return errs.As(op, p.MyPE(), verdict)
	}
	return p.peerFailed(op)
}

// peerFailed returns the error naming a failed PE, nil when none failed.
func (p *PE) peerFailed(op string) error {
	if p.s.nFailed.Load() != 0 {
		if r := int(p.s.firstFailed.Load()) - 1; r >= 0 {
			if why := p.s.failed.Load(r); why != nil {
				return errs.New(op, p.s.cfg.Rank, r, errs.ErrPEFailed, "%s", *why)
			}
		}
		for _, r := range p.s.failed.Ranks() {
			if why := p.s.failed.Load(r); why != nil {
				return errs.New(op, p.s.cfg.Rank, r, errs.ErrPEFailed, "%s", *why)
			}
		}
	}
	return nil
}
