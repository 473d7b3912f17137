package rdma

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/goshmem/shmem/transport"
)

// The frame header: headerSize bytes, little-endian, followed by n payload
// bytes. Every field is checked by decodeHeader before anything acts on it.
//
//	 0 magic u16   2 version u8   3 op u8     4 width u8   5 aop u8
//	 6 status u8   7 hops u8      8 flags u8  9 zero [3]u8 12 n u32
//	16 id u64     24 src u32     28 dst u32  32 off u64   40 operand u64
//	48 cond u64
const (
	headerSize = 56
	magic      = 0x4d53 // "SM"
	version    = 4      // 2: unsolicited acks (opAck, flagAck); 3: sealed records under TLS 1.3; 4: statics offsets (transport.StaticsBase)
	maxHops    = 4      // a relay chain longer than this is a routing loop
)

// WireVersion is the frame format this build speaks. A node refuses frames
// of another, so PEs compare it at start-up and refuse a mixed job there,
// naming the PE, instead of failing its first data connection.
const WireVersion = version

// Frame op codes. Requests flow from the dialling node to the accepting
// node; responses flow back on the same connection.
const (
	opPut        uint8 = iota + 1 // payload -> heap[off:]
	opGet                         // ask for n bytes at off
	opAtomic                      // fetching atomic: aop, width, operand, cond
	opAtomicPost                  // non-fetching atomic, no response
	opPutSignal                   // payload -> heap[off:], then signal word cond (aop, operand)
	opFlush                       // ack when everything before it on this connection is applied
	opGetResp                     // n bytes of data for request id
	opAtomicResp                  // operand = old value
	opFlushAck                    // operand = the flush's operand echoed
	opAck                         // unsolicited: operand = frames of this connection applied so far
	opEnd
)

// Response status codes.
const (
	statusOK     uint8 = 0
	statusFailed uint8 = 1 // a PE on the route failed; operand names it
)

// Header flags.
const (
	// flagBulk marks frames sent on a bulk lane so that a relay forwards
	// them on its own bulk lane and a relayed flush covers them.
	flagBulk uint8 = 1
	// flagAck asks the target for an opAck once it has applied the frame
	// and its input runs dry (or enough frames went by): Quiet after a put
	// then waits for that ack instead of sending a flush and waiting for
	// its answer, one write and one wake-up less per put+quiet.
	flagAck uint8 = 2
)

type header struct {
	op, width, aop, status, hops, flags uint8
	n                                   uint32
	id                                  uint64
	src, dst                            uint32
	off, operand, cond                  uint64
}

func (h *header) isRequest() bool { return h.op >= opPut && h.op <= opFlush }

// encode writes h into b, which has at least headerSize bytes.
func (h *header) encode(b []byte) {
	_ = b[headerSize-1]
	binary.LittleEndian.PutUint16(b[0:], magic)
	b[2] = version
	b[3] = h.op
	b[4] = h.width
	b[5] = h.aop
	b[6] = h.status
	b[7] = h.hops
	b[8] = h.flags
	b[9], b[10], b[11] = 0, 0, 0
	binary.LittleEndian.PutUint32(b[12:], h.n)
	binary.LittleEndian.PutUint64(b[16:], h.id)
	binary.LittleEndian.PutUint32(b[24:], h.src)
	binary.LittleEndian.PutUint32(b[28:], h.dst)
	binary.LittleEndian.PutUint64(b[32:], h.off)
	binary.LittleEndian.PutUint64(b[40:], h.operand)
	binary.LittleEndian.PutUint64(b[48:], h.cond)
}

var (
	errMagic   = errors.New("bad magic or version")
	errField   = errors.New("malformed header field")
	errTooLong = errors.New("payload length over limit")
)

// decodeHeader parses and checks b (at least headerSize bytes) on its own:
// everything that does not depend on the receiver's heap or world size.
// Range checks against a heap are checkTarget's job.
func decodeHeader(b []byte) (header, error) {
	var h header
	err := h.decode(b)
	return h, err
}

// decode is decodeHeader into h, which it overwrites whole: the readers
// decode in place, from their read buffer into a header of their own.
func (h *header) decode(b []byte) error {
	if len(b) < headerSize {
		*h = header{}
		return errField
	}
	_ = b[headerSize-1]
	*h = header{
		op: b[3], width: b[4], aop: b[5], status: b[6], hops: b[7], flags: b[8],
		n:       binary.LittleEndian.Uint32(b[12:]),
		id:      binary.LittleEndian.Uint64(b[16:]),
		src:     binary.LittleEndian.Uint32(b[24:]),
		dst:     binary.LittleEndian.Uint32(b[28:]),
		off:     binary.LittleEndian.Uint64(b[32:]),
		operand: binary.LittleEndian.Uint64(b[40:]),
		cond:    binary.LittleEndian.Uint64(b[48:]),
	}
	if binary.LittleEndian.Uint16(b[0:]) != magic || b[2] != version {
		return errMagic
	}
	if b[9]|b[10]|b[11] != 0 || h.flags&^(flagBulk|flagAck) != 0 || h.hops > maxHops {
		return errField
	}
	if h.n > MaxChunk {
		return errTooLong
	}
	if h.status != statusOK { // a failure answer: operand names the failed PE
		if h.isRequest() || h.status != statusFailed || h.n != 0 || h.width|h.aop != 0 || h.off|h.cond != 0 || h.op >= opEnd {
			return errField
		}
		return nil
	}
	if err := h.checkOp(); err != nil {
		return err
	}
	if h.flags&flagAck != 0 && h.op != opPut && h.op != opPutSignal && h.op != opAtomicPost && h.op != opGet && h.op != opAtomic {
		return fmt.Errorf("%w: op %d: ack flag on a frame that is not a counted request", errField, h.op)
	}
	return nil
}

// checkOp checks the fields each op uses and that the others are zero.
func (h *header) checkOp() error {
	bad := func(what string) error { return fmt.Errorf("%w: op %d: %s", errField, h.op, what) }
	switch h.op {
	case opPut:
		if h.width|h.aop != 0 || h.operand|h.cond != 0 {
			return bad("unused field set")
		}
	case opGet:
		if h.width|h.aop != 0 || h.operand|h.cond != 0 || h.n == 0 {
			return bad("unused field set or empty get")
		}
	case opAtomic, opAtomicPost:
		if !transport.AtomicOp(h.aop).Valid() || (h.width != 4 && h.width != 8) ||
			h.off%uint64(h.width) != 0 || h.n != 0 {
			return bad("atomic op, width or alignment")
		}
		if h.op == opAtomicPost && h.cond != 0 {
			return bad("cond on a posted atomic")
		}
	case opPutSignal:
		if !transport.SignalOp(h.aop).Valid() || h.width != 0 || h.cond%8 != 0 {
			return bad("signal op or alignment")
		}
	case opFlush:
		if h.width|h.aop != 0 || h.cond != 0 || h.n != 0 {
			return bad("unused field set")
		}
	case opGetResp:
		if h.width|h.aop != 0 || h.off|h.operand|h.cond != 0 {
			return bad("unused field set")
		}
	case opAtomicResp, opFlushAck:
		if h.width|h.aop != 0 || h.off|h.cond != 0 || h.n != 0 {
			return bad("unused field set")
		}
	case opAck:
		if h.width|h.aop != 0 || h.off|h.cond|h.id != 0 || h.n != 0 {
			return bad("unused field set")
		}
	default:
		return bad("unknown op")
	}
	return nil
}

// checkTarget checks a request addressed to this node against the memory
// it names: heap, or statics for offsets from transport.StaticsBase (data
// and signal each on its own). Every byte lies inside, without overflow.
// It returns the memory of the data and of the signal and makes h's
// offsets relative to them.
func (h *header) checkTarget(heap, statics []byte) (data, sig []byte, err error) {
	data, off := region(h.off, heap, statics)
	var sigOff uint64
	ok := true
	switch h.op {
	case opPut, opGet:
		ok = transport.InRange(len(data), off, int(h.n))
	case opAtomic, opAtomicPost:
		ok = transport.WordOK(len(data), off, int(h.width))
	case opPutSignal: // cond is the signal's offset (an atomic's cond is its compare value)
		sig, sigOff = region(h.cond, heap, statics)
		ok = transport.InRange(len(data), off, int(h.n)) && transport.WordOK(len(sig), sigOff, 8)
	}
	if !ok {
		return nil, nil, fmt.Errorf("%w: op %d range off=%#x n=%d sig=%#x outside heap of %d bytes and statics of %d",
			errField, h.op, h.off, h.n, h.cond, len(heap), len(statics))
	}
	h.off = off
	if h.op == opPutSignal {
		h.cond = sigOff
	}
	return data, sig, nil
}

// region returns the memory that offset off of a request names and the
// offset within it: the heap, or the statics region from
// transport.StaticsBase.
func region(off uint64, heap, statics []byte) ([]byte, uint64) {
	if off >= transport.StaticsBase {
		return statics, off - transport.StaticsBase
	}
	return heap, off
}
