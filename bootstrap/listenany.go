package bootstrap

import (
	"net"
	"slices"

	"github.com/goshmem/shmem/internal/errs"
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
// are closed before returning.
func listenAvoiding(host string, skip []int, listen listenFunc) (net.Listener, error) {
	addr := net.JoinHostPort(host, "0")
	var held []net.Listener
	defer func() {
		for _, h := range held {
			h.Close()
		}
	}()
	// Each skipped port the kernel hands out is held, so len(skip)+1
	// tries end with a port not in skip.
	for range len(skip) + 1 {
		ln, err := listen("tcp", addr)
		if err != nil {
			return nil, errs.New("Listen", errs.NoPE, errs.NoPE, errs.ErrBootstrap, "listen on %s: %v", host, err)
		}
		port := 0
		if a, ok := ln.Addr().(*net.TCPAddr); ok {
			port = a.Port
		}
		if !slices.Contains(skip, port) {
			return ln, nil
		}
		held = append(held, ln)
	}
	return nil, errs.New("Listen", errs.NoPE, errs.NoPE, errs.ErrBootstrap,
		"listen on %s: the kernel kept choosing ports to skip (%v, the rendezvous's)", host, skip)
}
