package lane

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/goshmem/shmem/actors"
)

// The wire format, after the handshake. Every frame is
//
//	length (uint32, big endian, of what follows) | kind (1 byte) | body
//
// and the bodies are
//
//	hello:     from (uint32) | to (uint32)           the dialer's first frame
//	heartbeat: empty                                 "still here"
//	bye:       empty                                 "closing on purpose"
//	abort:     empty                                 "closing after a failure of my own"
//	probe:     version (1 byte) | subject (uint32) |
//	           round (uint32)                        "do you hear subject?"
//	probe-ack: version (1 byte) | subject (uint32) |
//	           round (uint32) | age (uint32)         "I heard subject age ms ago"
//	message:   from (uint32) | to (uint32) |
//	           target length (1 byte) | target | reply length (1 byte) | reply |
//	           payload (an actors.Encode message)
//
// from and to are world ranks: a frame whose to is not the receiver is
// relayed once by the receiver (see Lane.route). A probe travels one link
// only: the asker suspects subject and asks the PEs it is linked to; each
// answers on the same link with the age of the last frame it had from
// subject, or noAge (see probe.go). version is probeVersion; a frame of
// another version is refused, so a later format must change it. target names the actor it
// is for on the process of rank to; reply, when not empty, names the actor
// on rank from that answers go to.
const (
	kindHello     byte = 1
	kindHeartbeat byte = 2
	kindBye       byte = 3
	kindMessage   byte = 4
	kindAbort     byte = 5
	kindProbe     byte = 6
	kindProbeAck  byte = 7
)

// probeVersion is the version byte of probe and probe-ack frames.
const probeVersion byte = 1

// noAge is a probe-ack's age when the answering PE has no live link to
// the subject (or it is silent there too).
const noAge = 0xffffffff

// maxID bounds an actor name in a frame. protoactor names are short
// ("pe-12", "coordinator", "future$a1b2").
const maxID = 64

// maxRank bounds the ranks a frame may name (the rendezvous's limit).
const maxRank = 1 << 20

// MaxFrame bounds a frame after its length prefix: a message header and
// the largest control message. The reader refuses a longer length before
// it allocates.
const MaxFrame = 1 + 8 + 2 + 2*maxID + actors.MaxMessage

// errFrame is wrapped by every error about a malformed frame.
var errFrame = errors.New("malformed control frame")

// frame is a decoded frame. For kindMessage, payload still holds the
// actors message's bytes: a relay forwards them without decoding.
type frame struct {
	kind     byte
	from, to int
	target   string
	reply    string
	payload  []byte
	// Probe frames: the suspected PE, the asker's suspicion round and,
	// in an ack, how long ago (ms) the answering PE last heard subject.
	subject, round int
	age            uint32
}

// appendFrame appends f's encoding, length prefix included, to b.
func appendFrame(b []byte, f *frame) []byte {
	start := len(b)
	b = append(b, 0, 0, 0, 0, f.kind)
	switch f.kind {
	case kindHello:
		b = binary.BigEndian.AppendUint32(b, uint32(f.from))
		b = binary.BigEndian.AppendUint32(b, uint32(f.to))
	case kindProbe, kindProbeAck:
		b = append(b, probeVersion)
		b = binary.BigEndian.AppendUint32(b, uint32(f.subject))
		b = binary.BigEndian.AppendUint32(b, uint32(f.round))
		if f.kind == kindProbeAck {
			b = binary.BigEndian.AppendUint32(b, f.age)
		}
	case kindMessage:
		b = binary.BigEndian.AppendUint32(b, uint32(f.from))
		b = binary.BigEndian.AppendUint32(b, uint32(f.to))
		b = append(b, byte(len(f.target)))
		b = append(b, f.target...)
		b = append(b, byte(len(f.reply)))
		b = append(b, f.reply...)
		b = append(b, f.payload...)
	}
	binary.BigEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b
}

// encodeMessage returns the frame that carries msg from rank from to the
// actor target on rank to, with answers going to reply on rank from.
func encodeMessage(from, to int, target, reply string, msg any) ([]byte, error) {
	if !validID(target) || reply != "" && !validID(reply) {
		return nil, fmt.Errorf("%w: actor names %q, %q", errFrame, target, reply)
	}
	payload, err := actors.Encode(msg)
	if err != nil {
		return nil, err
	}
	return appendFrame(nil, &frame{kind: kindMessage, from: from, to: to, target: target, reply: reply, payload: payload}), nil
}

// readFrame reads one frame from r. It checks the length against MaxFrame
// before allocating the body, and the body with decodeFrame.
func readFrame(r io.Reader) (*frame, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if n == 0 || n > MaxFrame {
		return nil, fmt.Errorf("%w: length %d, limit %d", errFrame, n, MaxFrame)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	return decodeFrame(body)
}

// decodeFrame parses the bytes after a frame's length prefix. It checks
// every length against what is left and every rank against maxRank; it
// does not decode a message's payload (actors.Decode does, at the
// receiver).
func decodeFrame(b []byte) (*frame, error) {
	if len(b) == 0 || len(b) > MaxFrame {
		return nil, fmt.Errorf("%w: %d bytes", errFrame, len(b))
	}
	f := &frame{kind: b[0]}
	b = b[1:]
	switch f.kind {
	case kindHeartbeat, kindBye, kindAbort:
		if len(b) != 0 {
			return nil, fmt.Errorf("%w: kind %d with a %d-byte body", errFrame, f.kind, len(b))
		}
		return f, nil
	case kindProbe, kindProbeAck:
		return decodeProbe(f, b)
	case kindHello, kindMessage:
	default:
		return nil, fmt.Errorf("%w: unknown kind %d", errFrame, f.kind)
	}
	if len(b) < 8 {
		return nil, fmt.Errorf("%w: truncated ranks", errFrame)
	}
	from, to := binary.BigEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
	if from >= maxRank || to >= maxRank {
		return nil, fmt.Errorf("%w: ranks %d, %d out of range", errFrame, from, to)
	}
	f.from, f.to, b = int(from), int(to), b[8:]
	if f.kind == kindHello {
		if len(b) != 0 {
			return nil, fmt.Errorf("%w: hello with %d trailing bytes", errFrame, len(b))
		}
		return f, nil
	}
	var err error
	if f.target, b, err = readID(b); err != nil || f.target == "" {
		return nil, fmt.Errorf("%w: target: %v", errFrame, err)
	}
	if f.reply, b, err = readID(b); err != nil {
		return nil, fmt.Errorf("%w: reply: %v", errFrame, err)
	}
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: message without payload", errFrame)
	}
	f.payload = b
	return f, nil
}

// decodeProbe parses a probe's or probe-ack's body b (after the kind):
// exact length, known version, subject within maxRank.
func decodeProbe(f *frame, b []byte) (*frame, error) {
	want := 9
	if f.kind == kindProbeAck {
		want = 13
	}
	if len(b) != want {
		return nil, fmt.Errorf("%w: kind %d with a %d-byte body, want %d", errFrame, f.kind, len(b), want)
	}
	if b[0] != probeVersion {
		return nil, fmt.Errorf("%w: probe version %d, this PE speaks %d", errFrame, b[0], probeVersion)
	}
	subject := binary.BigEndian.Uint32(b[1:])
	if subject >= maxRank {
		return nil, fmt.Errorf("%w: probe subject %d out of range", errFrame, subject)
	}
	f.subject, f.round = int(subject), int(binary.BigEndian.Uint32(b[5:]))
	if f.kind == kindProbeAck {
		f.age = binary.BigEndian.Uint32(b[9:])
	}
	return f, nil
}

func readID(b []byte) (string, []byte, error) {
	if len(b) == 0 {
		return "", nil, errors.New("truncated")
	}
	n := int(b[0])
	if n > maxID || n > len(b)-1 {
		return "", nil, fmt.Errorf("length %d", n)
	}
	id := string(b[1 : 1+n])
	if n > 0 && !validID(id) {
		return "", nil, fmt.Errorf("bad actor name %q", id)
	}
	return id, b[1+n:], nil
}

// validID reports whether s can name an actor in a frame: 1 to maxID
// printable ASCII bytes.
func validID(s string) bool {
	if len(s) == 0 || len(s) > maxID {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}
