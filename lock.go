package shmem

import "github.com/goshmem/shmem/internal/errs"

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
func SetLock(p *PE, l Sym[int64]) error {
	const op = "SetLock"
	if _, _, err := l.target(p, op, lockHome, 0, 1); err != nil {
		return err
	}
	old, err := AtomicFetchAdd(p, l, ticketUnit, lockHome)
	if err != nil {
		return errs.As(op, p.MyPE(), err)
	}
	ticket := uint32(uint64(old) >> 32)
	err = p.c.WaitLock(op, l.off, lockHome, func() (bool, error) {
		cur, err := AtomicFetch(p, l, lockHome)
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
	cur, err := AtomicFetch(p, l, lockHome)
	if err != nil {
		return false, err
	}
	if uint32(uint64(cur)>>32) != uint32(cur) {
		return false, nil
	}
	old, err := AtomicCompareSwap(p, l, cur, cur+ticketUnit, lockHome)
	if err == nil && old == cur {
		p.c.HoldLock(l.off)
		return true, nil
	}
	return false, err
}

// ClearLock completes the caller's outstanding puts and releases l
// (shmem_clear_lock).
func ClearLock(p *PE, l Sym[int64]) error {
	if _, _, err := l.target(p, "ClearLock", lockHome, 0, 1); err != nil {
		return err
	}
	if err := p.Quiet(); err != nil {
		return err
	}
	p.c.DropLock(l.off)
	for {
		cur, err := AtomicFetch(p, l, lockHome)
		if err != nil {
			return err
		}
		// Increment only the low half: a carry must not hand out a ticket.
		next := int64(uint64(cur)&^0xffffffff | uint64(uint32(cur)+1))
		old, err := AtomicCompareSwap(p, l, cur, next, lockHome)
		if err != nil || old == cur {
			return err
		}
	}
}
