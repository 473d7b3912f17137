package membership

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// msgKind says what a direct sealing message is.
type msgKind byte

const (
	// kindReport goes from a member to the leader (rank 0) of the table it
	// computed: "my view gives the table with this hash". Sent when the hash
	// changes and again every JoinInterval until the member has sealed.
	kindReport msgKind = 1
	// kindSeal goes from the leader to every member once all of them
	// reported the leader's hash, and again in answer to a late report:
	// "the table with this hash is sealed".
	kindSeal msgKind = 2
	// kindLeaving goes from a table member that leaves gracefully
	// (World.Leave) to every other member, before its departure is
	// gossiped: "the departure that follows is not a failure". The header
	// mark says the same by gossip, which reaches members beyond
	// memberlist's GossipNodes only through relays, whose queued copies
	// the departure itself drops.
	kindLeaving msgKind = 3
)

// msg is a direct message: sealing's report and seal, and a departure's
// announcement. It travels directly between two processes over
// memberlist's reliable stream (TCP, encrypted with the gossip key), not by
// gossip, so that sealing takes one round trip once the views are complete
// instead of waiting for gossip rounds that a loaded host drops, and every
// member hears of a departure from the leaver itself.
type msg struct {
	Kind msgKind
	Seq  uint64   // the sender's message counter; a receiver keeps the highest
	Hash [32]byte // tableHash of the sender's table (report) or the sealed one
	From string   // sender's node name
	Addr string   // sender's gossip address, host:port: a report's sender has a
	// complete view, so a leader still missing members joins it
}

const (
	msgMagic  = "gsm"
	msgFormat = 1
	msgFixed  = 3 + 1 + 1 + 8 + 32 + 1 + 1 // magic fmt kind seq hash nameLen addrLen
	msgMax    = msgFixed + 2*maxIDLen
)

var errBadMsg = errors.New("malformed sealing message")

// encode appends m to dst. From and Addr are at most maxIDLen bytes
// (resolve checks the name; addresses are far shorter).
func (m *msg) encode(dst []byte) []byte {
	dst = append(dst, msgMagic...)
	dst = append(dst, msgFormat, byte(m.Kind))
	dst = binary.LittleEndian.AppendUint64(dst, m.Seq)
	dst = append(dst, m.Hash[:]...)
	dst = append(dst, byte(len(m.From)))
	dst = append(dst, m.From...)
	dst = append(dst, byte(len(m.Addr)))
	return append(dst, m.Addr...)
}

// decodeMsg parses a message received from the network. It never panics and
// copies what it keeps.
func decodeMsg(b []byte) (msg, error) {
	var m msg
	if len(b) > msgMax {
		return m, fmt.Errorf("%w: %d bytes, limit %d", errBadMsg, len(b), msgMax)
	}
	if len(b) < msgFixed-2 /* both length bytes are checked below */ || string(b[:3]) != msgMagic {
		return m, fmt.Errorf("%w: not a goshmem sealing message", errBadMsg)
	}
	if b[3] != msgFormat {
		return m, fmt.Errorf("%w: format %d, want %d", errBadMsg, b[3], msgFormat)
	}
	m.Kind = msgKind(b[4])
	if m.Kind != kindReport && m.Kind != kindSeal && m.Kind != kindLeaving {
		return m, fmt.Errorf("%w: unknown kind %d", errBadMsg, b[4])
	}
	m.Seq = binary.LittleEndian.Uint64(b[5:])
	copy(m.Hash[:], b[13:45])
	from, rest, ok := lenPrefixed(b[45:])
	if !ok || len(from) == 0 {
		return m, fmt.Errorf("%w: sender name empty, truncated or longer than %d", errBadMsg, maxIDLen)
	}
	addr, rest, ok := lenPrefixed(rest)
	if !ok || len(rest) != 0 {
		return m, fmt.Errorf("%w: sender address truncated, longer than %d or followed by junk", errBadMsg, maxIDLen)
	}
	m.From, m.Addr = string(from), string(addr)
	return m, nil
}
