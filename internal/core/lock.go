package core

import (
	"runtime"
	"slices"
	"time"

	"github.com/goshmem/shmem/internal/coll"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// Locks live on a home PE and are polled remotely (see shmem.SetLock). A
// waiter cannot read who holds a ticket lock from the lock word, so every
// PE records the lock it holds in a word of its own (coll.Pool.HeldWord):
// a local store at acquisition and release, read by waiters only while
// they wait long.

// HoldLock records that this PE holds the lock at heap offset off.
func (p *PE) HoldLock(off uint64) {
	p.s.heldMu.Lock()
	p.s.held = append(p.s.held, off)
	p.s.heldMu.Unlock()
	transport.ApplySignal(p.s.local, p.s.pool.HeldWord(), off+1, transport.SignalSet)
}

// HoldsLock reports whether this PE holds the lock at heap offset off: one
// of its goroutines took it (HoldLock) and none has released it since.
func (p *PE) HoldsLock(off uint64) bool {
	p.s.heldMu.Lock()
	defer p.s.heldMu.Unlock()
	return slices.Contains(p.s.held, off)
}

// HeldLocks returns the heap offsets of the locks this PE holds, in
// increasing order: the simulator's check that a PE that returns
// released what it took.
func (p *PE) HeldLocks() []uint64 {
	p.s.heldMu.Lock()
	defer p.s.heldMu.Unlock()
	return slices.Sorted(slices.Values(p.s.held))
}

// DropLock records that this PE released the lock at off, and reports
// whether it held it; when it did not, it records nothing. Checking and
// removing under one mutex lets only one of two goroutines of this PE that
// clear the lock at once release it.
func (p *PE) DropLock(off uint64) bool {
	p.s.heldMu.Lock()
	i := slices.Index(p.s.held, off)
	if i >= 0 {
		last := len(p.s.held) - 1
		p.s.held[i] = p.s.held[last]
		p.s.held = p.s.held[:last]
	}
	p.s.heldMu.Unlock()
	if i < 0 {
		return false
	}
	w := p.s.pool.HeldWord()
	if transport.Load64(p.s.local, w) == off+1 {
		transport.ApplySignal(p.s.local, w, 0, transport.SignalSet)
	}
	return true
}

// LockHolder returns the PE other than this one whose held word records
// the lock at heap offset off, or errs.NoPE when none does (the lock is
// free, its holder took another lock since, or a peer could not be read).
// It reads every peer's word, so it is for error messages only.
func (p *PE) LockHolder(op string, off uint64) int {
	for r := 0; r < p.NPEs(); r++ {
		if r == p.MyPE() {
			continue
		}
		path, err := p.Path(op, r)
		if err != nil {
			continue
		}
		if held, err := path.Atomic(transport.AtomicFetch, 8, p.s.pool.HeldWord(), 0, 0); err == nil && held == off+1 {
			return r
		}
	}
	return errs.NoPE
}

// WaitLock polls acquired, which reads the lock at heap offset off on PE
// home, until it reports true, backing off so that the holder has the
// CPU. It ends as a wait does (failures, the operation timeout, the
// deadlock verdict), and with ErrPEFailed naming the holder when the PE
// that holds the lock has failed or called Finalize.
func (p *PE) WaitLock(op string, off uint64, home int, acquired func() (bool, error)) error {
	var w *longWait
	defer func() {
		if w != nil {
			p.endLong(w)
		}
	}()
	for attempt := 0; ; attempt++ {
		ok, err := acquired()
		if err != nil {
			// A failure this PE recorded explains it better: the home
			// that finalized because the holder died ends the poll, but
			// the holder is the cause (TestFailureMatrixFabric,
			// lock-holder-dies).
			if werr := p.waitable(op); werr != nil {
				return werr
			}
			return err
		}
		if ok {
			return nil
		}
		if err := p.waitable(op); err != nil {
			return err
		}
		if attempt < 32 {
			// The holder usually releases within microseconds.
			runtime.Gosched()
			continue
		}
		if w == nil {
			w = p.startWord(op, off, true, home)
		}
		if _, err := w.step(); err != nil {
			// The peer checks may find every other PE finalized after
			// the last of them released the lock to this PE (since the
			// look above): what they released is this PE's.
			if ok, aerr := acquired(); aerr == nil && ok {
				return nil
			}
			return err
		}
		if p.s.checks != nil {
			// Under a simulated network each look is a scheduling point
			// that lets the holder run; a sleep would only hold up the
			// whole world, which waits for this PE's turn to end.
			continue
		}
		time.Sleep(time.Duration(min(attempt-31, 100)) * time.Microsecond)
	}
}

// lockCheck: the lock can never be released once the PE holding it has
// failed or called Finalize, nor once every other PE has.
func (p *PE) lockCheck(l *longWait) error {
	op := l.op
	for r := 0; r < p.NPEs(); r++ {
		if r == p.MyPE() {
			continue
		}
		if why := p.s.failed.Load(r); why != nil {
			// Its memory is gone with it: it may have held the lock.
			return errs.New(op, p.MyPE(), r, errs.ErrPEFailed, "PE %d failed while this PE waits for %s (it may hold it): %s", r, l.waiting(), firstLine(*why))
		}
		path, err := p.Path(op, r)
		if err != nil {
			return err
		}
		held, err := path.Atomic(transport.AtomicFetch, 8, p.s.pool.HeldWord(), 0, 0)
		if err != nil {
			return err
		}
		if held != l.off+1 {
			continue
		}
		if left, err := coll.Left(p, op, r); err != nil || !left {
			continue
		}
		// It may have released the lock and called Finalize since the
		// first look (a waiter was failed so, in the simulator's Lazy
		// delivery, TestHeldWriteIsNoDeadlock): once it has called
		// Finalize, its word no longer changes.
		if held, err = path.Atomic(transport.AtomicFetch, 8, p.s.pool.HeldWord(), 0, 0); err != nil {
			return err
		}
		if held == l.off+1 {
			p.FinalizedEarly(r)
			return errs.New(op, p.MyPE(), r, errs.ErrPEFailed, "PE %d holds %s and called Finalize", r, l.waiting())
		}
	}
	return p.wordCheck(l)
}
