package transport

import "encoding/binary"

// AtomicNBIPath is implemented by a Path that can issue a fetching atomic
// without waiting for its answer (shmem_atomic_fetch_*_nbi): the old value
// lands in dst (width bytes, the machine's byte order) by the next Quiet
// of the path's engine. A path without it performs the atomic at once.
type AtomicNBIPath interface {
	AtomicNBI(op AtomicOp, width int, off uint64, operand, cond uint64, dst []byte) error
}

// PutWord stores the low width bytes (4 or 8) of v into dst in the
// machine's byte order, as a fetched value is stored into the caller's
// variable.
func PutWord(dst []byte, width int, v uint64) {
	if width == 4 {
		binary.NativeEndian.PutUint32(dst, uint32(v))
		return
	}
	binary.NativeEndian.PutUint64(dst, v)
}
