package main

/*
#include <stdlib.h>
#include "gs.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/goshmem/shmem"
)

// The C API has no handle for its world: shmem_init takes no arguments and
// every later call means "this process's PE". So this file keeps the one
// world of the process, the only global state of the library. The fields
// an RMA fallback reads are in an immutable value swapped atomically; the
// mutable tables have their own locks.
var (
	cur atomic.Pointer[state] // nil before shmem_init and after shmem_finalize

	setup    sync.Mutex // serializes init, finalize, malloc/free and the pre-init configuration
	pre      preInit    // aclshmemx_* configuration before init; guarded by setup
	lastErr  atomic.Pointer[C.char]
	noAbort  atomic.Bool // shmemx_set_error_mode(SHMEMX_ERRORS_RETURN)
	ctxTab   handles[*ctxEntry]
	teamTab  handles[*shmem.Team]
	heapAllo *allocator // guarded by setup
)

type state struct {
	p    *shmem.PE
	heap shmem.Sym[uint8] // the C heap: every symmetric address is an offset into it
	base unsafe.Pointer   // where this process maps its own part
	size uint64
	sys  uint64 // offset of the library's own symmetric area (sysArea)
	// statics is the program's statics (statics.c) as the world serves
	// them to the peers it reaches over the network; its Len is 0 when
	// they are not symmetric in this process (gs_dwhy says why).
	statics shmem.Sym[uint8]
	// unmap takes failed peers out of the C tables (unmap.go); set once
	// init has set them up.
	unmap *unmapper
}

type ctxEntry struct {
	p    *shmem.PE
	team uintptr
}

// Handles 1 and 2 are fixed by shmem.h: SHMEM_CTX_DEFAULT, SHMEM_TEAM_WORLD
// and SHMEM_TEAM_SHARED.
const (
	ctxDefault = 1
	teamWorld  = 1
	teamShared = 2
)

// handles maps the small integers C holds (cgo forbids C keeping Go
// pointers) to Go values.
type handles[T any] struct {
	mu   sync.RWMutex
	m    map[uintptr]T
	next uintptr
}

func (h *handles[T]) get(k uintptr) (T, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	v, ok := h.m[k]
	return v, ok
}

func (h *handles[T]) set(k uintptr, v T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[uintptr]T{}
	}
	h.m[k] = v
	if k >= h.next {
		h.next = k + 1
	}
}

func (h *handles[T]) add(v T) uintptr {
	h.mu.Lock()
	defer h.mu.Unlock()
	k := h.next
	h.next++
	h.m[k] = v
	return k
}

// addIn is add for a table whose keys must lie in [low, limit): context
// handles, which the C side's fast path looks up in its table of
// GS_MAX_CTX entries and refuses outside it. It takes the first free key
// from next on, wrapping to low, so that a freed key comes back only after
// every other one has been handed out since: a destroyed handle stays
// refused for as long as the range allows. False when every key is taken.
func (h *handles[T]) addIn(v T, low, limit uintptr) (uintptr, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m == nil {
		h.m = map[uintptr]T{}
	}
	for range limit - low {
		k := h.next
		if k < low || k >= limit {
			k = low
		}
		h.next = k + 1
		if _, taken := h.m[k]; !taken {
			h.m[k] = v
			return k, true
		}
	}
	return 0, false
}

func (h *handles[T]) del(k uintptr) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.m, k)
}

func (h *handles[T]) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.m, h.next = nil, 0
}

var errNotInit = errors.New("shmem_init has not been called (or shmem_finalize has)")

// world returns the state, or aborts op when there is none: a call before
// shmem_init is a program bug that no error mode can return from.
func world(op *C.char) *state {
	s := cur.Load()
	if s == nil {
		msg := record(op, errNotInit)
		C.gs_die(C.CString("goshmem: "+msg), 1)
	}
	return s
}

// pe returns the PE behind a context handle, or nil, having reported op's
// error, when the handle is no context (SHMEM_CTX_INVALID, destroyed,
// made up): under SHMEMX_ERRORS_RETURN the call then does nothing, rather
// than run on the default context or fail again on what follows.
func (s *state) pe(op *C.char, ctx C.uintptr_t) *shmem.PE {
	if ctx == ctxDefault {
		return s.p
	}
	if e, ok := ctxTab.get(uintptr(ctx)); ok {
		return e.p
	}
	die(op, fmt.Errorf("%w: invalid context %#x", shmem.ErrInvalidArgument, uintptr(ctx)))
	return nil
}

func (s *state) team(t C.uintptr_t) *shmem.Team {
	v, _ := teamTab.get(uintptr(t))
	return v
}

// sym returns the symmetric bytes [addr, addr+n), or an error naming the
// address when it is not inside the C heap.
func (s *state) sym(addr unsafe.Pointer, n uint64) (shmem.Sym[uint8], error) {
	return s.symOn(addr, n, -1)
}

// symOn is sym for a call that reaches one PE, pe, which its error names.
// A static reaches this Go path only where the C side has no mapping of
// the peer's copy (statics.c): another host, or TCP forced; it is then a
// slice of the statics Sym, which the network carries.
func (s *state) symOn(addr unsafe.Pointer, n uint64, pe int) (shmem.Sym[uint8], error) {
	off := uint64(uintptr(addr) - uintptr(s.base))
	if off < s.size && n <= s.size-off {
		return s.heap.Slice(int(off), int(off+n)), nil
	}
	if off < s.size {
		return shmem.Sym[uint8]{}, fmt.Errorf("%w: address %p (%d bytes) runs past the end of the symmetric heap, which has %d bytes from it on (SHMEM_SYMMETRIC_SIZE sets its size)",
			shmem.ErrInvalidArgument, addr, n, s.size-off)
	}
	base, size := uintptr(unsafe.Pointer(C.gs_dbase)), uint64(s.statics.Len())
	if so := uint64(uintptr(addr) - base); pe >= 0 && so < size && n <= size-so {
		return s.statics.Slice(int(so), int(so+n)), nil
	}
	return shmem.Sym[uint8]{}, notSym(addr, n, pe)
}

// notSym explains why [addr, addr+n) is not symmetric memory goshmem can
// reach. (The C side runs the collectives on statics itself: pe < 0 is a
// guard.)
func notSym(addr unsafe.Pointer, n uint64, pe int) error {
	why, _ := fieldString(unsafe.Pointer(&C.gs_dwhy[0]), len(C.gs_dwhy)) // vsnprintf ends it with a NUL; read within it all the same
	base, size := uintptr(unsafe.Pointer(C.gs_dbase)), uintptr(C.gs_dsize)
	if size > 0 && uintptr(addr)-base < size {
		if uint64(uintptr(addr)-base)+n > uint64(size) {
			return fmt.Errorf("%w: address %p (%d bytes) runs past the end of the static data", shmem.ErrInvalidArgument, addr, n)
		}
		if pe < 0 {
			return fmt.Errorf("%w: address %p (%d bytes) is static data, which this call cannot use; use shmem_malloc for it",
				shmem.ErrInvalidArgument, addr, n)
		}
		return fmt.Errorf("%w: address %p (%d bytes) is static data, which this world does not carry to PE %d",
			shmem.ErrInvalidArgument, addr, n, pe)
	}
	if size > 0 {
		return fmt.Errorf("%w: address %p (%d bytes) is not symmetric: neither in the symmetric heap (shmem_malloc memory) nor in the program's static data",
			shmem.ErrInvalidArgument, addr, n)
	}
	err := fmt.Errorf("%w: address %p (%d bytes) is not in the symmetric heap (shmem_malloc memory)", shmem.ErrInvalidArgument, addr, n)
	if why != "" {
		err = fmt.Errorf("%w, and static data is not symmetric in this process: %s", err, why)
	}
	return err
}

// record keeps err as the text shmemx_last_error returns. The previous text
// is not freed: a C caller may still hold it, and errors are rare.
func record(op *C.char, err error) string {
	msg := fmt.Sprintf("%s: %v", C.GoString(op), err)
	lastErr.Store(C.CString(msg))
	return msg
}

// fail records err for a call that returns a code, and returns the code.
func fail(op *C.char, err error) C.int {
	record(op, err)
	return -1
}

// die ends the program as C users expect of a call without a return code:
// a message naming the call on stderr, exit status 1. With
// shmemx_set_error_mode(SHMEMX_ERRORS_RETURN) it only records the error.
func die(op *C.char, err error) {
	msg := record(op, err)
	if noAbort.Load() {
		return
	}
	cs := C.CString("goshmem: " + msg)
	C.gs_die(cs, 1)
}

// guard turns a panic into the abort of op: no panic may cross into C.
// Every export defers it.
func guard(op *C.char) {
	if r := recover(); r != nil {
		noAbort.Store(false)
		die(op, fmt.Errorf("internal error: %v", r))
	}
}

//export goshmem_last_error
func goshmem_last_error() *C.char { return lastErr.Load() }

//export goshmem_set_abort
func goshmem_set_abort(on C.int) { noAbort.Store(on == 0) }
