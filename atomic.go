package shmem

import (
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// amo performs one atomic on element 0 of dst at PE pe and returns the
// element's previous value.
func amo[T AtomicValue](p *PE, name string, dst Sym[T], op transport.AtomicOp, v, cond T, pe int) (T, error) {
	var zero T
	w := elemSize[T]()
	if m := p.fast(1, dst.n).Mapped(pe, dst.world, dst.slot, dst.gen); m != nil && dst.off%w == 0 {
		// The mapped path called directly: the operations without a word
		// fast path, and elements that are not 8-byte words, come here.
		var old uint64
		var err error
		if x := p.c.Counts().Count(core.OpAtomicFetch, pe, int(w)); x != nil {
			err = x.Time(func() (err error) { old, err = m.Atomic(op, int(w), dst.off, toBits(v), toBits(cond)); return err })
		} else {
			old, err = m.Atomic(op, int(w), dst.off, toBits(v), toBits(cond))
		}
		return fromBits[T](old), err
	}
	path, off, err := dst.target(p, name, pe, 0, 1)
	if err != nil {
		return zero, err
	}
	if off%w != 0 {
		return zero, errs.New(name, p.MyPE(), pe, errs.ErrInvalidArgument, "misaligned %d-byte atomic at offset %d", w, off)
	}
	if c := p.c.Counts().Count(core.OpAtomicFetch, pe, int(w)); c != nil {
		var old uint64
		err = c.Time(func() (err error) { old, err = path.Atomic(op, int(w), off, toBits(v), toBits(cond)); return err })
		return fromBits[T](old), named(name, p, err)
	}
	old, err := path.Atomic(op, int(w), off, toBits(v), toBits(cond))
	return fromBits[T](old), named(name, p, err)
}

// amoPost performs one non-fetching atomic; it completes by the next Quiet.
func amoPost[T AtomicValue](p *PE, name string, dst Sym[T], op transport.AtomicOp, v T, pe int) error {
	w := elemSize[T]()
	if m := p.fast(1, dst.n).Mapped(pe, dst.world, dst.slot, dst.gen); m != nil && dst.off%w == 0 {
		if x := p.c.Counts().Count(core.OpAtomicPost, pe, int(w)); x != nil {
			return x.Time(func() error { return m.AtomicPost(op, int(w), dst.off, toBits(v)) })
		}
		return m.AtomicPost(op, int(w), dst.off, toBits(v))
	}
	path, off, err := dst.target(p, name, pe, 0, 1)
	if err != nil {
		return err
	}
	if off%w != 0 {
		return errs.New(name, p.MyPE(), pe, errs.ErrInvalidArgument, "misaligned %d-byte atomic at offset %d", w, off)
	}
	if c := p.c.Counts().Count(core.OpAtomicPost, pe, int(w)); c != nil {
		return named(name, p, c.Time(func() error { return path.AtomicPost(op, int(w), off, toBits(v)) }))
	}
	return named(name, p, path.AtomicPost(op, int(w), off, toBits(v)))
}

// word reports whether an element of T at off is an aligned 8-byte word,
// which the mapped fast paths of the atomics handle (udma.Path's word
// operations): others, and every misaligned one (refused), take amo's way.
func word[T AtomicValue](off uint64) bool { return elemSize[T]() == 8 && off%8 == 0 }

// AtomicFetch atomically reads src's element 0 on PE pe.
func AtomicFetch[T AtomicValue](p *PE, src Sym[T], pe int) (T, error) {
	if m := p.fast(1, src.n).Mapped(pe, src.world, src.slot, src.gen); m != nil && word[T](src.off) {
		if cs := p.c.Counts(); cs != nil {
			if x := cs.Count(core.OpAtomicFetch, pe, 8); x != nil {
				old, err := timedWord(x, m, transport.AtomicFetch, src.off, 0, 0)
				return fromBits[T](old), err
			}
		}
		return fromBits[T](m.Load64(src.off)), nil
	}
	return amo(p, "AtomicFetch", src, transport.AtomicFetch, 0, 0, pe)
}

// AtomicSet atomically writes v to dst's element 0 on PE pe.
func AtomicSet[T AtomicValue](p *PE, dst Sym[T], v T, pe int) error {
	if m := p.fast(1, dst.n).Mapped(pe, dst.world, dst.slot, dst.gen); m != nil && word[T](dst.off) {
		if cs := p.c.Counts(); cs != nil {
			if x := cs.Count(core.OpAtomicPost, pe, 8); x != nil {
				_, err := timedWord(x, m, transport.AtomicSet, dst.off, toBits(v), 0)
				return err
			}
		}
		m.Write64(dst.off, toBits(v))
		m.RingWord(dst.off)
		return nil
	}
	return amoPost(p, "AtomicSet", dst, transport.AtomicSet, v, pe)
}

// AtomicSwap writes v and returns the previous value.
func AtomicSwap[T AtomicValue](p *PE, dst Sym[T], v T, pe int) (T, error) {
	return amo(p, "AtomicSwap", dst, transport.AtomicSwap, v, 0, pe)
}

// AtomicCompareSwap writes v if the element equals cond, and returns the
// previous value either way.
func AtomicCompareSwap[T Integer](p *PE, dst Sym[T], cond, v T, pe int) (T, error) {
	if m := p.fast(1, dst.n).Mapped(pe, dst.world, dst.slot, dst.gen); m != nil && word[T](dst.off) {
		if cs := p.c.Counts(); cs != nil {
			if x := cs.Count(core.OpAtomicFetch, pe, 8); x != nil {
				old, err := timedWord(x, m, transport.AtomicCompareSwap, dst.off, toBits(v), toBits(cond))
				return fromBits[T](old), err
			}
		}
		old := m.CompareSwap64(dst.off, toBits(cond), toBits(v))
		m.RingWord(dst.off)
		return fromBits[T](old), nil
	}
	return amo(p, "AtomicCompareSwap", dst, transport.AtomicCompareSwap, v, cond, pe)
}

// AtomicFetchInc adds one and returns the previous value.
func AtomicFetchInc[T Integer](p *PE, dst Sym[T], pe int) (T, error) {
	if m := p.fast(1, dst.n).Mapped(pe, dst.world, dst.slot, dst.gen); m != nil && word[T](dst.off) {
		if cs := p.c.Counts(); cs != nil {
			if x := cs.Count(core.OpAtomicFetch, pe, 8); x != nil {
				old, err := timedWord(x, m, transport.AtomicFetchAdd, dst.off, 1, 0)
				return fromBits[T](old), err
			}
		}
		old := m.FetchAdd64(dst.off, 1)
		m.RingWord(dst.off)
		return fromBits[T](old), nil
	}
	return amo(p, "AtomicFetchInc", dst, transport.AtomicFetchAdd, 1, 0, pe)
}

// AtomicInc adds one.
func AtomicInc[T Integer](p *PE, dst Sym[T], pe int) error {
	if m := p.fast(1, dst.n).Mapped(pe, dst.world, dst.slot, dst.gen); m != nil && word[T](dst.off) {
		if cs := p.c.Counts(); cs != nil {
			if x := cs.Count(core.OpAtomicPost, pe, 8); x != nil {
				_, err := timedWord(x, m, transport.AtomicFetchAdd, dst.off, 1, 0)
				return err
			}
		}
		m.FetchAdd64(dst.off, 1)
		m.RingWord(dst.off)
		return nil
	}
	return amoPost(p, "AtomicInc", dst, transport.AtomicFetchAdd, 1, pe)
}

// AtomicFetchAdd adds v (wrapping) and returns the previous value.
func AtomicFetchAdd[T Integer](p *PE, dst Sym[T], v T, pe int) (T, error) {
	if m := p.fast(1, dst.n).Mapped(pe, dst.world, dst.slot, dst.gen); m != nil && word[T](dst.off) {
		if cs := p.c.Counts(); cs != nil {
			if x := cs.Count(core.OpAtomicFetch, pe, 8); x != nil {
				old, err := timedWord(x, m, transport.AtomicFetchAdd, dst.off, toBits(v), 0)
				return fromBits[T](old), err
			}
		}
		old := m.FetchAdd64(dst.off, toBits(v))
		m.RingWord(dst.off)
		return fromBits[T](old), nil
	}
	return amo(p, "AtomicFetchAdd", dst, transport.AtomicFetchAdd, v, 0, pe)
}

// AtomicAdd adds v (wrapping).
func AtomicAdd[T Integer](p *PE, dst Sym[T], v T, pe int) error {
	if m := p.fast(1, dst.n).Mapped(pe, dst.world, dst.slot, dst.gen); m != nil && word[T](dst.off) {
		if cs := p.c.Counts(); cs != nil {
			if x := cs.Count(core.OpAtomicPost, pe, 8); x != nil {
				_, err := timedWord(x, m, transport.AtomicFetchAdd, dst.off, toBits(v), 0)
				return err
			}
		}
		m.FetchAdd64(dst.off, toBits(v))
		m.RingWord(dst.off)
		return nil
	}
	return amoPost(p, "AtomicAdd", dst, transport.AtomicFetchAdd, v, pe)
}

// AtomicFetchAnd ands v in and returns the previous value.
func AtomicFetchAnd[T Integer](p *PE, dst Sym[T], v T, pe int) (T, error) {
	return amo(p, "AtomicFetchAnd", dst, transport.AtomicFetchAnd, v, 0, pe)
}

// AtomicAnd ands v in.
func AtomicAnd[T Integer](p *PE, dst Sym[T], v T, pe int) error {
	return amoPost(p, "AtomicAnd", dst, transport.AtomicFetchAnd, v, pe)
}

// AtomicFetchOr ors v in and returns the previous value.
func AtomicFetchOr[T Integer](p *PE, dst Sym[T], v T, pe int) (T, error) {
	return amo(p, "AtomicFetchOr", dst, transport.AtomicFetchOr, v, 0, pe)
}

// AtomicOr ors v in.
func AtomicOr[T Integer](p *PE, dst Sym[T], v T, pe int) error {
	return amoPost(p, "AtomicOr", dst, transport.AtomicFetchOr, v, pe)
}

// AtomicFetchXor xors v in and returns the previous value.
func AtomicFetchXor[T Integer](p *PE, dst Sym[T], v T, pe int) (T, error) {
	return amo(p, "AtomicFetchXor", dst, transport.AtomicFetchXor, v, 0, pe)
}

// AtomicXor xors v in.
func AtomicXor[T Integer](p *PE, dst Sym[T], v T, pe int) error {
	return amoPost(p, "AtomicXor", dst, transport.AtomicFetchXor, v, pe)
}
