package rdma

import (
	"errors"
	"net"
	"time"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/netprobe"
)

// gonePeerProbe bounds the probe that tells a peer that died during a
// handshake from one that refused it (netprobe.ListenerGone): a dead
// listener refuses or resets at once; a live one stays silent this long.
const gonePeerProbe = time.Second

// goneNoticeWait bounds how long a failed handshake waits for the control
// lane's verdict on the peer when its listener still answers (a process
// being killed may close its connections before its listener). The
// control lane reports a killed PE within milliseconds; a peer that truly
// refused the secret costs this much before ErrTLS.
const goneNoticeWait = 5 * time.Second

// handshakeErr is the error of a data-lane handshake (what: "TLS
// handshake", "authenticating") that failed with err. A peer whose
// process ended mid-handshake (a kill -9 just after Init) closes the
// connection exactly as a peer that refused this side's secret does, so
// the cause alone cannot tell them apart. Its listener and the control
// lane can: a dead process's port refuses a new connection, and the
// control lane declares it failed (the lane is told: l.dead). So a
// handshake that failed while the peer's listener is gone, or whose peer
// is declared failed within goneNoticeWait, is the peer's failure,
// ErrPEFailed naming it; only one whose peer lives on is ErrTLS.
func (l *lane) handshakeErr(op, what string, err error) error {
	n := l.p.n
	if l.deadNow() {
		return l.errFor(op)
	}
	var ne net.Error
	if !(errors.As(err, &ne) && ne.Timeout()) {
		if netprobe.ListenerGone(l.addr, gonePeerProbe) {
			return errs.New(op, n.cfg.Rank, l.p.peer, errs.ErrPEFailed,
				"PE %d's process ended during the data-lane handshake with %s (%s: %v; its port now refuses connections)", l.p.peer, l.addr, what, err)
		}
		t := time.NewTimer(goneNoticeWait)
		defer t.Stop()
		select {
		case <-l.dead:
			return l.errFor(op)
		case <-t.C:
		}
	}
	// The job-secret handshake's error already carries ErrTLS (and
	// ErrTimeout): its detail and sentinel are kept once, so the message
	// does not end "TLS failure: TLS failure".
	sentinel, cause := errs.ErrTLS, err
	if e := (*errs.Error)(nil); errors.As(err, &e) && errors.Is(err, errs.ErrTLS) {
		sentinel, cause = e.Err, errors.New(e.Detail)
	}
	return errs.New(op, n.cfg.Rank, l.p.peer, sentinel, "%s with %s: %v", what, l.addr, cause)
}
