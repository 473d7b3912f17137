package lane

// A write that fails does not decide why the link ended: the reader does.
// A peer that closes after a failure of its own sends an abort, then
// closes; a write of this side racing with that close fails (broken pipe,
// reset) while the abort still waits, read, in the socket's buffer. Taken
// as the verdict, the write error named the peer as the PE that failed
// where the abort would have said it only followed another's failure
// (the fault suite's Init over shared memory, seed 1796334207592823086).
// So the link stops writing and waits for what the reader finds: the
// abort, a bye, or the end of the stream. The reader may find nothing (a
// write that timed out on a peer that stopped reading): the write error
// is then the verdict after writeGrace.

// evWriteFailed is a write on the link's connection that failed.
type evWriteFailed struct {
	conn   int
	reason string
}

// writeGrace is how long, in heartbeats, a link whose write failed waits
// for its reader's verdict; checked at the ticks, so the verdict comes
// within one more heartbeat.
const writeGrace = 1

// writeFailed records the first failed write of the link and stops its
// writes; the verdict is the reader's, or the write's at the tick after
// writeGrace (writeVerdict).
func (s *peerState) writeFailed(now int64, ev evWriteFailed) []any {
	if ev.conn != s.conn {
		return nil
	}
	switch s.phase {
	case phaseUp:
		if s.writeErr == "" {
			s.writeErr, s.writeErrAt = ev.reason, now
		}
	case phaseClosing:
		return s.closed(now)
	}
	return nil
}

// writeVerdict is the tick of a link whose write failed: it ends the link
// with the write's error once the reader has said nothing for writeGrace.
func (s *peerState) writeVerdict(now int64) []any {
	if now-s.writeErrAt >= writeGrace*s.t.Heartbeat {
		return s.lose(now, s.writeErr, detected)
	}
	return nil
}
