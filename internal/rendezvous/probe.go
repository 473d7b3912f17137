package rendezvous

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/secure"
)

// ProbeResult is what a Probe learned from rank 0's rendezvous.
type ProbeResult struct {
	// RTT is the round trip of the probe frame, after authentication.
	RTT time.Duration
	// Skew is rank 0's clock minus this host's, estimated at the middle
	// of the round trip: good to about RTT/2. Hosts whose clocks differ
	// by seconds confuse logs and certificate validity checks.
	Skew time.Duration
	// Arrived is how many ranks (rank 0 included) had joined, of NPEs.
	Arrived, NPEs int
}

// Probe checks that this host reaches the rendezvous at cfg.Addr and that
// it authenticates with cfg.Secret (and cfg.ClientTLS), and reads rank 0's
// clock and progress, without joining the exchange. It is what
// shmem-config --diagnose runs for a unique ID. cfg.Rank and cfg.NPEs are
// not used. Errors name the step that failed: ErrTimeout or ErrBootstrap
// when rank 0 does not answer, ErrTLS when authentication fails.
func Probe(ctx context.Context, cfg Config) (ProbeResult, error) {
	const op = "Probe"
	if cfg.Timeout == 0 {
		cfg.Timeout = handshakeTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	raw, err := dial(ctx, cfg.Addr)
	if err != nil {
		return ProbeResult{}, ctxErr(ctx, errs.NoPE, 0, fmt.Sprintf("rank 0's rendezvous at %s had not answered when the probe was cancelled (last error: %v)", cfg.Addr, err),
			"rank 0's rendezvous at %s did not answer within %v (last error: %v)", cfg.Addr, cfg.Timeout, err)
	}
	defer raw.Close()
	stop := context.AfterFunc(ctx, func() { raw.Close() })
	defer stop()
	c := raw
	if cfg.ClientTLS != nil {
		c = tls.Client(raw, clientTLS(cfg.ClientTLS, cfg.Addr))
	}
	deadline, _ := ctx.Deadline()
	if err := secure.Handshake(c, cfg.Secret, secure.ServiceRendezvous, false, deadline); err != nil {
		return ProbeResult{}, errs.New(op, errs.NoPE, 0, err, "authenticate with rank 0 at %s", cfg.Addr)
	}
	c.SetDeadline(deadline)
	sent := time.Now()
	if _, err := c.Write(appendFrame(nil, frame{kind: kindProbe})); err != nil {
		return ProbeResult{}, errs.New(op, errs.NoPE, 0, errs.ErrBootstrap, "rank 0 at %s: send probe: %v", cfg.Addr, err)
	}
	f, err := readFrame(c)
	got := time.Now()
	switch {
	case err != nil:
		return ProbeResult{}, errs.New(op, errs.NoPE, 0, errs.ErrBootstrap, "rank 0 at %s: read probe reply: %v", cfg.Addr, err)
	case f.kind == kindReject:
		return ProbeResult{}, errs.New(op, errs.NoPE, 0, errs.ErrBootstrap, "rank 0 at %s refused the probe: %s", cfg.Addr, f.reason)
	case f.kind != kindProbeReply:
		return ProbeResult{}, errs.New(op, errs.NoPE, 0, errs.ErrBootstrap, "rank 0 at %s answered the probe with frame kind %d", cfg.Addr, f.kind)
	}
	rtt := got.Sub(sent)
	remote := time.Unix(0, int64(binary.BigEndian.Uint64(f.record)))
	mid := sent.Add(rtt / 2)
	return ProbeResult{RTT: rtt, Skew: remote.Sub(mid), Arrived: int(f.rank), NPEs: int(f.npes)}, nil
}
