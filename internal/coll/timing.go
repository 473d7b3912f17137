package coll

// OpTimer is a Runtime that hears when each of its team operations
// (barrier, sync, data collective) starts and returns: the simulator's
// network times them for sim.Report.Calls. seq is the operation's number
// on the team, the same on every member.
type OpTimer interface {
	TeamOp(team string, seq uint64, op string, end bool)
}

// timeOp tells t's runtime, if it times operations, that the operation
// just numbered (op) starts, or with end that it returns; t.mu is held.
func (t *Team) timeOp(op string, end bool) {
	if tm, ok := t.rt.(OpTimer); ok {
		tm.TeamOp(t.a.ID(), decodeOp(t.cur.Load()).Seq, op, end)
	}
}
