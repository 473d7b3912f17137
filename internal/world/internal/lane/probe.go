package lane

import "fmt"

// Confirming a suspicion before declaring (the indirect probe of SWIM and
// Lifeguard): when a link goes silent for Timing.Silence, the silence may
// be the link's, not the peer's, and one PE's verdict is flooded to every
// PE. So the transport actor asks every other PE it is linked to whether
// it hears the peer (a probe frame on each of their links); a PE that had
// a frame from the peer within Timing.Silence refutes the suspicion, and
// the actor keeps the link and its heartbeats and starts its silence
// clock again. It declares the peer failed only when every PE asked
// denies, when no answer refutes within Timing.Probe, or when it has no
// other PE to ask. A connection reset, a failed write and an abort frame
// are definite and are declared at once, without probes.

// suspicion is a transport actor's open question about its peer.
type suspicion struct {
	on      bool
	round   int   // numbers the questions, so that a late answer to an old one is ignored
	since   int64 // when it was raised
	asked   int   // PEs asked; -1 until the probes are sent
	denied  int   // PEs that answered that they do not hear the peer
	refuted bool  // an answer refuted a suspicion (refuter's, the last)
	refuter int
}

// Events and actions of the probes.
type (
	// evProbeSent: the probes of round went to asked PEs.
	evProbeSent struct{ round, asked int }
	// evProbeAck: PE from answered round; age is how long ago it last
	// heard the peer, in ms, or noAge.
	evProbeAck struct {
		from, round int
		age         uint32
	}
	// evProbe: PE asker asks whether this PE hears the peer.
	evProbe struct{ asker, round int }

	// actProbe: ask every other linked PE whether it hears the peer.
	actProbe struct{ round int }
	// actProbeAck: answer asker's probe.
	actProbeAck struct {
		asker, round int
		age          uint32
	}
)

func (u *suspicion) clear() { u.on = false }

// raise opens a new suspicion at now and returns the action that asks.
func (u *suspicion) raise(now int64) actProbe {
	u.round++
	u.on, u.since, u.asked, u.denied = true, now, -1, 0
	return actProbe{u.round}
}

// verdict is the reason a confirmed suspicion declares the peer with.
func (u *suspicion) verdict(silent int64, bound string) string {
	switch {
	case u.asked == 0:
		return fmt.Sprintf("no frame for %d ms, and no other PE to ask", silent)
	case u.denied == u.asked:
		return fmt.Sprintf("no frame for %d ms, and none of the %d PEs asked hears it", silent, u.asked)
	}
	return fmt.Sprintf("no frame for %d ms, and none of the %d PEs asked heard it %s", silent, u.asked, bound)
}

func (s *peerState) probeSent(now int64, ev evProbeSent) []any {
	if !s.sus.on || ev.round != s.sus.round || s.phase != phaseUp {
		return nil
	}
	s.sus.asked = ev.asked
	if ev.asked == 0 {
		return s.lose(now, s.sus.verdict(now-s.direct, ""), detected)
	}
	return nil
}

func (s *peerState) probeAck(now int64, ev evProbeAck) []any {
	if !s.sus.on || ev.round != s.sus.round || s.phase != phaseUp {
		return nil // an answer to an older question, or too late
	}
	if ev.age != noAge && int64(ev.age) < s.t.Silence {
		// Another PE hears the peer: the link is what fails, not the
		// peer. Do not convict it; start the silence clock again and keep
		// heartbeating (a link that recovers ends the question for good).
		// The clock restarts; what this PE heard itself does not change.
		s.sus.clear()
		s.sus.refuted, s.sus.refuter = true, ev.from
		s.heard = now
		return nil
	}
	s.sus.denied++
	if s.sus.asked > 0 && s.sus.denied >= s.sus.asked {
		return s.lose(now, s.sus.verdict(now-s.direct, ""), detected)
	}
	return nil
}

// answer tells asker how long ago this PE last heard the peer: noAge
// without a live link or when this PE finds it silent too.
func (s *peerState) answer(now int64, ev evProbe) actProbeAck {
	a := actProbeAck{asker: ev.asker, round: ev.round, age: noAge}
	// Only a frame this PE had itself counts: a silence clock restarted by
	// another PE's answer would let two PEs that both lost the peer keep
	// refuting each other.
	if s.phase == phaseUp && !s.sus.on && now-s.direct < s.t.Silence && now >= s.direct {
		a.age = uint32(now - s.direct)
	}
	return a
}

// probe sends round's question about subject to every other PE with a
// direct link from this PE (routes dial or accept, not gone) and returns
// how many it asked. A probe is never relayed: the answer must come over
// a link that works.
func (l *Lane) probe(subject, round int) int {
	b := appendFrame(nil, &frame{kind: kindProbe, subject: subject, round: round})
	l.mu.Lock()
	var ask []int
	for r, role := range l.routes {
		if r != l.me && r != subject && !l.gone[r] && (role == RoleDial || role == RoleAccept) {
			ask = append(ask, r)
		}
	}
	l.mu.Unlock()
	for _, r := range ask {
		l.root.Send(l.peers[r], evSend{&out{b: b, name: "Probe", hop: true}})
	}
	l.log.Info("control lane: peer silent, asking the others", "peer", subject, "asked", ask)
	return len(ask)
}

// probeFrame hands a probe or probe-ack that came from PE from to the
// transport actor of its subject. A subject outside the world, this PE
// or the sender itself is dropped: only a third PE can confirm.
func (l *Lane) probeFrame(from int, f *frame) {
	if f.subject >= len(l.peers) || f.subject == l.me || f.subject == from {
		l.log.Warn("control lane: dropped a probe", "from", from, "subject", f.subject)
		return
	}
	if f.kind == kindProbe {
		l.root.Send(l.peers[f.subject], evProbe{asker: from, round: f.round})
		return
	}
	l.root.Send(l.peers[f.subject], evProbeAck{from: from, round: f.round, age: f.age})
}
