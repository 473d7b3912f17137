package transport

import (
	"math/bits"
	"sync/atomic"
	"unsafe"
)

// InRange reports whether [off, off+n) lies inside a heap of size bytes,
// without overflowing.
func InRange(size int, off uint64, n int) bool {
	if n < 0 || size < 0 {
		return false
	}
	end, carry := bits.Add64(off, uint64(n), 0)
	return carry == 0 && end <= uint64(size)
}

// WordOK reports whether an atomic of width bytes at off fits in a heap of
// size bytes and is aligned.
func WordOK(size int, off uint64, width int) bool {
	return (width == 4 || width == 8) && off%uint64(width) == 0 && InRange(size, off, width)
}

// ApplyAtomic performs op on the word of width bytes at mem[off] and returns
// its previous value. The caller has checked WordOK(len(mem), off, width) and
// op.Valid(); the word may be shared with other processes.
func ApplyAtomic(mem []byte, op AtomicOp, width int, off uint64, operand, cond uint64) uint64 {
	p := unsafe.Pointer(unsafe.SliceData(mem[off : off+uint64(width)]))
	if width == 4 {
		return uint64(atomic32((*uint32)(p), op, uint32(operand), uint32(cond)))
	}
	return atomic64((*uint64)(p), op, operand, cond)
}

func atomic32(w *uint32, op AtomicOp, v, cond uint32) uint32 {
	switch op {
	case AtomicFetch:
		return atomic.LoadUint32(w)
	case AtomicSet, AtomicSwap:
		return atomic.SwapUint32(w, v)
	case AtomicCompareSwap:
		return cas32(w, cond, v)
	case AtomicFetchAdd:
		return atomic.AddUint32(w, v) - v
	case AtomicFetchAnd:
		return atomic.AndUint32(w, v)
	case AtomicFetchOr:
		return atomic.OrUint32(w, v)
	case AtomicFetchXor:
		for {
			old := atomic.LoadUint32(w)
			if atomic.CompareAndSwapUint32(w, old, old^v) {
				return old
			}
		}
	}
	return 0
}

func atomic64(w *uint64, op AtomicOp, v, cond uint64) uint64 {
	switch op {
	case AtomicFetch:
		return atomic.LoadUint64(w)
	case AtomicSet, AtomicSwap:
		return atomic.SwapUint64(w, v)
	case AtomicCompareSwap:
		return CAS64(w, cond, v)
	case AtomicFetchAdd:
		return atomic.AddUint64(w, v) - v
	case AtomicFetchAnd:
		return atomic.AndUint64(w, v)
	case AtomicFetchOr:
		return atomic.OrUint64(w, v)
	case AtomicFetchXor:
		for {
			old := atomic.LoadUint64(w)
			if atomic.CompareAndSwapUint64(w, old, old^v) {
				return old
			}
		}
	}
	return 0
}

// ApplySignal updates the 8-byte signal word at mem[off]; the caller has
// checked WordOK(len(mem), off, 8) and op.Valid().
func ApplySignal(mem []byte, off uint64, value uint64, op SignalOp) {
	w := (*uint64)(unsafe.Pointer(unsafe.SliceData(mem[off : off+8])))
	if op == SignalAdd {
		atomic.AddUint64(w, value)
		return
	}
	atomic.StoreUint64(w, value)
}

// Load64 atomically reads the 8-byte word at mem[off] (checked by the caller).
func Load64(mem []byte, off uint64) uint64 {
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(unsafe.SliceData(mem[off : off+8]))))
}

// Load32 atomically reads the 4-byte word at mem[off] (checked by the caller).
func Load32(mem []byte, off uint64) uint32 {
	return atomic.LoadUint32((*uint32)(unsafe.Pointer(unsafe.SliceData(mem[off : off+4]))))
}

// CAS64 stores v in *w if it holds cond and returns the value it held. The
// compare-and-swap comes first, as one locked instruction, like OSHMEM's:
// reading the word first would fetch a line the peer last wrote twice
// (shared for the load, then exclusive for the swap). Only when the swap
// fails is the word read, and the read is the answer unless the word holds
// cond again by then (then the swap is retried).
func CAS64(w *uint64, cond, v uint64) uint64 {
	for {
		if atomic.CompareAndSwapUint64(w, cond, v) {
			return cond
		}
		if old := atomic.LoadUint64(w); old != cond {
			return old
		}
	}
}

// cas32 is CAS64 for 4-byte words.
func cas32(w *uint32, cond, v uint32) uint32 {
	for {
		if atomic.CompareAndSwapUint32(w, cond, v) {
			return cond
		}
		if old := atomic.LoadUint32(w); old != cond {
			return old
		}
	}
}

// Word64 returns the aligned 8-byte word at mem[off] (the caller checked
// alignment; the slice expression checks the bounds).
func Word64(mem []byte, off uint64) *uint64 {
	return (*uint64)(unsafe.Pointer(unsafe.SliceData(mem[off : off+8])))
}
