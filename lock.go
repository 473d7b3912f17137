package shmem

import (
	"runtime"
	"time"
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

// SetLock blocks until the caller holds l (shmem_set_lock).
func SetLock(p *PE, l Sym[int64]) error {
	const op = "SetLock"
	if _, _, err := l.target(p, op, lockHome, 0, 1); err != nil {
		return err
	}
	old, err := AtomicFetchAdd(p, l, ticketUnit, lockHome)
	if err != nil {
		return err
	}
	ticket := uint32(uint64(old) >> 32)
	for attempt := 0; ; attempt++ {
		cur, err := AtomicFetch(p, l, lockHome)
		if err != nil {
			return err
		}
		if uint32(cur) == ticket {
			return nil
		}
		if err := p.c.Check(op); err != nil {
			return err
		}
		backoff(attempt)
	}
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
	return err == nil && old == cur, err
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

// backoff paces polling of a remote word: yield at first, then sleep for
// longer and longer, up to 100µs, so that waiting PEs leave the CPU to the
// one that holds the lock.
func backoff(attempt int) {
	if attempt < 32 {
		runtime.Gosched()
		return
	}
	time.Sleep(time.Duration(min(attempt-31, 100)) * time.Microsecond)
}
