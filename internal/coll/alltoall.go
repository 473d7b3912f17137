package coll

import (
	"github.com/goshmem/shmem/transport"
)

// Alltoall sends block j (nbytes at srcOff+j*nbytes) of every member to
// member j, which stores it at dstOff+i*nbytes for sender i
// (shmem_alltoall). Each member puts its n-1 blocks straight into their
// destinations, starting with the member after it so that the members'
// puts spread over the team instead of converging on one, then waits for
// the n-1 signals addressed to it: n-1 messages per member, the minimum
// for personalized exchange.
func (t *Team) Alltoall(a Args, dstOff, srcOff uint64, nbytes int) error {
	return named("Alltoall", t.alltoall(a, dstOff, srcOff, nbytes))
}

// alltoall is Alltoall, its errors as its steps returned them (see named).
func (t *Team) alltoall(a Args, dstOff, srcOff uint64, nbytes int) (err error) {
	const op = "Alltoall"
	seq, end, err := t.lockedBegin(op, &a)
	defer end.unlock(&err)
	if err != nil || nbytes == 0 {
		return err
	}
	n, me, m := len(t.members), t.me, uint64(nbytes)
	local := t.local
	copy(local[dstOff+uint64(me)*m:dstOff+uint64(me+1)*m], local[srcOff+uint64(me)*m:srcOff+uint64(me+1)*m])
	for s := 1; s < n; s++ {
		j := (me + s) % n
		src := local[srcOff+uint64(j)*m : srcOff+uint64(j+1)*m]
		if err := t.putSig(op, j, dstOff+uint64(me)*m, src, enc(seq, 1)); err != nil {
			return err
		}
	}
	return t.waitAll(op, seq, 1)
}

// waitAll waits for every other member's signal to reach step.
func (t *Team) waitAll(op string, seq uint64, step int) error {
	n := len(t.members)
	for s := 1; s < n; s++ {
		if err := t.waitFrom(op, (t.me-s+n)%n, seq, step); err != nil {
			return err
		}
	}
	return nil
}

// Alltoalls is Alltoall with strides (shmem_alltoalls): element k of the
// block for member j is the source element at a.SStride*(j*count+k), and
// lands at a.DStride*(i*count+k) of member j's destination for sender i;
// elements between strided places are left untouched. A block whose
// destination stride is 1 is one put (see putPacked); otherwise each
// element is its own put, fenced before the signal.
func (t *Team) Alltoalls(a Args, dstOff, srcOff uint64) error {
	return named("Alltoalls", t.alltoalls(a, dstOff, srcOff))
}

// alltoalls is Alltoalls, its errors as its steps returned them (see named).
func (t *Team) alltoalls(a Args, dstOff, srcOff uint64) (err error) {
	const op = "Alltoalls"
	seq, end, err := t.lockedBegin(op, &a)
	defer end.unlock(&err)
	if err != nil || a.Count == 0 {
		return err
	}
	n, me, e := len(t.members), t.me, a.Elem
	cnt, ds, ss := a.Count, a.DStride, a.SStride
	local := t.local
	srcAt := func(j, k int) []byte {
		o := srcOff + uint64(e*ss*(j*cnt+k))
		return local[o : o+uint64(e)]
	}
	dstAt := func(i, k int) uint64 { return dstOff + uint64(e*ds*(i*cnt+k)) }
	for k := 0; k < cnt; k++ {
		o := dstAt(me, k)
		copy(local[o:o+uint64(e)], srcAt(me, k))
	}
	for s := 1; s < n; s++ {
		j := (me + s) % n
		path, err := t.rt.Path(op, t.members[j])
		if err != nil {
			return err
		}
		if ds == 1 {
			if err := t.putPacked(path, dstAt(me, 0), srcOff+uint64(e*ss*j*cnt), e, ss, cnt, enc(seq, 1)); err != nil {
				return err
			}
			continue
		}
		for k := 0; k < cnt; k++ {
			if err := path.Put(dstAt(me, k), srcAt(j, k)); err != nil {
				return err
			}
		}
		t.rt.Fence()
		if err := path.PutSignal(dstAt(me, 0), nil, t.sigWord(me), enc(seq, 1), transport.SignalSet); err != nil {
			return err
		}
	}
	return t.waitAll(op, seq, 1)
}

// putPacked sends cnt elements of e bytes, taken at stride ss (in
// elements) from src in this member's heap, to consecutive places from dst
// on path's member, and then sets this member's signal word there to sig.
// A contiguous source (ss 1) is one put as it lies; a strided one is
// packed into the team's buffer, in pieces of at most packMax bytes, so
// that the buffer, made once, serves every call.
func (t *Team) putPacked(path transport.Path, dst, src uint64, e, ss, cnt int, sig uint64) error {
	local := t.local
	if ss == 1 {
		return path.PutSignal(dst, local[src:src+uint64(e*cnt)], t.sigWord(t.me), sig, transport.SignalSet)
	}
	per := max(1, packMax/e) // elements a piece
	if need := min(cnt, per) * e; cap(t.buf.pack) < need {
		t.buf.pack = make([]byte, 0, need)
	}
	for k0 := 0; k0 < cnt; k0 += per {
		k1 := min(cnt, k0+per)
		pack := t.buf.pack[:0]
		for k := k0; k < k1; k++ {
			o := src + uint64(e*ss*k)
			pack = append(pack, local[o:o+uint64(e)]...)
		}
		at := dst + uint64(e*k0)
		if k1 < cnt {
			if err := path.Put(at, pack); err != nil {
				return err
			}
			continue
		}
		if k0 > 0 {
			t.rt.Fence() // the pieces before land before the signal
		}
		if err := path.PutSignal(at, pack, t.sigWord(t.me), sig, transport.SignalSet); err != nil {
			return err
		}
	}
	return nil
}
