package rendezvous

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Wire format, version 1. Every message is a frame:
//
//	header:  "GSRZ" | version (1 byte) | kind (1 byte) | 0 (2 bytes) | payload length (uint32 BE)
//	hello, record payload: rank (uint32 BE) | npes (uint32 BE) | record bytes
//	reject payload: a UTF-8 reason
//	probe payload: 0 (uint32) | 0 (uint32)
//	probe reply payload: ranks arrived (uint32 BE) | npes (uint32 BE) | rank 0's clock (int64 BE, Unix ns)
//	failed payload: the failed rank (uint32 BE) | npes (uint32 BE) | a UTF-8 reason
//
// A client sends one hello; the server answers with npes record frames in
// rank order, or with one reject, or with one failed frame when a rank
// that had registered died before the world formed. A diagnostic client (Probe) sends one
// probe instead and gets one probe reply; it is never registered. Every length is checked against its bound
// before anything is allocated.
const (
	frameMagic   = "GSRZ"
	frameVersion = 1
	headerLen    = 12
	rankHdrLen   = 8
	maxReason    = 1024

	kindHello      = 1
	kindRecord     = 2
	kindReject     = 3
	kindProbe      = 4
	kindProbeReply = 5
	kindFailed     = 6
	probeClockLen  = 8
)

type frame struct {
	kind   byte
	rank   uint32
	npes   uint32
	record []byte // hello, record
	reason string // reject, failed
}

// parseHeader checks a frame header and returns the kind and payload length.
func parseHeader(h []byte) (kind byte, n int, err error) {
	if len(h) != headerLen {
		return 0, 0, fmt.Errorf("header is %d bytes, want %d", len(h), headerLen)
	}
	if string(h[:4]) != frameMagic {
		return 0, 0, errors.New("not a goshmem rendezvous frame (bad magic)")
	}
	if h[4] != frameVersion {
		return 0, 0, fmt.Errorf("frame version %d, want %d", h[4], frameVersion)
	}
	if h[6] != 0 || h[7] != 0 {
		return 0, 0, errors.New("reserved header bytes are not zero")
	}
	kind = h[5]
	length := binary.BigEndian.Uint32(h[8:])
	var min, max uint32
	switch kind {
	case kindHello, kindRecord:
		min, max = rankHdrLen, rankHdrLen+MaxRecord
	case kindReject:
		min, max = 0, maxReason
	case kindProbe:
		min, max = rankHdrLen, rankHdrLen
	case kindFailed:
		min, max = rankHdrLen, rankHdrLen+maxReason
	case kindProbeReply:
		min, max = rankHdrLen+probeClockLen, rankHdrLen+probeClockLen
	default:
		return 0, 0, fmt.Errorf("unknown frame kind %d", kind)
	}
	if length < min || length > max {
		return 0, 0, fmt.Errorf("frame kind %d has payload length %d, allowed %d..%d", kind, length, min, max)
	}
	return kind, int(length), nil
}

// parsePayload decodes a payload whose length parseHeader accepted. The
// returned record aliases p.
func parsePayload(kind byte, p []byte) frame {
	f := frame{kind: kind}
	if kind == kindReject {
		f.reason = string(p)
		return f
	}
	f.rank = binary.BigEndian.Uint32(p)
	f.npes = binary.BigEndian.Uint32(p[4:])
	if kind == kindFailed {
		f.reason = string(p[rankHdrLen:])
		return f
	}
	f.record = p[rankHdrLen:]
	return f
}

// readFrame reads one frame, allocating no more than the header's checked
// length.
func readFrame(r io.Reader) (frame, error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return frame{}, err
	}
	kind, n, err := parseHeader(h[:])
	if err != nil {
		return frame{}, err
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return frame{}, err
	}
	return parsePayload(kind, p), nil
}

// appendFrame appends the encoding of f; the caller has bounded its sizes.
func appendFrame(b []byte, f frame) []byte {
	var n int
	switch f.kind {
	case kindReject:
		n = len(f.reason)
	case kindFailed:
		n = rankHdrLen + len(f.reason)
	default:
		n = rankHdrLen + len(f.record)
	}
	b = append(b, frameMagic...)
	b = append(b, frameVersion, f.kind, 0, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	if f.kind == kindReject {
		return append(b, f.reason...)
	}
	b = binary.BigEndian.AppendUint32(b, f.rank)
	b = binary.BigEndian.AppendUint32(b, f.npes)
	if f.kind == kindFailed {
		return append(b, f.reason...)
	}
	return append(b, f.record...)
}

// rejectFrame builds a reject, truncating the reason to its bound.
func rejectFrame(reason string) frame {
	if len(reason) > maxReason {
		reason = reason[:maxReason]
	}
	return frame{kind: kindReject, reason: reason}
}

// failedFrame tells the registered ranks that rank died before the world
// formed, truncating the reason to its bound.
func failedFrame(rank, npes int, reason string) frame {
	if len(reason) > maxReason {
		reason = reason[:maxReason]
	}
	return frame{kind: kindFailed, rank: uint32(rank), npes: uint32(npes), reason: reason}
}
