package simnet

import (
	"github.com/goshmem/shmem/transport"
)

// path is the simulated path from PE p to PE to. Every call is a
// scheduling point; writes go in flight (or land at once in Eager mode
// without a model).
type path struct {
	p        *pe
	to       int32
	size     uint64 // the target's heap, for the bounds checks
	mappable bool
	eng      *engine // the PE's own, or a context's stream (stream.go)
}

func (pa *path) net() *Net { return pa.p.n }

// Put copies src now (the caller may reuse it on return) and sends it.
func (pa *path) Put(off uint64, src []byte) error {
	if off > pa.size || uint64(len(src)) > pa.size-off {
		return pa.outside("Put", off, len(src))
	}
	n := pa.net()
	n.mu.Lock()
	n.enter(pa.p)
	o := &op{kind: kPut, to: pa.to, off: off, buf: append([]byte(nil), src...)}
	o.arrive = n.send(pa.p, pa.to, len(src))
	n.issue(pa.eng, o)
	n.endCall(pa.p)
	return nil
}

// Get returns what the target holds now, after landing any subset of the
// caller's own writes to it that the memory model allows to have landed.
func (pa *path) Get(dst []byte, off uint64) error {
	if off > pa.size || uint64(len(dst)) > pa.size-off {
		return pa.outside("Get", off, len(dst))
	}
	n := pa.net()
	n.mu.Lock()
	n.enter(pa.p)
	n.landBefore(pa.p, pa.to)
	n.roundTrip(pa.p, pa.to, len(dst))
	mem := n.pes[pa.to].mem
	copy(dst, mem[off:off+uint64(len(dst))])
	n.endCall(pa.p)
	return nil
}

// GetNBI reads at a moment before the next Quiet and writes dst only at
// that Quiet, so a program that reads dst before Quiet sees stale data.
func (pa *path) GetNBI(dst []byte, off uint64) error {
	if off > pa.size || uint64(len(dst)) > pa.size-off {
		return pa.outside("GetNBI", off, len(dst))
	}
	n := pa.net()
	n.mu.Lock()
	n.enter(pa.p)
	if n.cfg.Mode == Eager && n.cfg.Model == nil {
		copy(dst, n.pes[pa.to].mem[off:off+uint64(len(dst))])
		n.endCall(pa.p)
		return nil
	}
	o := &op{kind: kGetNBI, to: pa.to, off: off, dst: dst}
	o.arrive = n.send(pa.p, pa.to, 0)
	n.issue(pa.eng, o)
	n.endCall(pa.p)
	return nil
}

// Atomic performs a fetching atomic now.
func (pa *path) Atomic(aop transport.AtomicOp, width int, off uint64, operand, cond uint64) (uint64, error) {
	if err := pa.checkAtomic(aop, width, off, "Atomic"); err != nil {
		return 0, err
	}
	n := pa.net()
	n.mu.Lock()
	n.enter(pa.p)
	n.landBefore(pa.p, pa.to)
	n.roundTrip(pa.p, pa.to, width)
	t := n.pes[pa.to]
	old := transport.ApplyAtomic(t.mem, aop, width, off, operand, cond)
	if aop != transport.AtomicFetch {
		n.tracef("amo %d->%d %d", pa.p.rank, pa.to, off)
		n.ring(t, pa.p.clock)
	}
	n.endCall(pa.p)
	return old, nil
}

// AtomicPost sends a non-fetching atomic.
func (pa *path) AtomicPost(aop transport.AtomicOp, width int, off uint64, operand uint64) error {
	if err := pa.checkAtomic(aop, width, off, "AtomicPost"); err != nil {
		return err
	}
	n := pa.net()
	n.mu.Lock()
	n.enter(pa.p)
	o := &op{kind: kAtomic, to: pa.to, off: off, amo: aop, width: width, operand: operand}
	o.arrive = n.send(pa.p, pa.to, width)
	n.issue(pa.eng, o)
	n.endCall(pa.p)
	return nil
}

// PutSignal sends data and signal as one landing: whoever sees the signal
// sees the data.
func (pa *path) PutSignal(off uint64, src []byte, sigOff uint64, value uint64, sop transport.SignalOp) error {
	if err := pa.checkSignal(off, len(src), sigOff, sop); err != nil {
		return err
	}
	n := pa.net()
	n.mu.Lock()
	n.enter(pa.p)
	o := &op{kind: kPutSignal, to: pa.to, off: off, buf: append([]byte(nil), src...), sigOff: sigOff, sigVal: value, sigOp: sop}
	o.arrive = n.send(pa.p, pa.to, len(src)+8)
	n.issue(pa.eng, o)
	n.endCall(pa.p)
	return nil
}

// Ptr hands out the target's heap on the caller's node, as the mapped path
// does; stores through it are the user's own, outside the simulator. It is
// nil for a range outside the heap.
func (pa *path) Ptr(off uint64, n int) []byte {
	if !pa.mappable || n < 0 || off > pa.size || uint64(n) > pa.size-off {
		return nil
	}
	mem := pa.net().pes[pa.to].mem
	return mem[off : off+uint64(n) : off+uint64(n)]
}

// Engine returns the calling PE's engine.
func (pa *path) Engine() transport.Engine { return pa.eng }

// engine orders and completes one PE's operations: those of its default
// context (stream 0), or those of one of its contexts (a stream,
// stream.go).
type engine struct {
	n      *Net
	p      *pe
	stream uint32
	epoch  uint32          // fences so far on this stream
	paths  map[int32]*path // a stream's paths, made on first use
}

// Fence starts a new epoch: writes issued after it on this stream land
// after those issued before it, per target.
func (e *engine) Fence() error {
	e.n.mu.Lock()
	e.n.enter(e.p)
	e.epoch++
	e.n.endCall(e.p)
	return nil
}

// Quiet lands everything the stream has in flight.
func (e *engine) Quiet() error {
	n := e.n
	n.mu.Lock()
	sched := n.enter(e.p)
	n.quiet(e, sched)
	n.waitAcks(e.p)
	n.endCall(e.p)
	return nil
}
