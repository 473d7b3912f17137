package simnet

import (
	"slices"

	"github.com/goshmem/shmem/transport"
)

type opKind uint8

const (
	kPut       opKind = iota + 1 // Put, PutNBI
	kAtomic                      // non-fetching atomic (AtomicPost)
	kPutSignal                   // data, then signal: one landing
	kGetNBI                      // read at a moment of its choosing, handed over at Quiet
)

// op is one operation in flight from src to PE to.
type op struct {
	kind    opKind
	src     *pe
	to      int32
	off     uint64
	buf     []byte // put data (a copy: the caller may reuse its buffer), or what a GetNBI read
	dst     []byte // GetNBI destination, written only at Quiet
	got     bool   // GetNBI has read
	amo     transport.AtomicOp
	width   int
	operand uint64
	sigOff  uint64
	sigVal  uint64
	sigOp   transport.SignalOp
	stream  uint32 // the source's completion stream (its context): 0 is the PE's own
	epoch   uint32 // the stream's fence count at issue
	arrive  float64
	seq     uint64
	idx     int // in Net.inflight; -1 when not there
}

func (o *op) isWrite() bool { return o.kind != kGetNBI }

// opHeap holds the operations in flight, a min-heap by arrival (virtual
// time with a model, a scheduling step in Lazy mode), then issue.
type opHeap struct {
	ops    []*op
	writes int
}

func (h *opHeap) less(i, j int) bool {
	a, b := h.ops[i], h.ops[j]
	return a.arrive < b.arrive || (a.arrive == b.arrive && a.seq < b.seq)
}

func (h *opHeap) swap(i, j int) {
	h.ops[i], h.ops[j] = h.ops[j], h.ops[i]
	h.ops[i].idx, h.ops[j].idx = i, j
}

func (h *opHeap) push(o *op) {
	o.idx = len(h.ops)
	h.ops = append(h.ops, o)
	if o.isWrite() {
		h.writes++
	}
	h.up(o.idx)
}

func (h *opHeap) remove(o *op) {
	i := o.idx
	if i < 0 {
		return
	}
	last := len(h.ops) - 1
	if i != last {
		h.swap(i, last)
	}
	h.ops = h.ops[:last]
	o.idx = -1
	if o.isWrite() {
		h.writes--
	}
	if i < last {
		h.down(i)
		h.up(i)
	}
}

func (h *opHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

func (h *opHeap) down(i int) {
	for {
		l := 2*i + 1
		if l >= len(h.ops) {
			return
		}
		m := l
		if r := l + 1; r < len(h.ops) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h.swap(i, m)
		i = m
	}
}

// issue puts o in flight from e's PE on e's stream, or applies it at once
// in Eager mode without a model.
func (n *Net) issue(e *engine, o *op) {
	p := e.p
	o.src = p
	o.stream, o.epoch = e.stream, e.epoch
	if n.cfg.Mode == Eager && n.cfg.Model == nil {
		n.apply(o)
		return
	}
	n.opSeq++
	o.seq = n.opSeq
	if n.cfg.Model == nil {
		o.arrive = n.lazyDelay()
	}
	p.out = append(p.out, o)
	if n.cfg.Model == nil || o.isWrite() {
		n.inflight.push(o)
	} else {
		o.idx = -1 // with a model a GetNBI reads at Quiet
	}
	if t := n.pes[o.to]; t.waiting > 0 && o.isWrite() {
		t.inner.Ring() // Unscheduled: its waiters land it (bell.Wait)
	}
}

// landTo lands the earliest write in flight to p, or the write its
// source's fences put before it, and reports whether there was one.
func (n *Net) landTo(p *pe) bool {
	var w *op
	for i, o := range n.inflight.ops {
		if o.isWrite() && o.to == int32(p.rank) && (w == nil || n.inflight.less(i, w.idx)) {
			w = o
		}
	}
	if w == nil {
		return false
	}
	n.landFirst(w)
	return true
}

// landSome lands what may land now: every write (and NBI read) whose
// arrival is not after the earliest clock of a PE that could run (with a
// model) or whose random delay in scheduling steps has passed (Lazy).
func (n *Net) landSome() {
	for len(n.inflight.ops) > 0 {
		o := n.inflight.ops[0]
		if n.cfg.Model != nil {
			if len(n.ready) == 0 || o.arrive > n.earliestReady() {
				return
			}
		} else if o.arrive > float64(n.steps) {
			return
		}
		n.landFirst(o)
	}
}

// landNext lands the next write because no PE can run without it.
func (n *Net) landNext() {
	for n.inflight.writes > 0 {
		o := n.inflight.ops[0]
		n.landFirst(o)
		if o.isWrite() {
			return
		}
	}
}

// landFirst lands o, or first the write that its source's fences put
// before it.
func (n *Net) landFirst(o *op) {
	if o.isWrite() {
		o = n.first(o)
	}
	n.land(o)
}

// lazyDelay draws the scheduling step at which a write lands in Lazy
// mode: exponential around the seed's mean, and one write in five takes
// a slow route twenty times longer, so later writes often overtake
// earlier ones, as on a network with several paths.
func (n *Net) lazyDelay() float64 {
	d := n.rng.ExpFloat64() * n.meanDelay
	if n.rng.IntN(5) == 0 {
		d *= 20
	}
	return float64(n.steps) + d
}

// first returns the write that must land before o, or o: a write may land
// once no write of its source to its target on its stream from an earlier
// fence epoch is still in flight, and the earliest such write always may.
func (n *Net) first(o *op) *op {
	for _, q := range o.src.out {
		if q.to == o.to && q.isWrite() && q.stream == o.stream {
			if q.epoch < o.epoch {
				return q
			}
			return o
		}
	}
	return o
}

// land applies o now.
func (n *Net) land(o *op) {
	n.inflight.remove(o)
	if o.kind == kGetNBI {
		n.apply(o)
		return
	}
	out := o.src.out
	for i, q := range out {
		if q == o {
			copy(out[i:], out[i+1:])
			out[len(out)-1] = nil
			o.src.out = out[:len(out)-1]
			break
		}
	}
	n.apply(o)
}

// apply performs o on its target's heap and wakes the target.
func (n *Net) apply(o *op) {
	t := n.pes[o.to]
	mem := t.mem
	switch o.kind {
	case kPut:
		transport.Copy(mem[o.off:o.off+uint64(len(o.buf))], o.buf)
	case kAtomic:
		transport.ApplyAtomic(mem, o.amo, o.width, o.off, o.operand, 0)
	case kPutSignal:
		transport.Copy(mem[o.off:o.off+uint64(len(o.buf))], o.buf)
		transport.ApplySignal(mem, o.sigOff, o.sigVal, o.sigOp)
	case kGetNBI:
		if o.buf == nil {
			o.buf = make([]byte, len(o.dst))
		}
		copy(o.buf, mem[o.off:o.off+uint64(len(o.buf))])
		o.got = true
		n.tracef("read %d<-%d %d+%d", o.src.rank, o.to, o.off, len(o.buf))
		return
	}
	n.tracef("land %d->%d k%d %d+%d", o.src.rank, o.to, o.kind, o.off, len(o.buf))
	n.ring(t, o.arrive)
}

// quietTurns is how many turns per PE of the world a Quiet in Lazy mode
// lets the others take while it waits for its writes to come due, before
// it lands the rest at once.
const quietTurns = 4

// quiet completes every operation p has in flight: its writes land in
// the order of their arrival (a fence's order included), and in Lazy mode
// each lands when it comes due while the other PEs run on, as they would
// while a real Quiet waits for acks, so one of them may see a later write
// before an earlier one, or act on a flag before the data this Quiet
// completes has landed elsewhere (for quietTurns turns per PE at most);
// sched says that p holds the baton, without which it may not yield (it
// would hand over a baton another PE holds). Then NBI gets hand over
// what they read.
func (n *Net) quiet(e *engine, sched bool) {
	p := e.p
	wait := quietTurns * len(n.pes)
	for {
		var w *op
		for _, q := range p.out {
			if q.isWrite() && q.stream == e.stream && (w == nil || q.arrive < w.arrive) {
				w = q
			}
		}
		if w == nil {
			break
		}
		if wait > 0 && sched && n.cfg.Model == nil && w.arrive > float64(n.steps) && n.holder == p && p.st == stRunning {
			// Its earliest write is not due yet: the others run on until
			// it is (schedule lands it then), as they would while a real
			// Quiet waits for acks, for quietTurns turns per PE at most:
			// PEs spinning on a lock would otherwise take a turn for
			// every step of a slow write's delay. With nobody else to run
			// but PEs waiting so (the ready PEs past those), time skips
			// to the next landing of any PE's write instead: a yield a
			// step would only hand the baton round them.
			if len(n.ready) > n.quieting {
				wait--
				n.quieting++
				n.yield(p)
				n.quieting--
			} else {
				n.landFirst(n.inflight.ops[0])
			}
			continue
		}
		n.land(n.first(w))
		// A yield returns with the baton, or once p ended: then p runs
		// unscheduled, and a second yield would take the baton from the
		// PE that holds it.
		if sched && n.holder == p && p.st == stRunning && n.cfg.Model == nil && len(p.out) > 0 {
			n.yield(p)
		}
	}
	// What is left of the stream's are its NBI gets; other streams' ops
	// stay in flight.
	kept := p.out[:0]
	for _, q := range p.out {
		if q.stream != e.stream {
			kept = append(kept, q)
			continue
		}
		if !q.got {
			n.inflight.remove(q)
			n.apply(q)
		}
		copy(q.dst, q.buf)
	}
	clear(p.out[len(kept):])
	p.out = kept
}

// landBefore lands a random subset of p's writes to PE to that its fences
// allow: what a blocking Get or fetching atomic may find landed. The spec
// orders neither after earlier puts or non-fetching atomics without a
// Quiet (Fence does not order them), so any such subset is legal.
func (n *Net) landBefore(p *pe, to int32) {
	if n.cfg.Model != nil {
		return
	}
	// blocked holds, per stream, the earliest epoch of a write to to
	// left in flight: the stream's writes of later epochs stay too.
	var blocked []streamEpoch
	for i := 0; i < len(p.out); {
		q := p.out[i]
		if q.to != to || !q.isWrite() {
			i++
			continue
		}
		j := slices.IndexFunc(blocked, func(b streamEpoch) bool { return b.stream == q.stream })
		if (j >= 0 && q.epoch > blocked[j].epoch) || n.rng.IntN(2) == 0 {
			switch {
			case j < 0:
				blocked = append(blocked, streamEpoch{q.stream, q.epoch})
			case q.epoch < blocked[j].epoch:
				blocked[j].epoch = q.epoch
			}
			i++
			continue
		}
		n.land(q) // removes p.out[i]
	}
}

// streamEpoch is a fence epoch of one stream (landBefore).
type streamEpoch struct{ stream, epoch uint32 }

// dropOut forgets what p has in flight (p is dead or done).
func (n *Net) dropOut(p *pe) {
	for _, q := range p.out {
		n.inflight.remove(q)
	}
	clear(p.out)
	p.out = p.out[:0]
}
