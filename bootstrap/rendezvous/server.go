package rendezvous

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/secure"
)

// arrival is one authenticated hello, handed from a connection's goroutine
// to the server loop, which always answers on reply exactly once.
type arrival struct {
	hello  frame
	remote string
	reply  chan []byte // encoded table or reject
}

// server holds what the connection goroutines share with the loop.
type server struct {
	cfg      Config
	addr     string          // where the server listens, for messages
	ctx      context.Context // the caller's: cancellation closes everything
	deadline time.Time
	arrivals chan arrival
	done     chan struct{} // closed when the loop stops taking arrivals
	wg       sync.WaitGroup

	mu      sync.Mutex
	pending map[net.Conn]struct{} // connections not yet handed to the loop
	closed  bool
	// authFailed counts connections that failed authentication, and
	// lastAuthFailure says who and why: a rank started with another
	// SHMEM_JOB_SECRET or unique ID never arrives, and the verdict that
	// names it missing must say that it tried.
	authFailed      int
	lastAuthFailure string
	// arrived is how many ranks the table holds, for probes.
	arrived atomic.Int32
}

// maxPending bounds unauthenticated connections, so that a flood of idle
// connections costs the server sockets only up to a limit.
func maxPending(npes int) int { return 4*npes + 64 }

func serve(ctx context.Context, cfg Config, deadline time.Time, record []byte) ([][]byte, error) {
	own := append([]byte(nil), record...)
	if cfg.NPEs == 1 {
		if cfg.Listener != nil {
			cfg.Listener.Close()
		}
		return [][]byte{own}, nil
	}
	ln := cfg.Listener
	if ln == nil {
		var lc net.ListenConfig
		var err error
		if ln, err = lc.Listen(ctx, "tcp", cfg.Addr); err != nil {
			return nil, errs.New("Rendezvous", 0, errs.NoPE, errs.ErrBootstrap, "listen on %s: %v", cfg.Addr, err)
		}
	}
	s := &server{
		cfg: cfg, addr: ln.Addr().String(), ctx: ctx, deadline: deadline,
		arrivals: make(chan arrival),
		done:     make(chan struct{}),
		pending:  map[net.Conn]struct{}{},
	}
	s.wg.Add(1)
	go s.accept(ln)
	tab := newTable(cfg.NPEs)
	tab.offer(0, uint32(cfg.NPEs), own)
	s.arrived.Store(1)
	res, err := s.loop(tab)
	ln.Close()
	s.shut()
	s.wg.Wait()
	return res, err
}

// loop collects arrivals until the table is full, the deadline passes or
// ctx is cancelled, then answers every registered client.
func (s *server) loop(tab *table) ([][]byte, error) {
	timer := time.NewTimer(time.Until(s.deadline))
	defer timer.Stop()
	var registered []arrival
	var err error
	for err == nil && !tab.full() {
		select {
		case a := <-s.arrivals:
			if rerr := tab.offer(a.hello.rank, a.hello.npes, a.hello.record); rerr != nil {
				s.cfg.Logger.Warn("rendezvous: refusing peer", "remote", a.remote, "reason", rerr.Error())
				a.reply <- appendFrame(nil, rejectFrame(rerr.Error()))
				continue
			}
			s.cfg.Logger.Debug("rendezvous: rank arrived", "rank", a.hello.rank, "remote", a.remote)
			s.arrived.Store(int32(tab.n))
			registered = append(registered, a)
		case <-timer.C:
			err = ctxErr(s.ctx, 0, errs.NoPE, "%s never arrived at %s within %v%s", rankList(tab.missing()), s.addr, s.cfg.Timeout, s.authNote())
		case <-s.ctx.Done():
			err = ctxErr(s.ctx, 0, errs.NoPE, "%s had not arrived", rankList(tab.missing()))
		}
	}
	close(s.done)
	var reply []byte
	if err != nil {
		reply = appendFrame(nil, rejectFrame("rank 0 gave up: "+err.Error()))
	} else {
		for r, rec := range tab.records {
			reply = appendFrame(reply, frame{kind: kindRecord, rank: uint32(r), npes: uint32(len(tab.records)), record: rec})
		}
		s.cfg.Logger.Info("rendezvous: world formed", "npes", len(tab.records))
	}
	for _, a := range registered {
		a.reply <- reply
	}
	if err != nil {
		return nil, err
	}
	return tab.records, nil
}

func (s *server) accept(ln net.Listener) {
	defer s.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			// Closed by serve, or broken: either way no more peers come.
			return
		}
		if !s.track(c) {
			c.Close()
			continue
		}
		s.wg.Add(1)
		go s.handle(c)
	}
}

// track registers c as pending; false means refuse it (server stopping, or
// too many pending connections).
func (s *server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if len(s.pending) >= maxPending(s.cfg.NPEs) {
		s.cfg.Logger.Warn("rendezvous: refusing peer", "remote", c.RemoteAddr().String(), "reason", "too many unauthenticated connections")
		return false
	}
	s.pending[c] = struct{}{}
	return true
}

// untrack hands c from the pending set to its goroutine; false means the
// server already closed it.
func (s *server) untrack(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	delete(s.pending, c)
	return true
}

// shut closes every connection that has not reached the loop.
func (s *server) shut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for c := range s.pending {
		c.Close()
	}
}

func (s *server) handle(raw net.Conn) {
	defer s.wg.Done()
	defer raw.Close()
	stop := context.AfterFunc(s.ctx, func() { raw.Close() })
	defer stop()
	remote := raw.RemoteAddr().String()
	refuse := func(reason string) {
		s.cfg.Logger.Warn("rendezvous: refusing peer", "remote", remote, "reason", reason)
	}
	var c net.Conn = raw
	if s.cfg.ServerTLS != nil {
		c = tls.Server(raw, s.cfg.ServerTLS)
	}
	dl := time.Now().Add(handshakeTimeout)
	if s.deadline.Before(dl) {
		dl = s.deadline
	}
	if err := secure.Handshake(c, s.cfg.Secret, true, dl); err != nil {
		refuse(err.Error())
		s.mu.Lock()
		s.authFailed++
		s.lastAuthFailure = remote + ": " + err.Error()
		s.mu.Unlock()
		return
	}
	// From here the peer knows the secret: it gets told why it is refused.
	c.SetReadDeadline(dl)
	f, err := readFrame(c)
	if err == nil && f.kind != kindHello && f.kind != kindProbe {
		err = errKind(f.kind)
	}
	if err != nil {
		refuse("bad hello: " + err.Error())
		s.write(c, appendFrame(nil, rejectFrame("bad hello: "+err.Error())))
		return
	}
	if !s.untrack(raw) {
		return
	}
	if f.kind == kindProbe {
		s.write(c, appendFrame(nil, s.probeReply()))
		return
	}
	a := arrival{hello: f, remote: remote, reply: make(chan []byte, 1)}
	select {
	case s.arrivals <- a:
	case <-s.done:
		s.write(c, appendFrame(nil, rejectFrame("the exchange is over")))
		return
	}
	s.write(c, <-a.reply)
}

// probeReply answers a Probe: how far the exchange is, and this host's
// clock, from which the prober estimates the skew between the hosts.
func (s *server) probeReply() frame {
	return frame{kind: kindProbeReply, rank: uint32(s.arrived.Load()), npes: uint32(s.cfg.NPEs),
		record: binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano()))}
}

// authNote is what a timeout verdict adds about failed authentications.
func (s *server) authNote() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.authFailed == 0 {
		return ""
	}
	return fmt.Sprintf("; %d connection(s) failed authentication, the last from %s (a PE started with another SHMEM_JOB_SECRET, unique ID or TLS setting?)",
		s.authFailed, s.lastAuthFailure)
}

func (s *server) write(c net.Conn, b []byte) {
	c.SetWriteDeadline(time.Now().Add(replyTimeout))
	if _, err := c.Write(b); err != nil {
		s.cfg.Logger.Warn("rendezvous: reply failed", "remote", c.RemoteAddr().String(), "err", err.Error())
	}
}

type errKind byte

func (k errKind) Error() string { return "expected a hello frame, got kind " + strconv.Itoa(int(k)) }
