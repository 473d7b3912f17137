package core

import "github.com/goshmem/shmem/transport"

// Net is a simulated network for a LocalWorld (the simulator's Lazy
// delivery, seeded scheduling, fault injection and cost model): it wraps
// each PE's bell and each data path, and hears when a PE blocks on
// something that is neither (a control-plane agreement), so a scheduler
// that runs one PE at a time can let the others run meanwhile.
type Net interface {
	// Bell wraps PE rank's bell; mem is its heap. The bell it returns may
	// be a PeerChecker.
	Bell(rank int, b transport.Bell, mem []byte) transport.Bell
	// Path returns the path from PE from to PE to; mappable says whether
	// Ptr may hand the target's heap out (same node). A PE asks for it at
	// every call (Config.PathTo), so the network makes paths on first use
	// and a world of n PEs holds no n² table of them.
	Path(from, to int, mappable bool) transport.Path
	// Block is called by PE rank before it blocks outside its paths and
	// bell, in the coordinator's round seq of domain among members PEs;
	// it calls the returned function once it runs again.
	Block(rank int, domain string, seq uint64, members int) (resume func())
	// TeamOp hears PE rank start (end false) and return from operation
	// seq of a team (Config.TeamOp).
	TeamOp(rank int, team string, seq uint64, op string, end bool)
}

// PeerChecker is a bell whose network, not real time, decides when a PE
// blocked in a wait reads its peers' state (the simulator's scheduler wakes
// its waiting PEs for that when no PE can run): the checks then cost
// nothing while the world progresses, and a seeded run replays them.
type PeerChecker interface {
	// CheckDue reports whether the waiting PE checks its peers now.
	CheckDue() bool
	// OnCheck registers wake, which a round of checks calls when the PE
	// is blocked in an agreement (outside the schedule): such a waiter
	// sleeps until something happens, not on a timer.
	OnCheck(wake func())
	// Poll is a scheduling point of a call that reads only the PE's own
	// heap and returns at once (Test and its forms, SignalFetch), which
	// programs call in a loop: the others run, writes in flight land.
	Poll()
}

// Poll is a scheduling point for a call that reads only this PE's heap
// (PeerChecker.Poll) under the simulator's scheduler; elsewhere it costs
// a nil check.
func (p *PE) Poll() {
	if c := p.s.checks; c != nil {
		c.Poll()
	}
}

// ScheduledChecks reports whether a simulated network's scheduler, not
// real time, decides when this PE's waits check their peers (PeerChecker):
// a check then runs only once the world stands still.
func (p *PE) ScheduledChecks() bool { return p.s.checks != nil }
