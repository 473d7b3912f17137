package membership

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/goshmem/shmem/bootstrap"
)

// header is what every process carries in its memberlist metadata: who it
// belongs to, its rank hint, its start stamp, the hash of the table it
// computed, and the application's record.
type header struct {
	Sealed      bool
	Leaving     bool  // set by World.Leave: the departure that follows is not a failure
	Hint        int   // -1 = none
	NPEs        int   // world size the process was started for
	Incarnation int64 // start stamp (ns); orders candidates for admission
	Hash        [32]byte
	JobID       string
	Version     string
	Meta        []byte // application record, opaque here
}

const (
	headerMagic  = "gsm"
	headerFormat = 1
	flagSealed   = 1
	flagLeaving  = 2
	headerFixed  = 3 + 1 + 1 + 4 + 4 + 8 + 32 + 1 + 1 // magic fmt flags hint npes inc hash jobLen verLen
	maxIDLen     = 64                                 // JobID and Version each
	metaMaxSize  = 512                                // memberlist.MetaMaxSize; Create and UpdateNode panic above it
	maxNPEs      = bootstrap.MaxNPEs                  // the one world-size limit
	noHint       = -1
	hintNoneWire = 0xFFFFFFFF
)

var errBadHeader = errors.New("malformed membership metadata")

// size is the encoded length of h.
func (h *header) size() int { return headerFixed + len(h.JobID) + len(h.Version) + len(h.Meta) }

// encode appends h to dst. The caller has checked the sizes (Config.validate).
func (h *header) encode(dst []byte) []byte {
	dst = append(dst, headerMagic...)
	dst = append(dst, headerFormat)
	var flags byte
	if h.Sealed {
		flags |= flagSealed
	}
	if h.Leaving {
		flags |= flagLeaving
	}
	dst = append(dst, flags)
	hint := uint32(hintNoneWire)
	if h.Hint >= 0 {
		hint = uint32(h.Hint)
	}
	dst = binary.LittleEndian.AppendUint32(dst, hint)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(h.NPEs))
	dst = binary.LittleEndian.AppendUint64(dst, uint64(h.Incarnation))
	dst = append(dst, h.Hash[:]...)
	dst = append(dst, byte(len(h.JobID)))
	dst = append(dst, h.JobID...)
	dst = append(dst, byte(len(h.Version)))
	dst = append(dst, h.Version...)
	return append(dst, h.Meta...)
}

// decodeHeader parses metadata received from the network. It never panics
// and copies everything it keeps, so b may be reused by the caller.
func decodeHeader(b []byte) (header, error) {
	var h header
	if len(b) > metaMaxSize {
		return h, fmt.Errorf("%w: %d bytes, limit %d", errBadHeader, len(b), metaMaxSize)
	}
	if len(b) < headerFixed-2 /* both length bytes are checked below */ || string(b[:3]) != headerMagic {
		return h, fmt.Errorf("%w: not a goshmem membership record", errBadHeader)
	}
	if b[3] != headerFormat {
		return h, fmt.Errorf("%w: format %d, want %d", errBadHeader, b[3], headerFormat)
	}
	if b[4]&^(flagSealed|flagLeaving) != 0 {
		return h, fmt.Errorf("%w: unknown flags %#x", errBadHeader, b[4])
	}
	h.Sealed = b[4]&flagSealed != 0
	h.Leaving = b[4]&flagLeaving != 0
	hint := binary.LittleEndian.Uint32(b[5:])
	npes := binary.LittleEndian.Uint32(b[9:])
	if npes == 0 || npes > maxNPEs {
		return h, fmt.Errorf("%w: npes %d out of range 1..%d", errBadHeader, npes, maxNPEs)
	}
	h.NPEs = int(npes)
	switch {
	case hint == hintNoneWire:
		h.Hint = noHint
	case hint < npes:
		h.Hint = int(hint)
	default:
		return h, fmt.Errorf("%w: rank hint %d not below npes %d", errBadHeader, hint, npes)
	}
	h.Incarnation = int64(binary.LittleEndian.Uint64(b[13:]))
	copy(h.Hash[:], b[21:53])
	rest := b[53:]
	job, rest, ok := lenPrefixed(rest)
	if !ok {
		return h, fmt.Errorf("%w: job ID truncated or longer than %d", errBadHeader, maxIDLen)
	}
	ver, rest, ok := lenPrefixed(rest)
	if !ok {
		return h, fmt.Errorf("%w: version truncated or longer than %d", errBadHeader, maxIDLen)
	}
	h.JobID, h.Version = string(job), string(ver)
	if len(rest) > 0 {
		h.Meta = append([]byte(nil), rest...)
	}
	return h, nil
}

// lenPrefixed splits a one-byte-length-prefixed string off b.
func lenPrefixed(b []byte) (s, rest []byte, ok bool) {
	if len(b) < 1 {
		return nil, nil, false
	}
	n := int(b[0])
	if n > maxIDLen || len(b) < 1+n {
		return nil, nil, false
	}
	return b[1 : 1+n], b[1+n:], true
}
