package rdma

import (
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/goshmem/shmem/internal/admit"
)

// Admission of data connections. The listener keeps at most admit's bound
// of connections in their handshake; a newer one closes the oldest, and
// tells it admit.Busy when this side had not written to it yet
// (admit.Config.TellEvicted). A connection leaves that count once the
// client's proof checked out, before this side's proof goes out
// (Authenticate calls Verified, see secure.VerifiedHook): a client whose
// handshake completed is never shed after it. A client shed before that
// dials again (lane.ready), so a flood of strangers delays a lane and
// does not cut it.

// acceptedConn is an accepted connection during its handshake, over the
// socket itself (admit.Raw, so that the serving loop keeps its busyConn):
// its first write tells the acceptor that this side spoke (admit.Speak),
// after which an eviction only closes it, and Verified admits it.
type acceptedConn struct {
	net.Conn
	owner    net.Conn // what the acceptor returned
	admitted func()
	spoke    bool // handshake writes come from one goroutine
}

func (c *acceptedConn) Write(b []byte) (int, error) {
	if !c.spoke {
		if !admit.Speak(c.owner) {
			return 0, &net.OpError{Op: "write", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: net.ErrClosed}
		}
		c.spoke = true
	}
	return c.Conn.Write(b)
}

// Verified admits the connection: its client proved the job secret.
func (c *acceptedConn) Verified() { c.admitted() }

// headConn keeps the first bytes a dialed connection reads during its
// handshake, to recognise admit.Busy, and how its reads ended.
type headConn struct {
	net.Conn
	head [len(admit.Busy)]byte
	n    int
	err  error // the first read error
}

func (h *headConn) Read(b []byte) (int, error) {
	n, err := h.Conn.Read(b)
	h.n += copy(h.head[h.n:], b[:n])
	if err != nil && h.err == nil {
		h.err = err
	}
	return n, err
}

// busy reports whether the listener turned the connection away as busy.
func (h *headConn) busy() bool { return admit.IsBusy(h.head[:h.n]) }

// cut reports whether the peer closed or reset the connection.
func (h *headConn) cut() bool {
	return errors.Is(h.err, io.EOF) || errors.Is(h.err, io.ErrUnexpectedEOF) || errors.Is(h.err, syscall.ECONNRESET)
}
