package rendezvous

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/goshmem/shmem/internal/errs"
)

// Dial retry: start fast because rank 0 is usually up already, back off
// so that many ranks waiting for a late rank 0 do not flood it.
const (
	firstBackoff = 20 * time.Millisecond
	maxBackoff   = time.Second
)

func join(parent context.Context, cfg Config, deadline time.Time, record []byte) ([][]byte, error) {
	ctx, cancel := context.WithDeadline(parent, deadline)
	defer cancel()
	fail := func(sentinel error, detail string, args ...any) error {
		return errs.New("Rendezvous", cfg.Rank, 0, sentinel, detail, args...)
	}
	raw, c, err := connect(ctx, cfg, deadline)
	if err != nil {
		return nil, err
	}
	defer raw.Close()
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	defer stop()
	stopped := func(err error, what string) error {
		if ctx.Err() != nil {
			return ctxErr(ctx, cfg.Rank, 0, fmt.Sprintf("rank 0 at %s: start-up was cancelled during %s", cfg.Addr, what),
				"rank 0 at %s: %s did not finish within %v", cfg.Addr, what, cfg.Timeout)
		}
		return fail(errs.ErrBootstrap, "rank 0 at %s: %s: %v", cfg.Addr, what, err)
	}
	c.SetDeadline(deadline)
	hello := appendFrame(nil, frame{kind: kindHello, rank: uint32(cfg.Rank), npes: uint32(cfg.NPEs), record: record})
	if _, err := c.Write(hello); err != nil {
		if ctx.Err() == nil && !isTimeout(err) {
			return nil, rank0Failed(cfg, "while this rank sent its hello", err)
		}
		return nil, stopped(err, "send hello")
	}
	// Registered: rank 0, which started before this hello, answers every
	// registered rank by its own deadline, at most Timeout from now, with
	// the table or a verdict that names the ranks that never arrived. So
	// this rank waits for that verdict rather than timing out first with
	// nothing to say (ranks started before rank 0 have earlier deadlines).
	stop()
	verdict := time.Now().Add(cfg.Timeout + replyTimeout)
	if d, ok := parent.Deadline(); ok && d.Before(verdict) {
		verdict = d
	}
	c.SetDeadline(verdict)
	stopVerdict := context.AfterFunc(parent, func() { raw.Close() })
	defer stopVerdict()
	waiting := func(err error, got int) error {
		if parent.Err() != nil || time.Now().After(verdict) || isTimeout(err) {
			return ctxErr(parent, cfg.Rank, 0, fmt.Sprintf("rank 0 at %s had sent no table and no verdict when start-up was cancelled", cfg.Addr),
				"rank 0 at %s sent no table and no verdict within %v of this rank's hello: rank 0 is stuck or its host unreachable", cfg.Addr, cfg.Timeout+replyTimeout)
		}
		if isCut(err) {
			// Rank 0 answers every registered rank before it closes
			// the connection: a connection cut without an answer is
			// rank 0's process gone.
			return rank0Failed(cfg, fmt.Sprintf("while this rank received the table (%d of %d records)", got, cfg.NPEs), err)
		}
		return fail(errs.ErrBootstrap, "rank 0 at %s: receive the table: %v", cfg.Addr, err)
	}
	out := make([][]byte, cfg.NPEs)
	for i := range out {
		f, err := readFrame(c)
		if err != nil {
			return nil, waiting(err, i)
		}
		switch {
		case f.kind == kindReject:
			return nil, fail(errs.ErrBootstrap, "rank 0 at %s refused this rank: %s", cfg.Addr, f.reason)
		case f.kind == kindFailed && int64(f.rank) < int64(cfg.NPEs):
			return nil, errs.New("Rendezvous", cfg.Rank, int(f.rank), errs.ErrPEFailed,
				"PE %d failed before the world formed, as rank 0 at %s saw: %s", f.rank, cfg.Addr, f.reason)
		case f.kind != kindRecord:
			return nil, fail(errs.ErrBootstrap, "rank 0 at %s sent frame kind %d, want a record", cfg.Addr, f.kind)
		case int64(f.rank) != int64(i) || int64(f.npes) != int64(cfg.NPEs):
			return nil, fail(errs.ErrBootstrap, "rank 0 at %s sent record %d of %d, want %d of %d", cfg.Addr, f.rank, f.npes, i, cfg.NPEs)
		}
		out[i] = f.record
	}
	return out, nil
}

// dial connects to addr, retrying with backoff until ctx ends, and returns
// the last dial error if it never succeeds.
func dial(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	backoff := firstBackoff
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c, nil
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// clientTLS fills in the server name from addr when the configuration
// verifies names and names no server.
func clientTLS(base *tls.Config, addr string) *tls.Config {
	if base.ServerName != "" || base.InsecureSkipVerify {
		return base
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return base
	}
	c := base.Clone()
	c.ServerName = host
	return c
}
