package coll

// OpTimer is a Runtime that hears when each of its team operations
// (barrier, sync, data collective) starts and returns: the simulator's
// network times them for sim.Report.Calls. seq is the operation's number
// on the team, the same on every member.
type OpTimer interface {
	TeamOp(team string, seq uint64, op string, end bool)
	// TimesTeamOps reports whether TeamOp does anything; it must not
	// change once the runtime makes its first team.
	TimesTeamOps() bool
}

// timerOf returns rt as an OpTimer when it times team operations, else
// nil: a team looks it up once, so that an operation without timing pays
// one nil check where it paid an interface assertion and a call.
func timerOf(rt Runtime) OpTimer {
	if tm, ok := rt.(OpTimer); ok && tm.TimesTeamOps() {
		return tm
	}
	return nil
}

// timeOp tells t's runtime, if it times operations, that the operation
// just numbered (op) starts, or with end that it returns; t.mu is held.
func (t *Team) timeOp(op string, end bool) {
	if t.timer != nil {
		t.timer.TeamOp(t.a.ID(), decodeOp(t.cur.Load()).Seq, op, end)
	}
}
