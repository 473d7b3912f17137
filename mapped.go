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
// dependency's body only when this package inlined it itself. Without
// wordCounted's Write64 and le64's binary call, Put, P and AtomicSet
// called both out of line (go tool objdump -s 'shmem.Put\[go.shape').

// putCounted is a mapped Put with metrics on: counted, one in
// SampleEvery timed. Apart from Put so that the common case, without
// metrics, tests one pointer and builds no closure.
func putCounted(cs *core.Counts, pe int, m mappedPath, off uint64, b []byte) error {
	if x := cs.Count(core.OpPut, pe, len(b)); x != nil {
		return x.Time(func() error { return m.Put(off, b) })
	}
	if len(b) == 8 && off%8 == 0 {
		m.Write64(off, le64((*[8]byte)(b)))
		m.Ring()
		return nil
	}
	return m.Put(off, b)
}

// getCounted is putCounted for Get.
func getCounted(cs *core.Counts, pe int, m mappedPath, b []byte, off uint64) error {
	if x := cs.Count(core.OpGet, pe, len(b)); x != nil {
		return x.Time(func() error { return m.Get(b, off) })
	}
	if len(b) == 8 && off%8 == 0 {
		putLE64((*[8]byte)(b), m.Load64(off))
		return nil
	}
	return m.Get(b, off)
}

// wordCounted is a mapped 8-byte word operation (P, G and the atomics)
// with metrics on, counted as kind: the word operations inlined as on
// the path without metrics, the one in SampleEvery timed through the
// path's Atomic (which rings).
func wordCounted(cs *core.Counts, kind core.MeterOp, pe int, m mappedPath, op transport.AtomicOp, off, v, cond uint64) (old uint64, err error) {
	if x := cs.Count(kind, pe, 8); x != nil {
		err = x.Time(func() (err error) { old, err = m.Atomic(op, 8, off, v, cond); return err })
		return old, err
	}
	switch op {
	case transport.AtomicFetch:
		return m.Load64(off), nil
	case transport.AtomicSet:
		m.Write64(off, v)
	case transport.AtomicFetchAdd:
		old = m.FetchAdd64(off, v)
	case transport.AtomicCompareSwap:
		old = m.CompareSwap64(off, cond, v)
	default:
		return m.Atomic(op, 8, off, v, cond)
	}
	m.Ring()
	return old, nil
}

// word8 views the first 8 bytes of v, which holds exactly 8, as an array:
// no bounds check left for le64 and putLE64.
func word8[T Elem](v []T) *[8]byte { return (*[8]byte)(unsafe.Pointer(unsafe.SliceData(v))) }

// le64 and putLE64 are the 8-byte put's and get's conversions, as
// udma.Path.Put and Get do them.
func le64(b *[8]byte) uint64 { return binary.LittleEndian.Uint64(b[:]) }

func putLE64(b *[8]byte, v uint64) { binary.LittleEndian.PutUint64(b[:], v) }
