// Package netprobe tells a peer process that has ended from one that is
// alive but silent or refusing, for start-up steps that would otherwise
// wait for their timeout, or blame a dead peer's cut connection on
// authentication.
package netprobe

import (
	"errors"
	"io"
	"net"
	"syscall"
	"time"
)

// ListenerGone reports whether nothing listens at addr any more, judged
// within about 2×within: the address refuses a connection (ECONNREFUSED),
// or accepts one and resets or closes it before within passes without a
// byte (a listener of a process being killed accepts into its backlog and
// then resets). A listener of goshmem waits for the client's first bytes,
// so a live one answers neither way: a connection that stays silent, or a
// dial that times out, says the peer may be alive. The caller must only
// ask of an address the peer was known to listen on.
func ListenerGone(addr string, within time.Duration) bool {
	c, err := net.DialTimeout("tcp", addr, within)
	if err != nil {
		return errors.Is(err, syscall.ECONNREFUSED)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(within))
	var b [1]byte
	_, err = c.Read(b[:])
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

// ProcessGone reports whether the process pid of this host has ended
// (kill(pid, 0) fails with ESRCH). Only for a process known to run in
// this PID namespace: elsewhere its pid means nothing here.
func ProcessGone(pid int) bool {
	return pid > 0 && errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
