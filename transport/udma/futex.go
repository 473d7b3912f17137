package udma

import (
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// futex(2) operations. Deliberately without FUTEX_PRIVATE_FLAG: the kernel
// then keys waiters by the shared page, not by our address space, so a ring
// from another process that maps the segment reaches them.
const (
	futexWait = 0
	futexWake = 1
)

// FutexBell is a transport.Bell over two uint32 words in shared memory: the
// number of armed waiters and a ring count that waiters sleep on with
// futex(2). Writers and waiters may be in different processes; each needs
// only a mapping of the words. The zero value is unusable; Segment.Bell
// returns one over the segment header.
//
// A process that dies while armed leaves the waiter count raised; rings
// then cost a futex syscall each, which is slower but never wrong.
//
// A bell over a segment also counts its data waiters (ArmSync): a plain
// put into the heap wakes only waiters that may wait for its bytes.
type FutexBell struct {
	waiters *uint32
	seq     *uint32
	// data counts the waiters that Arm armed, which may wait for any
	// write: the rest (ArmSync) wait for a signal, an atomic or a notice,
	// all of which Ring. Nil when the bell has no such word: every waiter
	// then counts as a data waiter (see Path).
	data *uint32
}

// NewFutexBell returns a bell over the words at waiters and seq. They must
// stay mapped (or reachable) while the bell is used, be 4-byte aligned and
// start at zero or at values another bell over them left.
func NewFutexBell(waiters, seq *uint32) *FutexBell {
	return &FutexBell{waiters: waiters, seq: seq}
}

// Ring wakes every armed waiter in every process. With none armed it costs
// one atomic load; with a wake already pending (see below) two loads. The
// caller's writes before Ring must be full barriers (atomic stores or
// read-modify-writes) for a waiter that arms concurrently to see them; see
// transport.Bell.
//
// The ring count's low bit says a wake is pending: Ring moves it from even
// to odd and wakes, Arm moves it back to even. Between the two, further
// rings skip the syscall: every waiter armed before the pending ring sees
// the count change and re-checks, and it re-arms (clearing the bit) before
// that re-check, so writes made before a skipped ring are visible to it. A
// writer streaming puts to a PE that waits elsewhere (in a barrier, say)
// then pays one futex wake per wake-up of that PE, not one per put.
func (b *FutexBell) Ring() {
	if atomic.LoadUint32(b.waiters) == 0 {
		return
	}
	b.wake()
}

// wake is Ring with a waiter armed; apart so that Ring inlines into the
// mapped path's operations, which then pay one load for it.
func (b *FutexBell) wake() {
	s := atomic.LoadUint32(b.seq)
	if s&1 == 1 || !atomic.CompareAndSwapUint32(b.seq, s, s+1) {
		return // a wake is pending, or another ring just made one
	}
	// A wake never blocks, so the raw syscall skips the scheduler hand-off.
	unix.RawSyscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(b.seq)), futexWake, math.MaxInt32, 0, 0, 0)
}

// Arm registers a waiter (a full barrier), clears a pending wake, and
// returns the (even) ring count to pass to Wait.
func (b *FutexBell) Arm() uint32 {
	if b.data != nil {
		atomic.AddUint32(b.data, 1)
	}
	return b.ArmSync()
}

// ArmSync is Arm for a waiter whose condition only words written by a
// signal or an atomic can change (a team operation: barriers and
// collectives wait on their signal words), or a notice: a plain put into
// the heap does not wake it. A PE waiting in a barrier while a peer
// streams puts into its heap then sleeps through the stream, instead of
// costing the writer a futex wake (a syscall and, in a VM, an IPI) each
// time it re-arms. Disarm it with DisarmSync.
func (b *FutexBell) ArmSync() uint32 {
	atomic.AddUint32(b.waiters, 1)
	for {
		s := atomic.LoadUint32(b.seq)
		if s&1 == 0 || atomic.CompareAndSwapUint32(b.seq, s, s+1) {
			return s + s&1
		}
	}
}

// Wait sleeps in the kernel until a ring after the Arm that returned armed,
// or until timeout passes; timeout <= 0 returns at once. It may also return
// early on an unexpected futex error, so callers re-check their condition
// as the Bell contract already requires. It reports whether the ring
// count moved since Arm.
func (b *FutexBell) Wait(armed uint32, timeout time.Duration) bool {
	if timeout <= 0 {
		return atomic.LoadUint32(b.seq) != armed
	}
	deadline := time.Now().Add(timeout)
	for atomic.LoadUint32(b.seq) == armed {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		// futex's timeout is relative and measured on CLOCK_MONOTONIC, so
		// recomputing it after an interruption keeps the overall deadline.
		ts := unix.NsecToTimespec(int64(left))
		_, _, e := unix.Syscall6(unix.SYS_FUTEX, uintptr(unsafe.Pointer(b.seq)), futexWait,
			uintptr(armed), uintptr(unsafe.Pointer(&ts)), 0, 0)
		switch e {
		case 0, unix.EINTR, unix.ETIMEDOUT:
			// Woken, interrupted or timed out: the loop re-checks the count
			// (a spurious wake leaves it unchanged) and the deadline.
		case unix.EAGAIN:
			return true // rung between Arm and the syscall
		default:
			return atomic.LoadUint32(b.seq) != armed
		}
	}
	return true
}

// Disarm unregisters a waiter that Arm registered.
func (b *FutexBell) Disarm() {
	b.DisarmSync()
	if b.data != nil {
		atomic.AddUint32(b.data, math.MaxUint32)
	}
}

// DisarmSync unregisters a waiter that ArmSync registered.
func (b *FutexBell) DisarmSync() { atomic.AddUint32(b.waiters, math.MaxUint32) }
