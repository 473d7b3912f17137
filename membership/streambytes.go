package membership

import (
	"errors"
	"net"
	"sync/atomic"
)

// errStreamTooLong ends a gossip stream that delivered more bytes than any
// member's message can hold.
var errStreamTooLong = errors.New("gossip stream longer than this world's state can be")

// nodeStateMax bounds one node's entry in a push-pull exchange: memberlist's
// msgpack record of name (<= 64 bytes), address, port, incarnation, state,
// versions and metadata (<= 512 bytes).
const nodeStateMax = 1 << 10

// streamBytes bounds what one gossip stream may deliver in a world of npes:
// a push-pull exchange of up to 4*npes+64 nodes' states (memberlist holds
// only admitted processes: the members, and before sealing those started
// too), plus 64 KiB for headers, encryption and direct messages.
// memberlist itself accepts a declared length of up to 20 MB before it
// authenticates a byte, buffering whatever arrives, so without this bound
// each stream a stranger opened cost the PE up to 20 MB of memory (32
// streams: 640 MB), with maxStreams of them open at once.
func streamBytes(npes int) int64 {
	return 64<<10 + int64(4*npes+64)*nodeStateMax
}

// capped is a stream that fails its reads once it delivered max bytes.
type capped struct {
	net.Conn
	left atomic.Int64
}

func newCapped(c net.Conn, max int64) *capped {
	cc := &capped{Conn: c}
	cc.left.Store(max)
	return cc
}

func (c *capped) Read(p []byte) (int, error) {
	left := c.left.Load()
	if left <= 0 {
		return 0, errStreamTooLong
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := c.Conn.Read(p)
	c.left.Add(-int64(n))
	return n, err
}
