package rendezvous

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goshmem/shmem/internal/admit"
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

// departure is a registered rank's connection ending before the loop
// answered it.
type departure struct {
	rank  int
	cause error
}

// verdictGrace bounds how long rank 0, after a rank failed, goes on
// answering late ranks with the verdict (see tell).
const verdictGrace = time.Second

// server holds what the connection goroutines share with the loop.
type server struct {
	cfg        Config
	addr       string          // where the server listens, for messages
	ctx        context.Context // the caller's: cancellation closes everything
	deadline   time.Time
	arrivals   chan arrival
	departures chan departure
	done       chan struct{} // closed when the loop stops taking arrivals
	// final is what a connection that authenticates after the loop ended
	// is told (the verdict, or the table); written before done is closed.
	final []byte
	wg    sync.WaitGroup

	acc *admit.Acceptor // bounds the unauthenticated, rate-limits refusal lines

	mu      sync.Mutex
	pending map[net.Conn]*watchConn // connections not yet handed to the loop
	closed  bool
	// authFailed counts connections that failed authentication, and
	// lastAuthFailure says who and why: a rank started with another
	// SHMEM_JOB_SECRET or unique ID never arrives, and the verdict that
	// names it missing must say that it tried. idle counts connections
	// that sent nothing until their handshake deadline or their eviction:
	// idle sockets, which the verdict must not blame on a secret.
	authFailed      int
	lastAuthFailure string
	idle            int
	// refusals says which authenticated hellos the table refused (another
	// world size, a duplicate rank): a rank refused so never arrives, and
	// the verdict must say it came. Bounded by maxRefusals.
	refusals   []string
	refusedAll int
	// arrived is how many ranks the table holds, for probes.
	arrived atomic.Int32
}

// maxPending bounds unauthenticated connections, so that a flood of idle
// connections costs the server sockets only up to a limit; beyond it the
// oldest is closed (admit), so a rank arriving during a flood still gets
// in. One closed before rank 0 answered it is told admit.Busy, so that a
// rank, or its probe of whether rank 0 lives, knows it was shed; a rank
// whose connection is cut later retries too (connect).
func maxPending(npes int) int { return 4*npes + 64 }

// maxRefusals bounds the refused hellos the verdict quotes.
const maxRefusals = 4

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
		arrivals:   make(chan arrival),
		departures: make(chan departure),
		done:       make(chan struct{}),
		pending:    map[net.Conn]*watchConn{},
		acc: admit.New(ln, admit.Config{Name: "rendezvous", MaxPending: maxPending(cfg.NPEs), Logger: cfg.Logger,
			TellEvicted: true}),
	}
	tab := newTable(cfg.NPEs)
	tab.offer(0, uint32(cfg.NPEs), own)
	s.arrived.Store(1) // before the first probe can be answered
	s.wg.Add(1)
	go s.accept()
	res, err := s.loop(tab)
	ln.Close()
	s.shut()
	s.wg.Wait()
	return res, err
}

// loop collects arrivals until the table is full, a registered rank's
// connection drops, the deadline passes or ctx is cancelled, then answers
// every registered client with the table or the verdict.
func (s *server) loop(tab *table) ([][]byte, error) {
	timer := time.NewTimer(time.Until(s.deadline))
	defer timer.Stop()
	var registered []arrival
	var err error
	for err == nil && tab.collecting() {
		select {
		case a := <-s.arrivals:
			if rerr := tab.offer(a.hello.rank, a.hello.npes, a.hello.record); rerr != nil {
				s.cfg.Logger.Warn("rendezvous: refusing peer", "remote", a.remote, "reason", rerr.Error())
				s.refused(rerr.Error())
				a.reply <- appendFrame(nil, rejectFrame(rerr.Error()))
				continue
			}
			s.cfg.Logger.Debug("rendezvous: rank arrived", "rank", a.hello.rank, "remote", a.remote)
			s.arrived.Store(int32(tab.n))
			registered = append(registered, a)
		case d := <-s.departures:
			if tab.leave(d.rank) {
				err = errs.New("Rendezvous", 0, d.rank, errs.ErrPEFailed,
					"PE %d failed: its connection to the rendezvous at %s closed before every rank arrived (%v)", d.rank, s.addr, d.cause)
			}
		case <-timer.C:
			err = ctxErr(s.ctx, 0, errs.NoPE, rankList(tab.missing())+" had not arrived", "%s never arrived at %s within %v%s", rankList(tab.missing()), s.addr, s.cfg.Timeout, s.authNote())
		case <-s.ctx.Done():
			err = ctxErr(s.ctx, 0, errs.NoPE, rankList(tab.missing())+" had not arrived", "%s had not arrived", rankList(tab.missing()))
		}
	}
	var reply []byte
	switch {
	case tab.failed >= 0:
		s.cfg.Logger.Warn("rendezvous: a rank failed before the world formed", "rank", tab.failed, "err", err.Error())
		reply = appendFrame(nil, failedFrame(tab.failed, len(tab.records), "rank 0's rendezvous: "+err.Error()))
	case err != nil:
		reply = appendFrame(nil, rejectFrame("rank 0 gave up: "+err.Error()))
	default:
		for r, rec := range tab.records {
			reply = appendFrame(reply, frame{kind: kindRecord, rank: uint32(r), npes: uint32(len(tab.records)), record: rec})
		}
		s.cfg.Logger.Info("rendezvous: world formed", "npes", len(tab.records))
	}
	for _, a := range registered {
		a.reply <- reply
	}
	if tab.failed >= 0 {
		s.tell(tab, reply)
	}
	s.final = reply
	close(s.done)
	if err != nil {
		return nil, err
	}
	return tab.records, nil
}

// tell answers the ranks that arrive after a rank failed with that
// verdict, until every rank has arrived or verdictGrace (or the deadline)
// passes: ranks start a moment apart, and one that arrives just after the
// failure learns which PE failed rather than finding rank 0 gone.
func (s *server) tell(tab *table, verdict []byte) {
	d := verdictGrace
	if s.cfg.grace > 0 {
		d = s.cfg.grace
	}
	grace := time.NewTimer(min(d, time.Until(s.deadline)))
	defer grace.Stop()
	for !tab.full() {
		select {
		case a := <-s.arrivals:
			_ = tab.offer(a.hello.rank, a.hello.npes, a.hello.record) // told the verdict either way
			a.reply <- verdict
		case <-s.departures:
		case <-grace.C:
			return
		case <-s.ctx.Done():
			return
		}
	}
}

func (s *server) accept() {
	defer s.wg.Done()
	for {
		c, admitted, err := s.acc.Accept()
		if err != nil {
			// Closed by serve: no more peers come.
			return
		}
		w := &watchConn{Conn: c}
		if !s.track(w) {
			admitted()
			c.Close()
			continue
		}
		s.wg.Add(1)
		go s.handle(w, admitted)
	}
}

// track registers c as pending; false means refuse it (server stopping).
func (s *server) track(c *watchConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.pending[c.Conn] = c
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

func (s *server) handle(w *watchConn, admitted func()) {
	defer s.wg.Done()
	raw := w.Conn
	defer raw.Close()
	defer admitted()
	stop := context.AfterFunc(s.ctx, func() { raw.Close() })
	defer stop()
	remote := raw.RemoteAddr().String()
	refuse := func(reason string) {
		s.cfg.Logger.Warn("rendezvous: refusing peer", "remote", remote, "reason", reason)
	}
	var c net.Conn = w
	if s.cfg.ServerTLS != nil {
		c = tls.Server(w, s.cfg.ServerTLS)
	}
	dl := time.Now().Add(handshakeTimeout)
	if s.deadline.Before(dl) {
		dl = s.deadline
	}
	// Admitted once the rank's proof checks out, before rank 0's proof
	// goes out: a rank whose handshake completes is never shed after it.
	if err := secure.ServerHandshake(c, s.cfg.Secret, secure.ServiceRendezvous, dl, admitted); err != nil {
		if errors.Is(err, secure.ErrNotTLS) {
			// A rank without TLS: say so in its own plaintext, or its
			// side reads the cut as being turned away and retries for
			// its whole timeout (connect).
			raw.SetWriteDeadline(dl)
			raw.Write([]byte(tlsRequired))
		}
		s.handshakeFailed(w, remote, err)
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
	// From here every write is bounded by replyTimeout and the loop
	// answers every registered rank, also when ctx is cancelled ("rank 0
	// gave up"): the connection stays open for that answer.
	stop()
	if f.kind == kindProbe {
		s.write(c, appendFrame(nil, s.probeReply()))
		return
	}
	a := arrival{hello: f, remote: remote, reply: make(chan []byte, 1)}
	select {
	case s.arrivals <- a:
	case <-s.done:
		s.write(c, s.final)
		return
	}
	s.await(c, a)
}

// await writes the loop's answer to a registered rank and meanwhile reads
// its connection. A client sends nothing after its hello, so a read that
// ends means the rank's process is gone (the kernel closed its socket), or
// its Init was cancelled: the loop learns it at once as a departure, and
// ends the exchange naming the rank instead of waiting for the deadline.
func (s *server) await(c net.Conn, a arrival) {
	c.SetReadDeadline(time.Time{})
	gone := make(chan error, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		var b [1]byte
		_, err := c.Read(b[:])
		if err == nil {
			err = errors.New("it sent bytes after its hello")
		}
		gone <- err
	}()
	select {
	case reply := <-a.reply:
		s.write(c, reply)
	case err := <-gone:
		select {
		case s.departures <- departure{rank: int(a.hello.rank), cause: err}:
		case <-s.done:
		}
	}
}

// probeReply answers a Probe: how far the exchange is, and this host's
// clock, from which the prober estimates the skew between the hosts.
func (s *server) probeReply() frame {
	now := time.Now
	if s.cfg.clock != nil {
		now = s.cfg.clock
	}
	return frame{kind: kindProbeReply, rank: uint32(s.arrived.Load()), npes: uint32(s.cfg.NPEs),
		record: binary.BigEndian.AppendUint64(nil, uint64(now().UnixNano()))}
}

func (s *server) write(c net.Conn, b []byte) {
	c.SetWriteDeadline(time.Now().Add(replyTimeout))
	if _, err := c.Write(b); err != nil {
		s.cfg.Logger.Warn("rendezvous: reply failed", "remote", c.RemoteAddr().String(), "err", err.Error())
	}
}

type errKind byte

func (k errKind) Error() string { return "expected a hello frame, got kind " + strconv.Itoa(int(k)) }
