package lane

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/goshmem/shmem/internal/admit"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/secure"
)

// dialPeer connects to rank's lane: TCP, TLS when configured, the
// job-secret handshake, then this PE's hello. Cancelling ctx aborts it at
// any step.
func (l *Lane) dialPeer(ctx context.Context, rank int) (net.Conn, error) {
	deadline := time.Now().Add(l.cfg.HandshakeTimeout)
	raw, err := (&net.Dialer{Deadline: deadline}).DialContext(ctx, "tcp", l.addrs[rank])
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	defer stop()
	head := &headConn{Conn: raw}
	c, err := l.handshake(head, false, deadline, nil)
	if err != nil {
		raw.Close()
		if admit.IsBusy(head.head[:head.n]) {
			return nil, fmt.Errorf("PE %d's control listener is busy (too many connections waiting to authenticate there) and turned this one away", rank)
		}
		return nil, err
	}
	_ = c.SetWriteDeadline(deadline)
	if _, err := c.Write(appendFrame(nil, &frame{kind: kindHello, from: l.me, to: rank})); err != nil {
		raw.Close()
		return nil, fmt.Errorf("hello to PE %d: %w", rank, err)
	}
	_ = c.SetWriteDeadline(time.Time{})
	if !stop() { // cancelled meanwhile: raw is closed
		return nil, ctx.Err()
	}
	return c, nil
}

// handshake runs TLS (when configured) and the job-secret handshake on
// raw, bounded by deadline. On the server side verified runs once the
// peer's proof checked out (secure.ServerHandshake).
func (l *Lane) handshake(raw net.Conn, server bool, deadline time.Time, verified func()) (net.Conn, error) {
	var c net.Conn = raw
	switch {
	case server && l.cfg.ServerTLS != nil:
		c = tls.Server(raw, l.cfg.ServerTLS)
	case !server && l.cfg.ClientTLS != nil:
		c = tls.Client(raw, l.cfg.ClientTLS)
	}
	var err error
	if server {
		err = secure.ServerHandshake(c, l.cfg.Secret, secure.ServiceControl, deadline, verified)
	} else {
		err = secure.Handshake(c, l.cfg.Secret, secure.ServiceControl, false, deadline)
	}
	if err != nil {
		return nil, err
	}
	return c, nil
}

// acceptLoop serves the listener until Close. Accept errors other than
// the listener's close (EMFILE, ...) are retried by the acceptor: one
// exhausted moment must not end the lane for good. Beyond the bound of
// connections in their handshake a newer one closes the oldest (telling it
// admit.Busy if this side had not spoken yet), so strangers holding idle
// sockets cannot lock the world's PEs out.
func (l *Lane) acceptLoop() {
	defer l.wg.Done()
	for {
		raw, admitted, err := l.acc.Accept()
		if err != nil {
			return // the listener closed: Close
		}
		id := l.track(raw)
		if id == 0 {
			admitted()
			return
		}
		l.wg.Add(1)
		go l.admit(id, raw, admitted)
	}
}

// admit authenticates an accepted connection and hands it to the
// transport actor of the PE its hello names. Nothing is read from the
// connection before the handshake, and only a hello before the hand-over.
func (l *Lane) admit(id int, raw net.Conn, admitted func()) {
	defer l.wg.Done()
	defer admitted()
	fail := func(err error) {
		l.log.Debug("control lane: refused a connection", "remote", raw.RemoteAddr().String(), "err", err)
		raw.Close()
		l.untrack(id)
	}
	deadline := time.Now().Add(l.cfg.HandshakeTimeout)
	stop := context.AfterFunc(l.life, func() { raw.Close() })
	defer stop()
	// Admitted once the peer's proof checks out, before this side's proof
	// goes out: a dialer whose handshake completes is never shed after
	// it, which it would take for this PE's failure.
	head := &headConn{Conn: raw} // whether the peer said a byte
	c, err := l.handshake(head, true, deadline, admitted)
	if err != nil {
		// Logged through the acceptor, at most a line a second: the
		// peer may be any stranger, and its connections as many as it
		// likes. One that hung up without a byte is a liveness probe
		// (netprobe) or a port scan, not worth a warning.
		switch {
		case errors.Is(err, secure.ErrOtherService):
			// A goshmem client of another service dialed this port
			// (its hello proves no secret): a rendezvous client means
			// this listener holds the unique ID's port, which its
			// ranks must hear of.
			l.acc.Refused("refused a client of another service", "remote", raw.RemoteAddr().String(), "err", err)
		case head.n > 0:
			l.acc.Refused("refused a connection", "remote", raw.RemoteAddr().String(), "err", err)
		}
		fail(err)
		return
	}
	_ = c.SetReadDeadline(deadline)
	f, err := readFrame(c)
	if err == nil && f.kind != kindHello {
		err = fmt.Errorf("%w: first frame of kind %d, want a hello", errFrame, f.kind)
	}
	if err != nil {
		fail(err)
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	// A peer may finish the exchange first and dial before this PE knows
	// the world; it waits here, authenticated, for Join.
	select {
	case <-l.joined:
	case <-l.life.Done():
		fail(l.life.Err())
		return
	case <-time.After(time.Until(deadline)):
		fail(errors.New("the world was not known in time"))
		return
	}
	if f.to != l.me || f.from >= len(l.peers) || f.from == l.me {
		fail(errs.New("Init", l.me, f.from, errs.ErrBootstrap, "hello from PE %d to PE %d", f.from, f.to))
		return
	}
	l.mu.Lock()
	if l.conns[id] != nil {
		l.conns[id] = c // the TLS conn closes the socket too
	}
	l.mu.Unlock()
	l.root.Send(l.peers[f.from], acceptedConn{id, c})
}

// headConn keeps the first bytes read from a dialed connection, to
// recognise admit.Busy, which the peer's listener writes in plaintext when
// it sheds connections under load.
type headConn struct {
	net.Conn
	head [len(admit.Busy)]byte
	n    int
}

func (h *headConn) Read(b []byte) (int, error) {
	n, err := h.Conn.Read(b)
	h.n += copy(h.head[h.n:], b[:n])
	return n, err
}

// CloseWrite half-closes the connection (the bye, see actBye).
func (h *headConn) CloseWrite() error {
	if cw, ok := h.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

func isClosed(err error) bool { return errors.Is(err, net.ErrClosed) }
