package shmem

import (
	"encoding/binary"
	"unsafe"

	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/transport"
)

// The mapped fast paths' helpers that are not generic (see fast).
//
// They are not generic for a second reason: the compiler inlines a
// function of another package into an instantiation of a generic
// operation (compiled in the package that instantiates it, shmem-perf or
// a user's) only when it exports the function's body, and it exports a
// dependency's body only when this package inlined it itself, in code
// that is not generic (see exportInlineBodies).

// exportInlineBodies is never called. It inlines, once, each function of
// core and udma that the generic operations' mapped paths call, so that
// the compiler exports their bodies with this package and a user's
// instantiation of Put, G or AtomicCompareSwap inlines them too. Without
// it every such call stayed a call in the user's binary: core.PE.Mapped,
// PE.Counts, Counts.Count and the word operation, four calls on a
// 10-nanosecond atomic (go tool objdump -s 'shmem.AtomicCompareSwap\[go.shape').
// TestFastPathsInline checks the machine code of testdata/inlined.
func exportInlineBodies(p *core.PE, m mappedPath) uint64 {
	_ = p.Mapped(0, 0, 0, 0)
	_ = p.Counts().Count(core.OpPut, 0, 0)
	m.Write64(0, 0)
	m.RingWord(0)
	return m.Load64(0) + m.FetchAdd64(0, 0) + m.CompareSwap64(0, 0, 0)
}

// timedPut, timedGet and timedWord are the mapped operations the
// metrics time (one in SampleEvery at level 1): apart from the generic
// operations, which count inline, so that those build no closure.
func timedPut(x *core.Cell, m mappedPath, off uint64, b []byte) error {
	return x.Time(func() error { return m.Put(off, b) })
}

func timedGet(x *core.Cell, m mappedPath, b []byte, off uint64) error {
	return x.Time(func() error { return m.Get(b, off) })
}

// timedWord goes through the path's Atomic (which rings), a store through
// Write64 and RingWord.
func timedWord(x *core.Cell, m mappedPath, op transport.AtomicOp, off, v, cond uint64) (old uint64, err error) {
	err = x.Time(func() (err error) {
		if op == transport.AtomicSet {
			m.Write64(off, v)
			m.RingWord(off)
			return nil
		}
		old, err = m.Atomic(op, 8, off, v, cond)
		return err
	})
	return old, err
}

// word8 views the first 8 bytes of v, which holds exactly 8, as an array:
// no bounds check left for load8 and store8.
func word8[T Elem](v []T) *[8]byte { return (*[8]byte)(unsafe.Pointer(unsafe.SliceData(v))) }

// load8 and store8 are the 8-byte put's and get's conversions between
// bytes and the word Write64 and Load64 move: in the machine's order, so
// that the bytes land as they were.
func load8(b *[8]byte) uint64 { return binary.NativeEndian.Uint64(b[:]) }

func store8(b *[8]byte, v uint64) { binary.NativeEndian.PutUint64(b[:], v) }
