package rendezvous

import (
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/netprobe"
)

// goneProbe bounds one probe that tells a dead rank 0 from a live one
// that refused this side (netprobe.ListenerGone): a live listener
// answers a dial at once and then waits for the client's bytes. A
// process being killed on a loaded host may keep its listener a while:
// goneProbes probes, so a refusal of the secret costs about a second.
const (
	goneProbe  = 250 * time.Millisecond
	goneProbes = 4
)

// rank0Gone reports whether rank 0's listener at addr is gone, probing
// up to goneProbes times.
func rank0Gone(addr string) bool {
	for range goneProbes {
		if netprobe.ListenerGone(addr, goneProbe) {
			return true
		}
	}
	return false
}

// rank0Failed is the error of a rank whose connection to rank 0 was cut
// (when: at which step) because rank 0's process ended. Of a handshake's
// error it keeps the step and the cut, not the handshake's ErrTLS: the
// peer died, it refused nothing.
func rank0Failed(cfg Config, when string, cause error) error {
	var e *errs.Error
	if errors.As(cause, &e) {
		cause = errors.New(e.Detail)
	}
	return errs.New("Rendezvous", cfg.Rank, 0, errs.ErrPEFailed,
		"PE 0 failed: its rendezvous at %s closed the connection %s (%v)", cfg.Addr, when, cause)
}

// isTimeout reports whether err is a deadline passing, not a cut.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// isCut reports whether err is the peer's end of a connection: an orderly
// close or a reset, what the kernel does to the sockets of a process that
// ends.
func isCut(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
