package shmem

import (
	"fmt"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// A lock is a ticket lock in element 0 of an int64 symmetric object on PE 0:
// the high 32 bits hand out tickets, the low 32 bits say which ticket is
// served. Tickets make it fair: contenders get the lock in arrival order.
const (
	lockHome   = 0
	ticketUnit = 1 << 32
)

// The lock calls validate l under their own names first, so that a bad
// lock is reported as SetLock, not as the atomic that would have failed.

// SetLock blocks until the caller holds l (shmem_set_lock). It fails with
// ErrPEFailed when the lock's home PE (PE 0) or the PE holding the lock
// fails or calls Finalize, since the lock would then never be released;
// like every wait it also ends when any PE fails (a failed PE's memory,
// where it records the lock it holds, can no longer be read).
//
// A lock is held by a PE, not a goroutine: another goroutine of the
// holding PE waits in SetLock like any other PE until the lock is cleared.
// So a goroutine that calls SetLock on a lock its PE already holds waits
// for itself (OpenSHMEM leaves it undefined; the library cannot tell that
// goroutine from another one): the wait ends only as a wait does, with
// ErrDeadlock where the simulator sees no PE progress, or with ErrTimeout
// under WithOpTimeout; its message says the lock is held by the caller's
// own PE. TestLock by the holder reports false.
func SetLock(p *PE, l Sym[int64]) error {
	const op = "SetLock"
	if _, _, err := l.target(p, op, lockHome, 0, 1); err != nil {
		return err
	}
	old, err := lockAMO(p, op, l, transport.AtomicFetchAdd, ticketUnit, 0)
	if err != nil {
		return err
	}
	ticket := uint32(uint64(old) >> 32)
	err = p.c.WaitLock(op, l.off, lockHome, func() (bool, error) {
		cur, err := lockAMO(p, op, l, transport.AtomicFetch, 0, 0)
		return err == nil && uint32(cur) == ticket, err
	})
	if err != nil {
		return errs.As(op, p.MyPE(), err)
	}
	p.c.HoldLock(l.off)
	return nil
}

// TestLock takes l if it is free and reports whether it did
// (shmem_test_lock, with the sense of its result inverted to read as Go).
func TestLock(p *PE, l Sym[int64]) (acquired bool, err error) {
	if _, _, err := l.target(p, "TestLock", lockHome, 0, 1); err != nil {
		return false, err
	}
	cur, err := lockAMO(p, "TestLock", l, transport.AtomicFetch, 0, 0)
	if err != nil {
		return false, err
	}
	if uint32(uint64(cur)>>32) != uint32(cur) {
		return false, nil
	}
	old, err := lockAMO(p, "TestLock", l, transport.AtomicCompareSwap, cur+ticketUnit, cur)
	if err == nil && old == cur {
		p.c.HoldLock(l.off)
		return true, nil
	}
	return false, err
}

// ClearLock completes the caller's outstanding puts and releases l
// (shmem_clear_lock). Only the PE holding l may clear it: OpenSHMEM leaves
// any other clear undefined, and here it would hand the lock on from its
// holder (or to no one), leaving two PEs inside it or every later SetLock
// waiting forever. A PE that does not hold l (l is free, or another PE
// holds it) gets ErrInvalidArgument naming the holder where it is known,
// and l is left as it was. A lock is held by a PE, not a goroutine: any
// goroutine of the holding PE may clear it.
func ClearLock(p *PE, l Sym[int64]) error {
	const op = "ClearLock"
	if _, _, err := l.target(p, op, lockHome, 0, 1); err != nil {
		return err
	}
	if !p.c.HoldsLock(l.off) {
		return notHolder(p, l)
	}
	if err := p.Quiet(); err != nil {
		return err
	}
	if !p.c.DropLock(l.off) {
		// Another goroutine of this PE cleared it since the look above.
		return notHolder(p, l)
	}
	for {
		cur, err := lockAMO(p, op, l, transport.AtomicFetch, 0, 0)
		if err != nil {
			return err
		}
		// Increment only the low half: a carry must not hand out a ticket.
		next := int64(uint64(cur)&^0xffffffff | uint64(uint32(cur)+1))
		old, err := lockAMO(p, op, l, transport.AtomicCompareSwap, next, cur)
		if err != nil || old == cur {
			return err
		}
	}
}

// notHolder is ClearLock's refusal of l by a PE that does not hold it,
// saying who does as far as the lock word and the peers' held words tell.
func notHolder(p *PE, l Sym[int64]) error {
	const op = "ClearLock"
	me := p.MyPE()
	who := "another PE holds it"
	if cur, err := lockAMO(p, op, l, transport.AtomicFetch, 0, 0); err == nil && uint32(uint64(cur)>>32) == uint32(cur) {
		who = "no PE holds it"
	} else if r := p.c.LockHolder(op, l.off); r != errs.NoPE {
		who = fmt.Sprintf("PE %d holds it", r)
	}
	return errs.New(op, me, lockHome, ErrInvalidArgument,
		"PE %d does not hold the lock at heap offset %#x of PE %d (%s); only its holder may clear it", me, l.off, lockHome, who)
}

// lockAMO performs one atomic on l's word on its home PE for the lock call
// op, without counting it: the metrics count what a program does under a
// lock, not the lock's own atomics (README, "Metrics").
func lockAMO(p *PE, op string, l Sym[int64], aop transport.AtomicOp, v, cond int64) (int64, error) {
	path, off, err := l.target(p, op, lockHome, 0, 1)
	if err != nil {
		return 0, err
	}
	old, err := path.Atomic(aop, 8, off, uint64(v), uint64(cond))
	return int64(old), errs.As(op, p.MyPE(), err)
}
