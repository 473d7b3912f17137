package lane

import "fmt"

// This file is the transport actor's behaviour as a pure step function:
// peerState.step takes an event and the time, updates the state and
// returns the actions to run. It does no I/O and reads no clock, so every
// rule below is tested from scenario files (testdata/peer) without
// sockets; peer.go runs the actions.

// Role says how this PE reaches a peer's process (see Routes).
type Role uint8

const (
	RoleUnknown Role = iota // not decided yet: messages wait
	RoleDial                // this PE dials the peer
	RoleAccept              // the peer dials this PE
	RoleRelay               // messages travel through Route.Via
)

func (r Role) String() string {
	return [...]string{"unknown", "dial", "accept", "relay"}[r]
}

type phase uint8

const (
	phaseIdle    phase = iota // no route yet; an accepted link is taken
	phaseDialing              // a dial is under way or waits for its retry
	phaseWaiting              // waiting for the peer to dial
	phaseUp                   // linked
	phaseRelayed              // no link: messages go through a relay
	phaseClosing              // bye sent; waiting for the peer's end
	phaseLeft                 // the peer said bye
	phaseLost                 // the peer failed (detected here or told)
	phaseClosed               // closed by this side
)

func (p phase) String() string {
	return [...]string{"idle", "dialing", "waiting", "up", "relayed", "closing", "left", "lost", "closed"}[p]
}

// Timing holds the step's durations, in milliseconds.
type Timing struct {
	// Heartbeat is the tick interval: a linked peer is sent a heartbeat
	// every tick.
	Heartbeat int64
	// Silence is how long a link may stay without a frame from the peer
	// before the peer counts as failed; also how long a closing link
	// waits for the peer's end.
	Silence int64
	// Connect bounds how long a link takes to come up.
	Connect int64
	// Retry is the pause between dial attempts.
	Retry int64
	// Probe bounds how long a PE that found a link silent waits for the
	// other PEs it asked whether they hear the peer (probe.go) before it
	// declares the peer failed: a silent peer is declared within
	// Silence+Probe (and a tick).
	Probe int64
}

// AbortReason is the reason OnLost gives for a peer that closed its link
// after a failure of its own (its start-up failed): often another PE's
// failure, which the caller may know better.
const AbortReason = "it closed after a failure of its own (see its log)"

// maxQueue bounds the messages held while a link comes up.
const maxQueue = 1024

// out is an outbound message, already framed.
type out struct {
	b    []byte
	name string // for logs and scenarios
	hop  bool   // relayed for another PE: never relayed again
}

// peerState is one transport actor's state.
type peerState struct {
	t        Timing
	phase    phase
	role     Role
	via      int
	conn     int   // id of the link's connection, 0 without one
	since    int64 // when the phase began
	heard    int64 // when the silence clock started: the last frame, or a restart
	direct   int64 // when the last frame came (what probes are answered from)
	lastTick int64
	nextDial int64 // when to dial again, 0 for no retry pending
	queue    []*out
	abort    bool // this side closes after a failure of its own
	sus      suspicion
	// writeErr is the link's first failed write, at writeErrAt: it no
	// longer writes and waits for its reader's verdict (writefail.go).
	writeErr   string
	writeErrAt int64
}

// Events.
type (
	evRoute struct {
		role Role
		via  int
	}
	evDialed     struct{ conn int }
	evDialFailed struct{ reason string }
	evAccepted   struct{ conn int }
	evHeard      struct{ conn int }
	evBye        struct {
		conn  int
		abort bool // the peer closes after a failure of its own
	}
	evLost struct {
		conn   int
		reason string
	}
	evTick   struct{}
	evSend   struct{ m *out }
	evClose  struct{ abort bool }
	evFailed struct{} // the PE learned from elsewhere that the peer failed
)

// Actions.
type (
	actDial  struct{}
	actStop  struct{}           // cancel a dial under way
	actRead  struct{ conn int } // the connection is the link: read it
	actWrite struct {
		conn int
		m    *out
	}
	actHeartbeat struct{ conn int }
	actBye       struct { // write a bye (or an abort), then close the write side
		conn  int
		abort bool
	}
	actClose   struct{ conn int }
	actForward struct {
		via int
		m   *out
	}
	actDeclare struct { // the peer failed: tell the PE
		reason string
		linked bool // the link's connection ended: everything it carried was read first (connEnded)
	}
	actGone struct{ left bool } // the link ended: left on purpose or lost
	actDrop struct {
		m   *out
		why string
	}
	actDone struct{} // closed by this side: nothing more to do
)

// step applies ev at time now (milliseconds) and returns the actions.
func (s *peerState) step(now int64, ev any) []any {
	switch ev := ev.(type) {
	case evRoute:
		return s.route(now, ev)
	case evDialed:
		switch {
		case s.phase == phaseDialing:
			return s.up(now, ev.conn)
		case s.phase == phaseClosing && s.conn == 0:
			// Closed while the dial was under way: what waited goes
			// out, then the bye, so the peer does not wait for a link
			// that never comes.
			acts := s.up(now, ev.conn)
			s.enter(now, phaseClosing)
			return append(acts, actBye{ev.conn, s.abort})
		}
		return []any{actClose{ev.conn}}
	case evDialFailed:
		if s.phase == phaseClosing && s.conn == 0 {
			return s.closed(now)
		}
		if s.phase != phaseDialing {
			return nil
		}
		if now-s.since >= s.t.Connect {
			return s.lose(now, fmt.Sprintf("cannot connect within %d ms: %s", s.t.Connect, ev.reason), detected)
		}
		s.nextDial = now + s.t.Retry
		return nil
	case evAccepted:
		switch {
		case s.phase == phaseIdle, s.phase == phaseWaiting:
			return s.up(now, ev.conn)
		case s.phase == phaseClosing && s.conn == 0:
			// Closed while waiting for the peer's link (closeWaiting):
			// what waited goes out, then the bye.
			acts := s.up(now, ev.conn)
			s.enter(now, phaseClosing)
			return append(acts, actBye{ev.conn, s.abort})
		}
		return []any{actClose{ev.conn}} // a second link, or one too late
	case evHeard:
		if ev.conn == s.conn && s.phase == phaseUp {
			s.heard, s.direct = now, now
			s.sus.clear() // the peer itself refutes the suspicion
		}
		return nil
	case evProbeSent:
		return s.probeSent(now, ev)
	case evProbeAck:
		return s.probeAck(now, ev)
	case evProbe:
		return []any{s.answer(now, ev)}
	case evBye:
		if ev.conn != s.conn {
			return nil
		}
		switch {
		case s.phase == phaseUp && ev.abort:
			// It did not finish (its start-up failed): for the PEs that
			// wait for it, that is a failure.
			return s.lose(now, AbortReason, detected)
		case s.phase == phaseUp:
			s.enter(now, phaseLeft)
			return []any{actClose{ev.conn}, actGone{left: true}}
		case s.phase == phaseClosing:
			return s.closed(now)
		}
		return nil
	case evWriteFailed:
		return s.writeFailed(now, ev)
	case evLost:
		if ev.conn != s.conn {
			return nil
		}
		switch s.phase {
		case phaseUp:
			return s.lose(now, ev.reason, connEnded)
		case phaseClosing:
			return s.closed(now)
		}
		return nil
	case evTick:
		return s.tick(now)
	case evSend:
		switch {
		case s.phase == phaseUp && s.writeErr != "":
			return []any{actDrop{ev.m, "write failed: " + s.writeErr}}
		case s.phase == phaseUp:
			return []any{actWrite{s.conn, ev.m}}
		case s.phase == phaseRelayed:
			if ev.m.hop {
				return []any{actDrop{ev.m, "no second relay"}}
			}
			return []any{actForward{s.via, ev.m}}
		case s.phase == phaseIdle, s.phase == phaseDialing, s.phase == phaseWaiting:
			if len(s.queue) >= maxQueue {
				return []any{actDrop{ev.m, "queue full"}}
			}
			s.queue = append(s.queue, ev.m)
			return nil
		}
		return []any{actDrop{ev.m, "link " + s.phase.String()}}
	case evClose:
		return s.close(now, ev.abort)
	case evFailed:
		switch {
		case s.phase == phaseClosing && s.conn == 0:
			// Its link, which the close waits for, will not come.
			return s.closed(now)
		case s.phase == phaseLost, s.phase == phaseLeft, s.phase == phaseClosed, s.phase == phaseClosing:
			return nil
		}
		return s.lose(now, "", told)
	}
	return nil
}

func (s *peerState) enter(now int64, p phase) {
	s.phase, s.since = p, now
}

func (s *peerState) route(now int64, ev evRoute) []any {
	if s.phase != phaseIdle {
		return nil // routes are set once; a link accepted early stays
	}
	s.role, s.via = ev.role, ev.via
	switch ev.role {
	case RoleDial:
		s.enter(now, phaseDialing)
		return []any{actDial{}}
	case RoleAccept:
		s.enter(now, phaseWaiting)
	case RoleRelay:
		s.enter(now, phaseRelayed)
		acts := make([]any, 0, len(s.queue))
		for _, m := range s.queue {
			acts = append(acts, actForward{s.via, m})
		}
		s.queue = nil
		return acts
	}
	return nil
}

func (s *peerState) up(now int64, conn int) []any {
	s.enter(now, phaseUp)
	s.conn, s.heard, s.direct, s.nextDial = conn, now, now, 0
	s.writeErr = ""
	acts := []any{actRead{conn}}
	for _, m := range s.queue {
		acts = append(acts, actWrite{conn, m})
	}
	s.queue = nil
	return acts
}

// howKnown says how the failure lose records became known.
type howKnown uint8

const (
	told     howKnown = iota // the PE learned it from elsewhere: nothing to declare
	detected                 // this side detected it: declare it
	// connEnded: this side detected that the link's connection ended
	// (end of stream, reset) without a bye, its reader having delivered
	// everything the link carried: declare it, linked. A silent link, a
	// failed write or a link that never came up may still hold messages
	// that did not arrive, and are merely detected.
	connEnded
)

// lose ends the link because the peer failed, known as how says.
func (s *peerState) lose(now int64, reason string, how howKnown) []any {
	var acts []any
	switch {
	case s.conn != 0:
		acts = append(acts, actClose{s.conn})
	case s.phase == phaseDialing:
		acts = append(acts, actStop{})
	}
	for _, m := range s.queue {
		acts = append(acts, actDrop{m, "peer failed"})
	}
	s.queue = nil
	s.sus.clear()
	if how != told {
		acts = append(acts, actDeclare{reason: reason, linked: how == connEnded})
	}
	s.enter(now, phaseLost)
	return append(acts, actGone{left: false})
}

func (s *peerState) close(now int64, abort bool) []any {
	s.abort = abort
	switch {
	case s.phase == phaseClosing, s.phase == phaseClosed:
		return nil
	case s.phase == phaseUp:
		s.enter(now, phaseClosing)
		return []any{actBye{s.conn, abort}}
	case s.phase == phaseDialing && s.nextDial == 0:
		// A dial is under way: its link, if it comes, says bye.
		s.enter(now, phaseClosing)
		return nil
	case s.phase == phaseWaiting:
		// The peer dials, or its link is being handed over (the peer's
		// side is up once it sent its hello; this side takes the link
		// after reading it): the link must carry what waited (rank 0's
		// answers to a start-up round) and the bye or the abort, or the
		// peer takes this end for a death and names this PE as the one
		// that failed (a GlobalExit right after Init: a receiver that
		// left without a bye made another report a failure). Its link,
		// if it comes within Silence, carries them.
		s.enter(now, phaseClosing)
		return nil
	}
	var acts []any
	if s.phase == phaseDialing {
		acts = append(acts, actStop{})
	}
	for _, m := range s.queue {
		acts = append(acts, actDrop{m, "closing"})
	}
	s.queue = nil
	s.enter(now, phaseClosed)
	return append(acts, actDone{})
}

func (s *peerState) closed(now int64) []any {
	s.enter(now, phaseClosed)
	var acts []any
	if s.conn != 0 {
		acts = append(acts, actClose{s.conn})
	} else {
		acts = append(acts, actStop{})
	}
	for _, m := range s.queue {
		acts = append(acts, actDrop{m, "closing"})
	}
	s.queue = nil
	return append(acts, actDone{})
}

func (s *peerState) tick(now int64) []any {
	// A tick much later than due means this process did not run for a
	// while (stopped, descheduled): the peers' silence meanwhile says
	// nothing about them, so the silence clock starts again.
	// A suspicion raised before the pause is dropped for the same reason.
	if s.lastTick != 0 && now-s.lastTick > 2*s.t.Heartbeat {
		s.heard = now
		s.sus.clear()
	}
	s.lastTick = now
	switch {
	case s.phase == phaseUp && s.writeErr != "":
		return s.writeVerdict(now)
	case s.phase == phaseUp:
		acts := []any{actHeartbeat{s.conn}} // keep trying to reach it
		switch {
		case s.sus.on && now-s.sus.since >= s.t.Probe:
			return s.lose(now, s.sus.verdict(now-s.direct, "within "+fmt.Sprint(s.t.Probe)+" ms"), detected)
		case !s.sus.on && now-s.heard >= s.t.Silence:
			// Silence alone is a suspicion, not a verdict: the link may
			// be what failed. Ask the others first (probe.go).
			return append(acts, s.sus.raise(now))
		}
		return acts
	case s.phase == phaseDialing:
		if s.nextDial != 0 && now >= s.nextDial {
			s.nextDial = 0
			return []any{actDial{}}
		}
	case s.phase == phaseWaiting:
		if now-s.since >= s.t.Connect {
			return s.lose(now, fmt.Sprintf("it did not connect within %d ms", s.t.Connect), detected)
		}
	case s.phase == phaseClosing:
		if now-s.since >= s.t.Silence {
			return s.closed(now)
		}
	}
	return nil
}
