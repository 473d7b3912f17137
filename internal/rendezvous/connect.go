package rendezvous

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/goshmem/shmem/internal/admit"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/secure"
)

// watchConn counts the bytes read from a connection, so that a failed
// handshake tells a peer that said nothing from one that said something
// wrong: a silent peer is an idle socket (to rank 0) or a refusal before
// the handshake (to a rank), not a peer with another secret.
type watchConn struct {
	net.Conn
	got atomic.Int64
	// end is the first read or write error, read only by the goroutine
	// that reads and writes (the handshake's): a silent peer that hung up
	// is a probe; a connection that ended so is cut, not refused.
	end error
	// head is the first bytes read (the handshake's goroutine only), to
	// recognise rank 0's plaintext tlsRequired and admit.Busy.
	head  [max(len(tlsRequired), len(admit.Busy))]byte
	nhead int
}

// tlsRequired is what a rank 0 with TLS writes, in plaintext, to a rank
// whose first bytes are not TLS, before it closes the connection: without
// it that rank could not tell the refusal from being turned away at
// admission, and would retry until its timeout.
const tlsRequired = "goshmem rendezvous: TLS required\n"

func (w *watchConn) Read(b []byte) (int, error) {
	n, err := w.Conn.Read(b)
	w.nhead += copy(w.head[w.nhead:], b[:n])
	w.got.Add(int64(n))
	if err != nil && w.end == nil {
		w.end = err
	}
	return n, err
}

func (w *watchConn) Write(b []byte) (int, error) {
	n, err := w.Conn.Write(b)
	if err != nil && w.end == nil {
		w.end = err
	}
	return n, err
}

// silent reports whether nothing was read from the connection.
func (w *watchConn) silent() bool { return w.got.Load() == 0 }

// cut reports whether the connection ended by the peer's close or reset,
// as opposed to the peer saying why it refused (a refusal line, a TLS
// alert, a wrong proof).
func (w *watchConn) cut() bool { return w.end != nil && isCut(w.end) }

// connect dials rank 0 and authenticates, and returns the raw connection
// and the one to speak the exchange on. Rank 0 refuses a rank in so many
// words (a wrong secret: secure.ErrRefused; TLS on one side only:
// tlsRequired; TLS credentials: an alert), which fails at once. A
// connection that rank 0 merely cuts while its listener lives was turned
// away at admission (rank 0 sheds the oldest unauthenticated connection
// when strangers hold too many; admit.Busy says so when rank 0 had not
// answered yet): connect dials again, backing off, until ctx ends. Only a
// cut whose listener is gone is PE 0's failure.
func connect(ctx context.Context, cfg Config, deadline time.Time) (raw, c net.Conn, err error) {
	backoff := firstBackoff
	var cuts int
	var lastCut error
	for {
		if raw, err = dial(ctx, cfg.Addr); err != nil {
			if cuts > 0 {
				return nil, nil, turnedAway(ctx, cfg, cuts, lastCut)
			}
			return nil, nil, ctxErr(ctx, cfg.Rank, 0, fmt.Sprintf("rank 0 at %s had not answered when start-up was cancelled (last error: %v)", cfg.Addr, err),
				"rank 0 at %s did not answer within %v (last error: %v)", cfg.Addr, cfg.Timeout, err)
		}
		w := &watchConn{Conn: raw}
		c = w
		if cfg.ClientTLS != nil {
			c = tls.Client(w, clientTLS(cfg.ClientTLS, cfg.Addr))
		}
		// Closing the socket is what unblocks the handshake when ctx
		// ends; the deadline alone would not see a cancellation.
		stop := context.AfterFunc(ctx, func() { raw.Close() })
		err = secure.Handshake(c, cfg.Secret, secure.ServiceRendezvous, false, deadline)
		stopped := !stop()
		if err == nil && !stopped {
			return raw, c, nil
		}
		raw.Close()
		head := w.head[:w.nhead]
		switch {
		case ctx.Err() != nil:
			if cuts > 0 {
				return nil, nil, turnedAway(ctx, cfg, cuts, lastCut)
			}
			return nil, nil, ctxErr(ctx, cfg.Rank, 0, fmt.Sprintf("rank 0 at %s: start-up was cancelled during authentication", cfg.Addr),
				"rank 0 at %s: authentication did not finish within %v", cfg.Addr, cfg.Timeout)
		case errors.Is(err, secure.ErrOtherService):
			// Another endpoint of a job with this secret holds rank 0's
			// port: rank 0 cannot bind it while it does, and whatever
			// that endpoint does with this rank's hello says nothing of
			// rank 0. Said at once, not blamed on PE 0.
			return nil, nil, errs.New("Rendezvous", cfg.Rank, 0, fmt.Errorf("%w: %w", errs.ErrBootstrap, err),
				"%s is not rank 0's rendezvous: another listener of a job with this secret holds the unique ID's port", cfg.Addr)
		case errors.Is(err, secure.ErrRefused):
			return nil, nil, errs.New("Rendezvous", cfg.Rank, 0, err,
				"rank 0 at %s refused this rank's job secret (another SHMEM_JOB_SECRET, or a unique ID of another job?)", cfg.Addr)
		case isTimeout(err) || errors.Is(err, errs.ErrTimeout):
			return nil, nil, errs.New("Rendezvous", cfg.Rank, 0, err, "authenticate with rank 0 at %s", cfg.Addr)
		case string(head) == tlsRequired:
			return nil, nil, errs.New("Rendezvous", cfg.Rank, 0, fmt.Errorf("%w: %w", errs.ErrTLS, err),
				"rank 0 at %s uses TLS and this rank does not: the unique ID's TLS setting and this rank's disagree (WithoutTLS, or SMEM_CONF_STORE_TLS_ENABLE=0, on one side only?)", cfg.Addr)
		case admit.IsBusy(head):
			// Shed before rank 0 answered, and told so: rank 0 lives.
		case w.silent() || w.cut():
			// Cut, before or after rank 0 answered, without a word of
			// refusal: shed under load, unless rank 0 died. Rank 0
			// refusing nothing closes the connection exactly as its
			// death does; only a dead rank 0's port refuses new
			// connections (a probe that rank 0 sheds reads admit.Busy).
			if rank0Gone(cfg.Addr) {
				return nil, nil, rank0Failed(cfg, "during the handshake", err)
			}
		default:
			// Rank 0 spoke, and what it said refused this side (a TLS
			// alert, a proof that does not check out).
			return nil, nil, errs.New("Rendezvous", cfg.Rank, 0, err, "authenticate with rank 0 at %s", cfg.Addr)
		}
		cuts, lastCut = cuts+1, err
		cfg.Logger.Info("rendezvous: rank 0 is alive but closed the connection during the handshake; retrying",
			"rank", cfg.Rank, "addr", cfg.Addr, "attempt", cuts, "retry_in", backoff)
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, turnedAway(ctx, cfg, cuts, lastCut)
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// turnedAway is the error of a rank that rank 0, alive, kept turning away
// until the deadline.
func turnedAway(ctx context.Context, cfg Config, cuts int, last error) error {
	return ctxErr(ctx, cfg.Rank, 0,
		fmt.Sprintf("rank 0 at %s is alive but had closed this rank's connection during the handshake %d time(s) when start-up was cancelled; the last: %v", cfg.Addr, cuts, last),
		"rank 0 at %s is alive but closed this rank's connection during the handshake %d time(s) within %v (too many connections waiting to authenticate there, or a TLS setting other than rank 0's?); the last: %v",
		cfg.Addr, cuts, cfg.Timeout, last)
}
