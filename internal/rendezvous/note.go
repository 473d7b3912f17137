package rendezvous

import (
	"fmt"
	"strings"
)

// handshakeFailed counts and logs a connection that did not authenticate.
// One that sent nothing (an idle socket that reached its deadline or was
// closed to make room for newer ones) is no PE with another secret, so it
// is counted apart, and one that hung up without a byte (a probe) not at
// all; refusals of strangers are
// logged at a bounded rate (admit), since strangers choose how many.
func (s *server) handshakeFailed(w *watchConn, remote string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, w.Conn)
	switch {
	case s.closed:
		// Closed by shut: the exchange is over.
	case w.silent() && isCut(w.end):
		// A peer that connected and hung up: a probe of whether rank
		// 0 lives (netprobe), or a port scan.
		s.cfg.Logger.Debug("rendezvous: a connection closed without a byte", "remote", remote)
	case w.silent():
		s.idle++
		s.acc.Refused("closed a connection that sent nothing", "remote", remote, "reason", err.Error())
	default:
		s.authFailed++
		s.lastAuthFailure = remote + ": " + err.Error()
		s.acc.Refused("refusing peer", "remote", remote, "reason", err.Error())
	}
}

// refused records a hello the table refused, for the verdict.
func (s *server) refused(reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refusedAll++
	if len(s.refusals) < maxRefusals {
		s.refusals = append(s.refusals, reason)
	}
}

// authNote is what a timeout verdict adds about the connections that came
// but did not register: refused hellos, failed authentications, and idle
// connections (those still pending and silent included).
func (s *server) authNote() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	if s.refusedAll > 0 {
		fmt.Fprintf(&b, "; refused %d hello(s): %s", s.refusedAll, strings.Join(s.refusals, "; "))
		if s.refusedAll > len(s.refusals) {
			b.WriteString("; ...")
		}
	}
	if s.authFailed > 0 {
		fmt.Fprintf(&b, "; %d connection(s) failed authentication, the last from %s (a PE started with another SHMEM_JOB_SECRET, unique ID or TLS setting?)",
			s.authFailed, s.lastAuthFailure)
	}
	idle := s.idle
	for _, w := range s.pending {
		if w.silent() {
			idle++
		}
	}
	if idle > 0 {
		fmt.Fprintf(&b, "; %d connection(s) sent nothing before their handshake deadline or were closed idle to make room (idle sockets: not PEs)", idle)
	}
	return b.String()
}
