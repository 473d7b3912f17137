package membership

import (
	"errors"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/memberlist"
)

// DialTimeout and DialAddressTimeout cap the streams this process opens
// too (a seed address may be anyone's), and track them until closed so
// that abortDials can end them.
func (t *streamLimit) DialTimeout(addr string, timeout time.Duration) (net.Conn, error) {
	return t.DialAddressTimeout(memberlist.Address{Addr: addr}, timeout)
}

func (t *streamLimit) DialAddressTimeout(a memberlist.Address, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	c, err := d.DialContext(t.dialCtx, "tcp", a.Addr)
	if err != nil {
		return nil, err
	}
	return t.trackOut(newCapped(c, t.maxBytes))
}

// errDialsAborted is the error of a dial after abortDials.
var errDialsAborted = errors.New("gossip is shutting down")

// trackOut registers an outbound stream, or closes it when abortDials was
// called meanwhile.
func (t *streamLimit) trackOut(c net.Conn) (net.Conn, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.outAborted {
		c.Close()
		return nil, errDialsAborted
	}
	oc := &outConn{Conn: c, t: t}
	t.out[oc] = struct{}{}
	return oc, nil
}

// abortDials ends the dials in flight and closes the outbound streams
// open, and makes later dials fail: Form calls it when it gives up, before
// it waits for its joiner and senders, and Shutdown.
func (t *streamLimit) abortDials() {
	t.abortDial()
	t.mu.Lock()
	t.outAborted = true
	out := make([]*outConn, 0, len(t.out))
	for c := range t.out {
		out = append(out, c)
	}
	t.mu.Unlock()
	for _, c := range out {
		c.Close()
	}
}

// outConn is an outbound stream that leaves the open set when closed.
type outConn struct {
	net.Conn
	t    *streamLimit
	once sync.Once
}

func (c *outConn) Close() error {
	c.once.Do(func() {
		c.t.mu.Lock()
		delete(c.t.out, c)
		c.t.mu.Unlock()
	})
	return c.Conn.Close()
}
