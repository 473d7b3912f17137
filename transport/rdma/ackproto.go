package rdma

import "errors"

// The ack/fence protocol of the lanes, as pure decisions.
//
// Frames are numbered on a lane in the order written, and the peer applies
// a lane's frames in that order, so one number says how far it got. A
// counted frame (a put, posted atomic, signal or detached get) completes
// only once the peer confirms it applied it: on a direct small lane the
// frame asks for an unsolicited ack (flagAck), which the peer sends once
// its input runs dry or every ackEvery frames; other lanes are confirmed
// by a flush, whose answer carries the number it covers.
//
// Ordering across a path's two lanes costs messages only when traffic
// switches lanes: Fence records, per lane with unconfirmed frames, the
// number later frames on the other lane must wait for (fenceMark); a get or
// fetching atomic waits for every earlier frame of the other lane
// (read-after-write). Quiet waits, per lane, for the ack of its last counted
// frame, or flushes.
//
// The functions below decide; the lane applies their answers to its
// atomic counters (lane.go, engine.go) and the server to its own loop
// (server.go). They take and return plain numbers, allocate nothing and
// take no lock, so a lane's callers keep deciding in parallel; the
// scenarios in testdata/ackproto drive them one event at a time.

// errAckBeyond and errAckUnasked are the protocol violations an ack can
// commit; either closes the lane.
var (
	errAckBeyond  = errors.New("ack beyond what was written")
	errAckUnasked = errors.New("unsolicited ack on a lane that asks for none")
)

// askAck reports whether a frame asks the peer for an unsolicited ack:
// counted frames on a lane whose peer acknowledges them (a direct small
// lane; a relay's ack would prove only forwarding).
func askAck(counted, autoAck bool) bool { return counted && autoAck }

// afterCounted is the lane's written count once counted frame seq has
// been written: seq. wake says the reader goroutine must drain acks: more
// than ackBacklog of them may sit unread, and the peer must never block
// writing acks nobody reads (it would stop reading its input).
func afterCounted(acked, seq uint64, autoAck bool) (written uint64, wake bool) {
	return seq, autoAck && seq > acked+ackBacklog
}

// ackBacklog bounds the acknowledgements a direct lane may leave unread:
// past it the reader goroutine drains them. At a 56-byte ack per frame at
// worst, that keeps them far below any socket buffer.
const ackBacklog = 256

// backlogged reports whether the reader goroutine should read acks now:
// half the backlog, so that one wake-up drains many.
func backlogged(written, acked uint64, autoAck bool) bool {
	return autoAck && written > acked+ackBacklog/2
}

// onAck returns the lane's acked count after the peer confirmed frames up
// to seq; unsolicited says the confirmation is an opAck rather than a
// flush's answer. An ack beyond what was sent, or an unsolicited one on a
// lane that asks for none, is an error (the lane then fails). Acks may
// arrive out of order with flush answers; the count never goes back.
func onAck(sent, acked, seq uint64, unsolicited, autoAck bool) (uint64, error) {
	if unsolicited && !autoAck {
		return acked, errAckUnasked
	}
	if seq > sent {
		return acked, errAckBeyond
	}
	return max(acked, seq), nil
}

// fenceMarkAfter is a lane's fenceMark after a Fence: its last counted
// frame, when the peer has not yet confirmed it; otherwise unchanged
// (nothing of this lane can be overtaken).
func fenceMarkAfter(written, acked, mark uint64) uint64 {
	if written <= acked {
		return mark
	}
	return max(mark, written)
}

// orderMark is the frame of the other lane that must be applied before a
// frame goes out on this one: the other lane's fenceMark, or with
// readAfterWrite (a get or fetching atomic, which must see every earlier
// write) its last counted frame.
func orderMark(otherWritten, otherFence uint64, readAfterWrite bool) uint64 {
	if readAfterWrite {
		return otherWritten
	}
	return otherFence
}

// settleStep is how a caller waits until a lane's frames up to a mark are
// applied.
type settleStep uint8

const (
	settleDone     settleStep = iota // already confirmed
	settleReadAcks                   // read the lane until the peer's ack for mark arrives
	settleFlush                      // send a flush and wait for its answer
)

func (s settleStep) String() string {
	return [...]string{"done", "read acks", "flush"}[s]
}

// settleAction decides how to wait for mark on a lane. The unsolicited ack
// is on its way on an autoAck lane; the caller reads it itself when it can
// take the read side (canRead), and otherwise sends a flush, whose answer
// whoever is reading hands over.
func settleAction(acked, mark uint64, autoAck, canRead bool) settleStep {
	switch {
	case acked >= mark:
		return settleDone
	case autoAck && canRead:
		return settleReadAcks
	}
	return settleFlush
}

// quietStep is what Quiet does with one lane.
type quietStep uint8

const (
	quietSkip  quietStep = iota // every counted frame confirmed
	quietAwait                  // settle the lane's last counted frame (an ack is coming)
	quietFlush                  // flush the lane (issued for every such lane, then awaited)
)

func (s quietStep) String() string {
	return [...]string{"skip", "await ack", "flush"}[s]
}

// quietAction decides Quiet's work on a lane and the frame number it waits
// for.
func quietAction(written, acked uint64, autoAck bool) (quietStep, uint64) {
	switch {
	case written <= acked:
		return quietSkip, 0
	case autoAck:
		return quietAwait, written
	}
	return quietFlush, written
}

// ackEvery bounds how many frames may go by before a pending ack is sent
// even though more input is buffered: a sender that never lets the input
// run dry still sees its Quiet complete.
const ackEvery = 128

// ackPolicy is the receiving side of the protocol, owned by one server
// connection's loop: it numbers the frames as read and decides when to
// acknowledge them.
type ackPolicy struct {
	seq   uint64 // frames read
	acked uint64 // number of the last frame acknowledged
	due   bool   // a frame that asked for an ack is applied and unacknowledged
}

// frame records one frame, applied or relayed; asked says it asked for an
// ack and was applied here (a relayed frame's ack is its target's to give),
// dry that no more input is buffered. It returns the number to acknowledge
// (0: none now) and whether buffered responses must be written out now: on
// a dry input, and with every ack, so that the ack leaves at once.
func (a *ackPolicy) frame(asked, dry bool) (ack uint64, flush bool) {
	a.seq++
	a.due = a.due || asked
	if a.due && (dry || a.seq-a.acked >= ackEvery) {
		a.due, a.acked = false, a.seq
		return a.seq, true
	}
	return 0, dry
}
