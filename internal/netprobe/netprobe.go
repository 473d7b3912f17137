// Package netprobe tells a peer process that has ended from one that is
// alive but silent or refusing, for start-up steps that would otherwise
// wait for their timeout, or blame a dead peer's cut connection on
// authentication.
package netprobe

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
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

// ProcessGone reports whether the process pid of this host has ended:
// kill(pid, 0) fails with ESRCH, or the process is a zombie that its
// parent has not reaped yet (a PE killed a moment ago, whose launcher has
// not waited for it: signals still reach a zombie). Only for a process
// known to run in this PID namespace: elsewhere its pid means nothing
// here.
func ProcessGone(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil {
		return errors.Is(err, syscall.ESRCH)
	}
	return zombie(pid)
}

// zombie reports whether /proc says pid has exited (state Z or X); false
// when it cannot tell.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses and
	// may itself hold spaces and parentheses: it is after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	state := b[i+2]
	return state == 'Z' || state == 'X'
}
