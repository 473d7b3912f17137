package world

import "slices"

// Failure notices are flooded over the reach graph, so that a PE learns of
// a failure even when it cannot connect to the failed PE or to the PE that
// detected it (a relayed pair).
//
// The rule: the detector (the notice's origin) tells every PE it can
// connect to; a PE that records the failure first from a notice forwards
// it, once, to the PEs it can connect to that the origin cannot. A PE
// records a failure once (the PE actor, package pe), so it forwards at most once per
// failed PE, whatever number of notices and detectors.
//
// Why every survivor hears: take a PE m that heard, from a notice with
// origin o, and a PE q that m connects to. If o connects to q, o told q;
// if not, m did. So the set of PEs that hear is closed under "connects
// to", and every survivor that the reach graph joins to a detector hears.
// Rank 0 and every PE connect to each other (checked at start-up, see
// checkRankZero), so when a PE other than rank 0 fails, the survivors are
// joined through rank 0; when rank 0 fails, every PE detects it itself, as
// each holds a connection to rank 0's coordinator.
//
// What it costs: nothing when the origin connects to every PE (one host,
// a flat network, or rank 0 detecting, which holds a connection to every
// PE); otherwise one notice per PE outside the origin's reach from each PE
// that reaches it. Forwarded notices name the origin, and their reason is
// the origin's.

// floodTargets returns the PEs that me tells about failed, having first
// heard of it from origin (origin == me: me detected it). reach[a][b]
// says a can connect to b, as agreed at start-up; skip excludes PEs that
// need no notice (failed, or gone). An origin outside the world counts as
// reaching nobody, so every PE me reaches is told.
func floodTargets(reach [][]bool, me, origin, failed int, skip func(r int) bool) []int {
	var out []int
	known := origin >= 0 && origin < len(reach) && origin != me
	for q, ok := range reach[me] {
		if !ok || q == me || q == failed || q == origin || skip(q) {
			continue
		}
		if known && reach[origin][q] {
			continue // the origin told q itself
		}
		out = append(out, q)
	}
	return out
}

// coordinatorTarget is a floodNotice's to when the notice is for rank 0's
// coordinator, which aborts the agreements the failed PE was part of.
const coordinatorTarget = -1

// floodState is one PE's side of the failure flood, as a pure step: the
// PE records a failure (floodState.step), and the notices to send come
// out. It holds what the rule needs: the agreed reach graph and the
// failures already recorded (told once, and never told of).
type floodState struct {
	reach [][]bool
	me    int
	known []bool // by rank: recorded as failed here
}

// floodNotice is one notice to send: to learns that failed failed, as
// origin detected.
type floodNotice struct {
	to, failed, origin int
}

func newFloodState(reach [][]bool, me int) *floodState {
	return &floodState{reach: reach, me: me, known: make([]bool, len(reach))}
}

// step records that failed failed, detected by origin (me: detected
// here), and returns the notices to send: the peers floodTargets names,
// minus the PEs known failed, and rank 0's coordinator when this PE
// detected the failure of a PE other than rank 0 (while rank 0 lives).
// A failure recorded before, or one of a PE outside the world, returns
// nothing.
func (f *floodState) step(failed, origin int) []floodNotice {
	if failed < 0 || failed >= len(f.known) || failed == f.me || f.known[failed] {
		return nil
	}
	f.known[failed] = true
	var out []floodNotice
	if origin == f.me && failed != 0 && !f.known[0] {
		out = append(out, floodNotice{coordinatorTarget, failed, origin})
	}
	for _, q := range floodTargets(f.reach, f.me, origin, failed, func(q int) bool { return f.known[q] }) {
		out = append(out, floodNotice{q, failed, origin})
	}
	return slices.Clip(out)
}
