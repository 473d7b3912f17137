package shmem

import (
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// Put copies src into dst's elements [0, len(src)) on PE pe (shmem_put).
// It returns when src may be reused; the data is delivered by the next
// Quiet (at once on a same-host path).
func Put[T Elem](p *PE, dst Sym[T], src []T, pe int) error {
	if m := p.fast(len(src), dst.n).Mapped(pe, dst.world, dst.slot, dst.gen); m != nil && len(src) != 0 {
		if cs := p.c.Counts(); cs != nil {
			if x := cs.Count(core.OpPut, pe, len(src)*int(elemSize[T]())); x != nil {
				return timedPut(x, m, dst.off, asBytes(src))
			}
		}
		if uint64(len(src))*elemSize[T]() == 8 && dst.off%8 == 0 {
			// One aligned word: a single store, as udma.Path.Put does it.
			m.Write64(dst.off, load8(word8(src)))
			m.RingWord(dst.off)
			return nil
		}
		return m.Put(dst.off, asBytes(src))
	}
	return put(p, dst, src, pe)
}

// put is Put the checked way, for every case but the mapped one.
func put[T Elem](p *PE, dst Sym[T], src []T, pe int) error {
	const op = "Put"
	path, off, err := dst.target(p, op, pe, 0, len(src))
	if err != nil || len(src) == 0 {
		return err
	}
	if c := p.c.Counts().Count(core.OpPut, pe, len(src)*int(elemSize[T]())); c != nil {
		return named(op, p, c.Time(func() error { return path.Put(off, asBytes(src)) }))
	}
	return named(op, p, path.Put(off, asBytes(src)))
}

// PutNBI starts a put (shmem_put_nbi); src may be reused at once, and the
// put is complete after Quiet.
func PutNBI[T Elem](p *PE, dst Sym[T], src []T, pe int) error {
	const op = "PutNBI"
	path, off, err := dst.target(p, op, pe, 0, len(src))
	if err != nil || len(src) == 0 {
		return err
	}
	if c := p.c.Counts().Count(core.OpPut, pe, len(src)*int(elemSize[T]())); c != nil {
		return named(op, p, c.Time(func() error { return path.Put(off, asBytes(src)) }))
	}
	return named(op, p, path.Put(off, asBytes(src)))
}

// Get copies src's elements [0, len(dst)) on PE pe into dst (shmem_get).
func Get[T Elem](p *PE, dst []T, src Sym[T], pe int) error {
	if m := p.fast(len(dst), src.n).Mapped(pe, src.world, src.slot, src.gen); m != nil && len(dst) != 0 {
		if cs := p.c.Counts(); cs != nil {
			if x := cs.Count(core.OpGet, pe, len(dst)*int(elemSize[T]())); x != nil {
				return timedGet(x, m, asBytes(dst), src.off)
			}
		}
		if uint64(len(dst))*elemSize[T]() == 8 && src.off%8 == 0 {
			store8(word8(dst), m.Load64(src.off))
			return nil
		}
		return m.Get(asBytes(dst), src.off)
	}
	return get(p, dst, src, pe)
}

// get is Get the checked way.
func get[T Elem](p *PE, dst []T, src Sym[T], pe int) error {
	const op = "Get"
	path, off, err := src.target(p, op, pe, 0, len(dst))
	if err != nil || len(dst) == 0 {
		return err
	}
	if c := p.c.Counts().Count(core.OpGet, pe, len(dst)*int(elemSize[T]())); c != nil {
		return named(op, p, c.Time(func() error { return path.Get(asBytes(dst), off) }))
	}
	return named(op, p, path.Get(asBytes(dst), off))
}

// GetNBI starts a get (shmem_get_nbi); dst holds the data after Quiet.
func GetNBI[T Elem](p *PE, dst []T, src Sym[T], pe int) error {
	const op = "GetNBI"
	path, off, err := src.target(p, op, pe, 0, len(dst))
	if err != nil || len(dst) == 0 {
		return err
	}
	// Timed to its return, not to the Quiet that completes it.
	if c := p.c.Counts().Count(core.OpGetNBI, pe, len(dst)*int(elemSize[T]())); c != nil {
		return named(op, p, c.Time(func() error { return path.GetNBI(asBytes(dst), off) }))
	}
	return named(op, p, path.GetNBI(asBytes(dst), off))
}

// P writes v into dst's element 0 on PE pe (shmem_p).
func P[T Elem](p *PE, dst Sym[T], v T, pe int) error {
	if m := p.fast(1, dst.n).Mapped(pe, dst.world, dst.slot, dst.gen); m != nil && elemSize[T]() == 8 && dst.off%8 == 0 {
		if cs := p.c.Counts(); cs != nil {
			if x := cs.Count(core.OpPut, pe, 8); x != nil {
				_, err := timedWord(x, m, transport.AtomicSet, dst.off, toBits(v), 0)
				return err
			}
		}
		m.Write64(dst.off, toBits(v))
		m.RingWord(dst.off)
		return nil
	}
	return pChecked(p, dst, v, pe)
}

// pChecked is P the checked way.
func pChecked[T Elem](p *PE, dst Sym[T], v T, pe int) error {
	const op = "P"
	path, off, err := dst.target(p, op, pe, 0, 1)
	if err != nil {
		return err
	}
	if c := p.c.Counts().Count(core.OpPut, pe, int(elemSize[T]())); c != nil {
		return named(op, p, c.Time(func() error { return putOne(path, off, v) }))
	}
	return named(op, p, putOne(path, off, v))
}

// putOne writes v at off through path.
func putOne[T Elem](path transport.Path, off uint64, v T) error {
	if w := int(elemSize[T]()); w >= 4 {
		// A word-sized element goes as an atomic store: no buffer to
		// allocate, and a waiter never sees it torn.
		return path.AtomicPost(transport.AtomicSet, w, off, toBits(v))
	}
	return path.Put(off, asBytes([]T{v}))
}

// G reads src's element 0 on PE pe (shmem_g).
func G[T Elem](p *PE, src Sym[T], pe int) (v T, err error) {
	if m := p.fast(1, src.n).Mapped(pe, src.world, src.slot, src.gen); m != nil && elemSize[T]() == 8 && src.off%8 == 0 {
		if cs := p.c.Counts(); cs != nil {
			if x := cs.Count(core.OpGet, pe, 8); x != nil {
				old, err := timedWord(x, m, transport.AtomicFetch, src.off, 0, 0)
				return fromBits[T](old), err
			}
		}
		return fromBits[T](m.Load64(src.off)), nil
	}
	return gChecked[T](p, src, pe)
}

// gChecked is G the checked way.
func gChecked[T Elem](p *PE, src Sym[T], pe int) (v T, err error) {
	const op = "G"
	path, off, err := src.target(p, op, pe, 0, 1)
	if err != nil {
		return v, err
	}
	if c := p.c.Counts().Count(core.OpGet, pe, int(elemSize[T]())); c != nil {
		err = c.Time(func() (err error) { v, err = getOne[T](path, off); return err })
		return v, named(op, p, err)
	}
	v, err = getOne[T](path, off)
	return v, named(op, p, err)
}

// getOne reads the element at off through path.
func getOne[T Elem](path transport.Path, off uint64) (T, error) {
	if w := int(elemSize[T]()); w >= 4 {
		bits, err := path.Atomic(transport.AtomicFetch, w, off, 0, 0)
		return fromBits[T](bits), err
	}
	buf := []T{*new(T)}
	err := path.Get(asBytes(buf), off)
	return buf[0], err
}

// IPut copies n elements src[i*srcStride] to dst[i*dstStride] on PE pe
// (shmem_iput). Strides are in elements and at least 1.
func IPut[T Elem](p *PE, dst Sym[T], src []T, dstStride, srcStride, n, pe int) error {
	const op = "IPut"
	if err := strided(p, op, pe, dst.n, len(src), dstStride, srcStride, n); err != nil {
		return err
	}
	path, off, err := dst.target(p, op, pe, 0, dst.n)
	if err != nil || n == 0 {
		return err
	}
	if c := p.c.Counts().Count(core.OpPut, pe, n*int(elemSize[T]())); c != nil {
		return named(op, p, c.Time(func() error { return iput(path, off, src, dstStride, srcStride, n) }))
	}
	return named(op, p, iput(path, off, src, dstStride, srcStride, n))
}

// iput puts n strided elements through path, dst's at off.
func iput[T Elem](path transport.Path, off uint64, src []T, dstStride, srcStride, n int) error {
	size := elemSize[T]()
	for i := 0; i < n; i++ {
		if err := path.Put(off+uint64(i*dstStride)*size, asBytes(src[i*srcStride:i*srcStride+1])); err != nil {
			return err
		}
	}
	return nil
}

// IGet copies n elements src[i*srcStride] on PE pe to dst[i*dstStride]
// (shmem_iget). Strides are in elements and at least 1.
func IGet[T Elem](p *PE, dst []T, src Sym[T], dstStride, srcStride, n, pe int) error {
	const op = "IGet"
	if err := strided(p, op, pe, src.n, len(dst), srcStride, dstStride, n); err != nil {
		return err
	}
	path, off, err := src.target(p, op, pe, 0, src.n)
	if err != nil || n == 0 {
		return err
	}
	if c := p.c.Counts().Count(core.OpGet, pe, n*int(elemSize[T]())); c != nil {
		return named(op, p, c.Time(func() error { return iget(path, off, dst, dstStride, srcStride, n) }))
	}
	return named(op, p, iget(path, off, dst, dstStride, srcStride, n))
}

// iget gets n strided elements through path, src's at off.
func iget[T Elem](path transport.Path, off uint64, dst []T, dstStride, srcStride, n int) error {
	size := elemSize[T]()
	for i := 0; i < n; i++ {
		if err := path.Get(asBytes(dst[i*dstStride:i*dstStride+1]), off+uint64(i*srcStride)*size); err != nil {
			return err
		}
	}
	return nil
}

// strided checks that n strided elements fit in a symmetric object of symLen
// and a local slice of localLen.
func strided(p *PE, op string, pe, symLen, localLen, symStride, localStride, n int) error {
	if n < 0 || symStride < 1 || localStride < 1 {
		return errs.New(op, p.MyPE(), pe, errs.ErrInvalidArgument, "count %d, strides %d and %d (count >= 0, strides >= 1)", n, symStride, localStride)
	}
	if n > 0 && ((n-1) > (symLen-1)/symStride || (n-1) > (localLen-1)/localStride || symLen == 0 || localLen == 0) {
		return errs.New(op, p.MyPE(), pe, errs.ErrInvalidArgument, "%d elements at strides %d/%d overrun lengths %d/%d", n, symStride, localStride, symLen, localLen)
	}
	return nil
}

// PutSignal copies src into dst on PE pe and then updates sig's element 0
// there with value and op (shmem_put_signal): a PE that sees the signal
// sees the data.
func PutSignal[T Elem](p *PE, dst Sym[T], src []T, sig Sym[uint64], value uint64, op SignalOp, pe int) error {
	return putSignal(p, "PutSignal", dst, src, sig, value, op, pe)
}

// PutSignalNBI is PutSignal that completes at Quiet (shmem_put_signal_nbi).
func PutSignalNBI[T Elem](p *PE, dst Sym[T], src []T, sig Sym[uint64], value uint64, op SignalOp, pe int) error {
	return putSignal(p, "PutSignalNBI", dst, src, sig, value, op, pe)
}

func putSignal[T Elem](p *PE, name string, dst Sym[T], src []T, sig Sym[uint64], value uint64, op SignalOp, pe int) error {
	if op != SignalSet && op != SignalAdd {
		return errs.New(name, p.MyPE(), pe, errs.ErrInvalidArgument, "signal op %d", op)
	}
	path, off, err := dst.target(p, name, pe, 0, len(src))
	if err != nil {
		return err
	}
	sigOff, err := sig.check(p, name, pe, 0, 1)
	if err != nil && sig.slot == staticsSlot {
		_, sigOff, err = sig.staticsTarget(p, name, pe, 0, 1)
	}
	if err == nil && (dst.slot == staticsSlot) != (sig.slot == staticsSlot) {
		err = oneRegionPath(p, name, pe)
	}
	if err != nil {
		return err
	}
	// The data and the 8-byte signal word.
	if c := p.c.Counts().Count(core.OpPutSignal, pe, len(src)*int(elemSize[T]())+8); c != nil {
		return named(name, p, c.Time(func() error { return path.PutSignal(off, asBytes(src), sigOff, value, transport.SignalOp(op)) }))
	}
	return named(name, p, path.PutSignal(off, asBytes(src), sigOff, value, transport.SignalOp(op)))
}

// SignalFetch returns the value of the caller's own sig element 0
// (shmem_signal_fetch); it is 0 for an invalid Sym.
func SignalFetch(p *PE, sig Sym[uint64]) uint64 {
	off, err := sig.checkLocal(p, "SignalFetch", 0, 1)
	if err != nil {
		return 0
	}
	p.c.Poll() // polled in loops, as Test is
	p.c.Missed()
	return transport.Load64(p.c.Local(), off)
}

// SignalWaitUntil waits until the caller's sig element 0 compares true
// with v and returns its value then (shmem_signal_wait_until).
func SignalWaitUntil(p *PE, sig Sym[uint64], cmp Cmp, v uint64) (uint64, error) {
	const op = "SignalWaitUntil"
	if !cmp.valid() {
		return 0, errs.New(op, p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "comparison %d", cmp)
	}
	off, err := sig.checkLocal(p, op, 0, 1)
	if err != nil {
		return 0, err
	}
	local := p.c.Local()
	var seen uint64
	err = p.c.WaitWord(p.waitContext(), op, off, func() bool {
		seen = transport.Load64(local, off)
		return compare(seen, cmp, v)
	})
	return seen, err
}

// named returns a path's error as the failure of the caller's op: the
// transports name their own operations (AtomicPost for AtomicAdd, Put for
// P or IPut), which the caller did not call. Off the error path it is a
// nil test, inlined.
func named(op string, p *PE, err error) error {
	if err != nil {
		return errs.As(op, p.c.MyPE(), err)
	}
	return nil
}
