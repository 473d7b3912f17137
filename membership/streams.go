package membership

import (
	"context"
	"fmt"
	"log"
	"net"
	"strings"
	"sync"
	"syscall"

	"github.com/hashicorp/memberlist"
)

// maxStreams bounds the inbound gossip streams (TCP connections: joins,
// push-pull state exchanges, reliable direct messages) open at once. A
// member opens one for a moment per exchange, so a world's members need a
// handful at a time; a stranger flooding the port (memberlist accepts every
// connection and holds each for TCPTimeout waiting for its bytes) held
// thousands, with a goroutine and buffers each.
const maxStreams = 128

// streamLimit is memberlist's NetTransport with its inbound streams
// bounded: at most max are open at once, a newer one closing the oldest
// (as internal/admit does for goshmem's other listeners), so a flood costs
// a bounded number of descriptors and goroutines and cannot lock the
// members out: their streams are the newest when they come.
type streamLimit struct {
	*memberlist.NetTransport
	max      int
	maxBytes int64 // per stream, either way (streamBytes)
	streams  chan net.Conn
	done     chan struct{}
	stop     sync.Once
	wg       sync.WaitGroup

	mu   sync.Mutex
	open map[uint64]*limitedConn // by arrival: the smallest is the oldest
	next uint64
	shed int // streams closed to make room, for the log and tests

	// dialCtx ends the dials in flight, and out holds the outbound streams
	// open, when abortDials is called: a join, push-pull or direct
	// message to a peer that stalls would otherwise hold its goroutine,
	// and a cancelled Form, for up to TCPTimeout.
	dialCtx    context.Context
	abortDial  context.CancelFunc
	out        map[*outConn]struct{}
	outAborted bool
}

// newStreamLimit opens memberlist's NetTransport on addr:port (port 0 picks
// a free one, retrying a port taken between the TCP and UDP binds, as
// memberlist.Create does for its own) with its inbound streams bounded by
// max, and every stream's bytes by maxBytes.
func newStreamLimit(addr string, port, max int, maxBytes int64, logger *log.Logger) (*streamLimit, error) {
	tries := 1
	if port == 0 {
		tries = 10
	}
	var nt *memberlist.NetTransport
	var err error
	for range tries {
		nt, err = memberlist.NewNetTransport(&memberlist.NetTransportConfig{BindAddrs: []string{addr}, BindPort: port, Logger: logger})
		if err == nil || !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	if err != nil {
		if strings.Contains(err.Error(), "address already in use") {
			// memberlist formats the bind error away: keep it testable,
			// so that a caller trying ports can move on (errors.Is).
			err = fmt.Errorf("%v (%w)", err, syscall.EADDRINUSE)
		}
		return nil, fmt.Errorf("could not set up network transport: %w", err)
	}
	t := &streamLimit{NetTransport: nt, max: max, maxBytes: maxBytes, streams: make(chan net.Conn), done: make(chan struct{}), open: map[uint64]*limitedConn{},
		out: map[*outConn]struct{}{}}
	t.dialCtx, t.abortDial = context.WithCancel(context.Background())
	t.wg.Add(1)
	go t.forward()
	return t, nil
}

// StreamCh is where memberlist takes the inbound streams.
func (t *streamLimit) StreamCh() <-chan net.Conn { return t.streams }

// forward hands the NetTransport's streams to memberlist, tracked.
func (t *streamLimit) forward() {
	defer t.wg.Done()
	for {
		select {
		case c := <-t.NetTransport.StreamCh():
			lc := t.track(c)
			select {
			case t.streams <- lc:
			case <-t.done:
				lc.Close()
				return
			}
		case <-t.done:
			return
		}
	}
}

// track registers c as open, closing the oldest open stream if that makes
// one too many.
func (t *streamLimit) track(c net.Conn) *limitedConn {
	t.mu.Lock()
	lc := &limitedConn{Conn: newCapped(c, t.maxBytes), t: t, id: t.next}
	t.next++
	t.open[lc.id] = lc
	var oldest *limitedConn
	if len(t.open) > t.max {
		for _, o := range t.open {
			if oldest == nil || o.id < oldest.id {
				oldest = o
			}
		}
		delete(t.open, oldest.id)
		t.shed++
	}
	t.mu.Unlock()
	if oldest != nil {
		// Its handler's read fails and it closes it again: harmless.
		oldest.Conn.Close()
	}
	return lc
}

// Open reports how many inbound streams are open.
func (t *streamLimit) Open() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.open)
}

// Shutdown ends the outbound streams (abortDials), stops the NetTransport
// (memberlist still takes streams meanwhile: forward goes on handing them
// over), then forward, and closes
// the inbound streams still open, whose handlers would otherwise wait for
// their peers' bytes up to TCPTimeout. Calls after the first do nothing.
func (t *streamLimit) Shutdown() error {
	var err error
	t.stop.Do(func() {
		t.abortDials()
		err = t.NetTransport.Shutdown()
		close(t.done)
		t.wg.Wait()
		t.mu.Lock()
		open := make([]*limitedConn, 0, len(t.open))
		for _, c := range t.open {
			open = append(open, c)
		}
		t.mu.Unlock()
		for _, c := range open {
			c.Close()
		}
	})
	return err
}

// limitedConn is an inbound stream that leaves the open set when closed.
type limitedConn struct {
	net.Conn
	t    *streamLimit
	id   uint64
	once sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(func() {
		c.t.mu.Lock()
		delete(c.t.open, c.id)
		c.t.mu.Unlock()
	})
	return c.Conn.Close()
}
