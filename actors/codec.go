package actors

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/goshmem/shmem/internal/errs"
)

// MaxMessage bounds an encoded control message. Control messages carry small
// descriptors; bulk data never travels this way.
const MaxMessage = 1 << 20

var errMalformed = errors.New("malformed control message")

// Encode returns m as [Version][Tag][msgpack body].
func Encode(m any) ([]byte, error) {
	tag := tagOf(m)
	if tag == 0 {
		return nil, errs.New("encode", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "unknown control message %T", m)
	}
	body, err := msgpack.Marshal(m)
	if err != nil {
		return nil, err
	}
	if len(body)+2 > MaxMessage {
		return nil, errs.New("encode", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "%T is %d bytes, limit %d", m, len(body)+2, MaxMessage)
	}
	return append([]byte{Version, byte(tag)}, body...), nil
}

// Decode parses a message from an untrusted peer. It checks the size, the
// version, the tag and the msgpack structure (every length against the bytes
// that remain, nesting depth) before msgpack allocates anything, and decodes
// only into the concrete type the tag names.
func Decode(b []byte) (any, error) {
	if len(b) < 2 || len(b) > MaxMessage {
		return nil, fmt.Errorf("%w: %d bytes", errMalformed, len(b))
	}
	if b[0] != Version {
		return nil, fmt.Errorf("%w: protocol version %d, want %d", errMalformed, b[0], Version)
	}
	m := newOf(Tag(b[1]))
	if m == nil {
		return nil, fmt.Errorf("%w: unknown tag %d", errMalformed, b[1])
	}
	if err := checkMsgpack(b[2:]); err != nil {
		return nil, fmt.Errorf("%w: %v", errMalformed, err)
	}
	if err := msgpack.Unmarshal(b[2:], m); err != nil {
		return nil, fmt.Errorf("%w: %v", errMalformed, err)
	}
	return m, nil
}

func tagOf(m any) Tag {
	switch m.(type) {
	case *Gather:
		return TagGather
	case *GatherReply:
		return TagGatherReply
	case *PEFailed:
		return TagPEFailed
	case *GlobalExit:
		return TagGlobalExit
	}
	return 0
}

func newOf(t Tag) any {
	switch t {
	case TagGather:
		return new(Gather)
	case TagGatherReply:
		return new(GatherReply)
	case TagPEFailed:
		return new(PEFailed)
	case TagGlobalExit:
		return new(GlobalExit)
	}
	return nil
}
