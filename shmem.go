package shmem

import (
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
)

// The error sentinels; every error of the package matches one with errors.Is.
var (
	ErrInvalidArgument = errs.ErrInvalidArgument // bad PE, range, Sym, or mismatched collective
	ErrOutOfMemory     = errs.ErrOutOfMemory     // symmetric heap or team resources exhausted
	ErrPEFailed        = errs.ErrPEFailed        // a PE the operation needs died or left
	ErrTimeout         = errs.ErrTimeout         // a bounded wait ran out
	ErrFinalized       = errs.ErrFinalized       // the PE was finalized or the world ended
	ErrBootstrap       = errs.ErrBootstrap       // the world could not be formed
	ErrTLS             = errs.ErrTLS             // a peer failed authentication
	ErrDeadlock        = errs.ErrDeadlock        // no PE of the world can make progress (simulator)
)

// ExitStatus reports the status of the GlobalExit that ended the world err
// comes from.
func ExitStatus(err error) (status int, ok bool) { return core.ExitStatus(err) }

// Elem is what may live in symmetric memory.
type Elem interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~int | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uint | ~float32 | ~float64
}

// Integer is what atomics, WaitUntil and bitwise reductions accept.
type Integer interface {
	~int32 | ~int64 | ~int | ~uint32 | ~uint64 | ~uint
}

// AtomicValue is what AtomicFetch, AtomicSet and AtomicSwap accept.
type AtomicValue interface {
	Integer | ~float32 | ~float64
}

// Cmp is a comparison for the wait and test calls.
type Cmp int

// The comparisons of OpenSHMEM's SHMEM_CMP_*.
const (
	CmpEQ Cmp = iota + 1
	CmpNE
	CmpGT
	CmpGE
	CmpLT
	CmpLE
)

func (c Cmp) valid() bool { return c >= CmpEQ && c <= CmpLE }

func compare[T Elem](a T, c Cmp, b T) bool {
	switch c {
	case CmpEQ:
		return a == b
	case CmpNE:
		return a != b
	case CmpGT:
		return a > b
	case CmpGE:
		return a >= b
	case CmpLT:
		return a < b
	case CmpLE:
		return a <= b
	}
	return false
}

// SignalOp is how PutSignal combines its value with the signal word.
type SignalOp int

// The signal operations of OpenSHMEM's SHMEM_SIGNAL_*.
const (
	SignalSet SignalOp = iota + 1
	SignalAdd
)

// Op is a reduction operator.
type Op int

// The reduction operators. And, Or and Xor take integers only.
const (
	OpSum Op = iota + 1
	OpProd
	OpMin
	OpMax
	OpAnd
	OpOr
	OpXor
)

// The version of the OpenSHMEM specification goshmem follows.
const (
	MajorVersion = 1
	MinorVersion = 5
	VendorString = "goshmem"
)

// InfoGetVersion returns the OpenSHMEM specification version implemented.
func InfoGetVersion() (major, minor int) { return MajorVersion, MinorVersion }

// InfoGetName returns the implementation's name.
func InfoGetName() string { return VendorString }
