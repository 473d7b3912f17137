package actors

// Version is the control protocol version. A PE drops messages of any other
// version, so mixed-version worlds fail loudly at start-up, not silently.
const Version = 1

// Tag identifies a message type on the wire. Values are part of the
// protocol: append only.
type Tag uint8

// The message tags.
const (
	TagGather Tag = iota + 1
	TagGatherReply
	TagPEFailed
	TagGlobalExit
	tagEnd
)

// Gather is one member's contribution to a gather round. A round is named by
// Domain and Seq and completes when N members, ranks 0..N-1 within the group,
// have contributed.
type Gather struct {
	Domain  string `msgpack:"d"`
	Seq     uint64 `msgpack:"s"`
	Rank    int    `msgpack:"r"`
	N       int    `msgpack:"n"`
	Members []int  `msgpack:"m"` // world ranks of the group, so failures abort the round
	Payload []byte `msgpack:"p"`
}

// GatherReply answers every member of a completed or aborted round.
type GatherReply struct {
	Payloads [][]byte `msgpack:"p"` // indexed by group rank
	Err      string   `msgpack:"e"` // non-empty when the round was aborted
	Failed   int      `msgpack:"f"` // the world rank that caused an abort, or -1
}

// PEFailed tells a PE, or the coordinator, that world rank Rank is gone.
// Origin is the PE that detected it: a PE that forwards the notice (see
// world's failure flooding) keeps it, so that the next PE can skip the
// peers Origin told itself. Link says Origin's control link to Rank had
// been up and its connection ended without a goodbye, so the notice
// follows every message that link carried (a GlobalExit Rank sent or
// passed on came first); forwarded notices keep it.
type PEFailed struct {
	Rank   int    `msgpack:"r"`
	Reason string `msgpack:"w"`
	Origin int    `msgpack:"o"`
	Link   bool   `msgpack:"l,omitempty"`
}

// GlobalExit ends every PE's world with Status; Rank called it.
type GlobalExit struct {
	Rank   int `msgpack:"r"`
	Status int `msgpack:"s"`
}
