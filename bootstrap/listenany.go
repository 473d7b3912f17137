package bootstrap

import (
	"net"

	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/portskip"
)

// listenFunc is net.Listen's signature, so that a test can hand
// listenAvoiding the kernel's choice it needs.
type listenFunc func(network, address string) (net.Listener, error)

// listenAvoiding listens on host at a port the kernel chooses, other than
// those in skip. The unique ID's rendezvous port is such a port: rank 0
// binds it only at its rendezvous, after every PE has opened its control
// and data listeners, and when the ID's port lies in the kernel's
// ephemeral range (an ID from a port a test or launcher found free and
// released) the kernel may hand that very port to a PE's listener on
// port 0. The other ranks then dial that PE's listener, which holds the
// job's credentials and so passes their authentication, and rank 0
// cannot bind its port, or binds it after that PE gave up: the ranks
// blame PE 0 while rank 0 waits for them (a CI run of
// examples/allgather, 8 PEs). A skipped port is held open while the
// kernel is asked again, so it cannot be handed back; the held listeners
// are closed before returning (portskip.Open, which the fabric node's
// endpoint shares).
func listenAvoiding(host string, skip []int, listen listenFunc) (net.Listener, error) {
	return portskip.Open("Listen", errs.NoPE, "listen on "+host, skip, func() (net.Listener, int, error) {
		ln, err := listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, 0, errs.New("Listen", errs.NoPE, errs.NoPE, errs.ErrBootstrap, "listen on %s: %v", host, err)
		}
		port := 0
		if a, ok := ln.Addr().(*net.TCPAddr); ok {
			port = a.Port
		}
		return ln, port, nil
	}, func(ln net.Listener) { ln.Close() })
}
