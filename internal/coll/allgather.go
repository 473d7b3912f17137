package coll

import (
	"encoding/binary"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/transport"
)

// smallGather is the total size up to which allgathers use Bruck's
// algorithm (log2 n rounds, latency-bound messages); above it they use the
// ring (n-1 rounds, each member sends and receives one block a round, which
// is bandwidth-optimal).
const smallGather = 64 << 10

// FCollect concatenates every member's nbytes at srcOff into dstOff on
// every member, in team order (shmem_fcollect, allgather).
func (t *Team) FCollect(a Args, dstOff, srcOff uint64, nbytes int) error {
	return named("FCollect", t.fcollect(a, dstOff, srcOff, nbytes))
}

// fcollect is FCollect, its errors as its steps returned them (see named).
func (t *Team) fcollect(a Args, dstOff, srcOff uint64, nbytes int) (err error) {
	const op = "FCollect"
	seq, end, err := t.lockedBegin(op, &a)
	defer end.unlock(&err)
	if err != nil || nbytes == 0 {
		return err
	}
	off, ln := t.buf.off, t.buf.ln
	for j := range off {
		off[j], ln[j] = j*nbytes, nbytes
	}
	local := t.local
	mine := dstOff + uint64(off[t.me])
	copy(local[mine:mine+uint64(nbytes)], local[srcOff:srcOff+uint64(nbytes)])
	_, err = t.allgatherv(op, seq, 0, dstOff, off, ln)
	return err
}

// Collect is FCollect where members contribute different sizes (zero
// included): the members first allgather their sizes (8 bytes each, Bruck)
// into the slot's count words, then the data at the offsets the sizes give.
// dstBytes is the destination's size; a total above it fails on every
// member (they all compute the same total).
func (t *Team) Collect(a Args, dstOff uint64, dstBytes int, srcOff uint64, nbytes int) error {
	return named("Collect", t.collect(a, dstOff, dstBytes, srcOff, nbytes))
}

// collect is Collect, its errors as its steps returned them (see named).
func (t *Team) collect(a Args, dstOff uint64, dstBytes int, srcOff uint64, nbytes int) (err error) {
	const op = "Collect"
	seq, end, err := t.lockedBegin(op, &a)
	defer end.unlock(&err)
	if err != nil {
		return err
	}
	local := t.local
	cw := t.l.counts
	binary.LittleEndian.PutUint64(local[cw+uint64(8*t.me):], uint64(nbytes))
	off, ln := t.buf.off, t.buf.ln
	for j := range off {
		off[j], ln[j] = 8*j, 8
	}
	steps, err := t.allgatherv(op, seq, 0, cw, off, ln)
	if err != nil {
		return err
	}
	total := 0
	for j := range off {
		c := binary.LittleEndian.Uint64(local[cw+uint64(8*j):])
		if c > uint64(dstBytes) || total+int(c) > dstBytes {
			return t.collectOverflow(op, cw, dstBytes, a.Elem)
		}
		off[j], ln[j] = total, int(c)
		total += int(c)
	}
	mine := dstOff + uint64(off[t.me])
	copy(local[mine:mine+uint64(nbytes)], local[srcOff:srcOff+uint64(nbytes)])
	if total == 0 {
		return nil
	}
	_, err = t.allgatherv(op, seq, steps, dstOff, off, ln)
	return err
}

// allgatherv spreads block j (ln[j] bytes at base+off[j], blocks laid out
// in order, back to back) from member j to the same place on every member;
// each member's own block is in place already. Signals use steps after
// step0; it returns how many it used.
func (t *Team) allgatherv(op string, seq uint64, step0 int, base uint64, off, ln []int) (int, error) {
	n := len(t.members)
	if n == 1 {
		return 0, nil
	}
	t.rt.Fence() // Collect's second pass signals the same members as its first
	total := off[n-1] + ln[n-1]
	if total <= smallGather {
		return t.bruck(op, seq, step0, base, off, ln)
	}
	return t.ring(op, seq, step0, base, off, ln)
}

// bruck runs Bruck's allgather without its final rotation: in round k a
// member holds blocks me..me+2^k-1 (mod n) and sends them to member
// me-2^k, which lacks exactly those. Blocks keep their absolute places in
// the destination, so a round's send is one range, or two where it wraps.
// Any n works; ceil(log2 n) rounds.
func (t *Team) bruck(op string, seq uint64, step0 int, base uint64, off, ln []int) (int, error) {
	n := len(t.members)
	local := t.local
	end := func(j int) int { return off[j] + ln[j] }
	k := 0
	for d := 1; d < n; d, k = d<<1, k+1 {
		cnt := min(d, n-d)
		to := (t.me - d + n) % n
		path, err := t.rt.Path(op, t.members[to])
		if err != nil {
			return k, err
		}
		first, last := t.me, t.me+cnt-1
		var ranges [2][2]int
		nr := 1
		if last < n {
			ranges[0] = [2]int{off[first], end(last)}
		} else {
			ranges[0] = [2]int{off[first], end(n - 1)}
			ranges[1] = [2]int{off[0], end(last - n)}
			nr = 2
		}
		for i := 0; i < nr; i++ {
			lo, hi := base+uint64(ranges[i][0]), base+uint64(ranges[i][1])
			if i < nr-1 {
				if err := path.Put(lo, local[lo:hi]); err != nil {
					return k, err
				}
				t.rt.Fence()
				continue
			}
			if err := path.PutSignal(lo, local[lo:hi], t.sigWord(t.me), enc(seq, step0+k+1), transport.SignalSet); err != nil {
				return k, err
			}
		}
		if err := t.waitFrom(op, (t.me+d)%n, seq, step0+k+1); err != nil {
			return k, err
		}
	}
	return k, nil
}

// ring runs the ring allgather: in round s a member sends block me-s to
// the member after it and receives block me-1-s from the one before.
func (t *Team) ring(op string, seq uint64, step0 int, base uint64, off, ln []int) (int, error) {
	n := len(t.members)
	local := t.local
	right, left := (t.me+1)%n, (t.me-1+n)%n
	for s := 0; s < n-1; s++ {
		b := (t.me - s + n) % n
		lo, hi := base+uint64(off[b]), base+uint64(off[b]+ln[b])
		if err := t.putSig(op, right, lo, local[lo:hi], enc(seq, step0+s+1)); err != nil {
			return s, err
		}
		if err := t.waitFrom(op, left, seq, step0+s+1); err != nil {
			return s, err
		}
	}
	return n - 1, nil
}

// collectOverflow is Collect's refusal of contributions, read from the
// count words at cw, that overflow the destination of dstBytes: in
// elements of elem bytes, as the other collectives count, and naming no
// peer, since no peer failed.
func (t *Team) collectOverflow(op string, cw uint64, dstBytes, elem int) error {
	var sum uint64
	for j := range t.members {
		sum += binary.LittleEndian.Uint64(t.local[cw+uint64(8*j):])
	}
	elem = max(elem, 1)
	return errs.New(op, t.rt.MyPE(), errs.NoPE, errs.ErrInvalidArgument,
		"the members' contributions, %d elements in all, exceed the destination's %d elements", sum/uint64(elem), dstBytes/elem)
}
