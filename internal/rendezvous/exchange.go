// Package rendezvous forms a multi-process world: an all-gather in which
// every rank contributes one opaque record and receives all records in rank
// order (the unique-ID bootstrap of CANN SHMEM). Rank 0 serves; every
// connection is authenticated with the job secret (package secure), over
// TLS unless the caller turns TLS off, before any other byte is read.
package rendezvous

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/secure"
)

// MaxRecord is the largest record a rank may contribute.
const MaxRecord = 64 << 10

// MaxNPEs bounds the world size the wire format is asked to carry: the one
// limit of bootstrap.MaxNPEs.
const MaxNPEs = bootstrap.MaxNPEs

// DefaultTimeout is used when Config.Timeout is zero. A launcher starts the
// processes of a job over many hosts seconds apart (image pulls, slow node
// start-up, rank 0 itself may come last), so the wait must be generous; a
// minute still fails a broken job quickly enough for a person to notice.
const DefaultTimeout = 60 * time.Second

// handshakeTimeout bounds the time one connection may take to authenticate
// and send its hello; an honest peer needs milliseconds, and the bound keeps
// silent connections from occupying the server for the whole Timeout.
const handshakeTimeout = 10 * time.Second

// replyTimeout bounds the server's write of the table (or a reject) to one
// client: a client that cannot take it in this time is presumed dead.
const replyTimeout = 10 * time.Second

// Config describes one rank's part in the exchange.
type Config struct {
	// Addr is the host:port rank 0 listens on and the other ranks dial.
	// Required, except on rank 0 when Listener is set.
	Addr string
	// Listener, on rank 0 only, is used instead of listening on Addr (for
	// example a listener on port 0 in tests). Exchange closes it.
	Listener net.Listener
	// Rank is this process's rank in [0, NPEs); rank 0 serves.
	Rank int
	// NPEs is the world size, 1..MaxNPEs; every rank must agree on it.
	NPEs int
	// Secret is the job secret every connection proves knowledge of; at
	// least secure.MinSecretLen bytes. Required even without TLS.
	Secret []byte
	// ServerTLS (rank 0) and ClientTLS (other ranks) wrap the connections;
	// nil means plain TCP, which the caller should log as a warning. A
	// ClientTLS that verifies names and has no ServerName gets the host of
	// Addr.
	ServerTLS *tls.Config
	ClientTLS *tls.Config
	// Timeout bounds the whole exchange; zero means DefaultTimeout. A
	// deadline on ctx that comes sooner wins.
	Timeout time.Duration
	// Logger receives the server's reasons for refusing peers; nil
	// discards them.
	Logger *slog.Logger

	// grace replaces verdictGrace (tests).
	grace time.Duration
	// clock replaces time.Now for the clock rank 0 reports to a Probe
	// (tests: a host whose clock is off).
	clock func() time.Time
}

// bootstrapTimeout is the sentinel pair every timeout of the exchange wraps.
var bootstrapTimeout = fmt.Errorf("%w: %w", errs.ErrBootstrap, errs.ErrTimeout)

// Exchange runs the all-gather: it returns npes records, where records[i]
// is rank i's record (a copy; record itself is not retained). Rank 0 serves
// until all ranks have arrived and received the table; the others dial Addr,
// retrying until the deadline because rank 0 may start later.
//
// A rank whose connection rank 0 cuts before saying a byte, while rank 0's
// listener lives, was turned away (rank 0 closes its oldest unauthenticated
// connection when strangers hold too many): it dials again until the
// deadline.
//
// Errors: ErrInvalidArgument for a bad Config; ErrTLS when a peer fails
// authentication; ErrPEFailed naming the rank (the error's Target) when a
// rank that had registered loses its connection before the world formed,
// on rank 0 and on every rank waiting for it or arriving within a grace
// after, and naming PE 0 on a rank whose connection rank 0 cut without an
// answer (its process ended) or whose handshake it cut with its listener
// gone; ErrBootstrap for a refused or broken exchange, and with
// secure.ErrOtherService on a rank that found another listener of a job
// with this secret (say a PE's control lane) at Addr; ErrTimeout
// (with ErrBootstrap) when the deadline passes, naming the missing ranks on
// rank 0 and rank 0's address elsewhere; ctx's error (with ErrBootstrap)
// when ctx is cancelled. No goroutine or socket outlives the call.
func Exchange(ctx context.Context, cfg Config, record []byte) ([][]byte, error) {
	if err := validate(&cfg, record); err != nil {
		if cfg.Listener != nil {
			cfg.Listener.Close()
		}
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	deadline := time.Now().Add(cfg.Timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	if cfg.Rank == 0 {
		return serve(ctx, cfg, deadline, record)
	}
	return join(ctx, cfg, deadline, record)
}

func validate(cfg *Config, record []byte) error {
	bad := func(detail string, args ...any) error {
		return errs.New("Rendezvous", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, detail, args...)
	}
	switch {
	case cfg.NPEs < 1 || cfg.NPEs > MaxNPEs:
		return bad("npes %d out of range 1..%d", cfg.NPEs, MaxNPEs)
	case cfg.Rank < 0 || cfg.Rank >= cfg.NPEs:
		return bad("rank %d out of range 0..%d", cfg.Rank, cfg.NPEs-1)
	case len(record) > MaxRecord:
		return bad("record of %d bytes exceeds %d", len(record), MaxRecord)
	case len(cfg.Secret) < secure.MinSecretLen:
		return bad("job secret is %d bytes, need at least %d", len(cfg.Secret), secure.MinSecretLen)
	case cfg.Timeout < 0:
		return bad("negative timeout %v", cfg.Timeout)
	case cfg.Listener != nil && cfg.Rank != 0:
		return bad("a listener is only for rank 0, this is rank %d", cfg.Rank)
	case cfg.Addr == "" && (cfg.Rank != 0 || cfg.Listener == nil) && cfg.NPEs > 1:
		return bad("no address for rank 0")
	}
	return nil
}

// ctxErr explains why the exchange stopped: the caller's cancellation,
// with canceled (what was under way, already formatted), or the deadline,
// with detail formatted with args (what says which PEs or address to blame
// is in both). A cancelled start-up is not described as a wait that ran
// its whole timeout: it may have been cut short after milliseconds.
func ctxErr(ctx context.Context, rank, target int, canceled, detail string, args ...any) error {
	if err := ctx.Err(); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return errs.New("Rendezvous", rank, target, fmt.Errorf("%w: %w", errs.ErrBootstrap, err), "%s", canceled)
	}
	return errs.New("Rendezvous", rank, target, bootstrapTimeout, detail, args...)
}
