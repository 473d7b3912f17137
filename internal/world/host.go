package world

import (
	"net"
	"os"
	"time"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/secure"
)

func (j *joiner) credentials() error {
	t := j.cfg.TLS
	switch {
	case t != nil && t.Insecure:
		j.log.Warn("TLS is off: control and data connections are plain TCP, authenticated by the job secret only")
		return nil
	case t != nil:
		j.serverTLS, j.clientTLS = t.Server, t.Client
		return nil
	}
	s, c, err := secure.JobConfigs(j.cfg.UID.Secret[:])
	if err != nil {
		return errs.As("Init", j.cfg.Rank, err) // wraps ErrTLS already: once, not twice
	}
	j.serverTLS, j.clientTLS = s, c
	return nil
}

// authenticate proves the job secret on every data connection, after TLS
// and before any frame: even with TLS off no peer without the secret gets
// a frame processed. On an accepted connection the data listener is told
// once the client's proof checked out (secure.VerifiedHook), before this
// side's proof goes out, so that a flood of strangers cannot shed a
// client whose handshake has completed.
func (j *joiner) authenticate(c net.Conn, server bool) error {
	deadline := time.Now().Add(10 * time.Second)
	if server {
		return secure.ServerHandshake(c, j.cfg.UID.Secret[:], secure.ServiceData, deadline, secure.VerifiedHook(c))
	}
	return secure.Handshake(c, j.cfg.UID.Secret[:], secure.ServiceData, false, deadline)
}

func (j *joiner) listenHost() (string, error) {
	if j.cfg.ListenHost != "" {
		return j.cfg.ListenHost, nil
	}
	h, _, err := net.SplitHostPort(j.cfg.UID.Addr)
	if err != nil {
		return "", j.fail(errs.ErrInvalidArgument, "unique ID address %q: %v", j.cfg.UID.Addr, err)
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return h, nil
	}
	ifaces, err := bootstrap.SystemIfaces()
	if err != nil {
		return "", err
	}
	ch, err := bootstrap.SelectListenAddr(os.Getenv, ifaces)
	if err != nil {
		return "", err
	}
	return ch.Host, nil
}

// sharesHost reports whether another PE of recs maps this PE's heap.
func (j *joiner) sharesHost(recs []record) bool {
	for r, rec := range recs {
		if r != j.cfg.Rank && j.sameHost(rec) {
			return true
		}
	}
	return false
}

// sameHost reports whether rec's PE and this one map each other's heaps:
// same host, and the network path not forced.
func (j *joiner) sameHost(rec record) bool { return rec.Host == j.hostID && !j.cfg.Network }
