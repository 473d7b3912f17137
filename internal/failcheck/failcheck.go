// Package failcheck is the table of failure scenarios that every backend
// must survive: what each PE of a small world does (a mistake, a death, a
// GlobalExit) and what each must get, from the call and from its Finalize.
// The simulator's tests run it in one process; world's process tests run
// it through their PE program (one process per PE), so every backend is
// held to the same table.
package failcheck

import (
	"errors"
	"fmt"
	"strings"

	"github.com/goshmem/shmem"
)

// Class is what an error is, for comparison across processes: "nil",
// "InvalidArgument", "PEFailed", "Timeout", "Deadlock", "Finalized",
// "Exit:<status>" or "other".
type Class string

// ClassOf classifies err.
func ClassOf(err error) Class {
	if s, ok := shmem.ExitStatus(err); ok {
		return Class(fmt.Sprintf("Exit:%d", s))
	}
	for _, c := range []struct {
		s error
		c Class
	}{{shmem.ErrInvalidArgument, "InvalidArgument"}, {shmem.ErrPEFailed, "PEFailed"}, {shmem.ErrTimeout, "Timeout"},
		{shmem.ErrDeadlock, "Deadlock"}, {shmem.ErrFinalized, "Finalized"}} {
		if errors.Is(err, c.s) {
			return c.c
		}
	}
	if err == nil {
		return "nil"
	}
	return "other"
}

// Scenario is one row of the table.
type Scenario struct {
	Name string
	NPEs int
	// Body is PE p's part; its error is what the PE got.
	Body func(p *shmem.PE) error
	// Want and Fin are the classes PE r's Body and Finalize must return;
	// "-" means the PE does not report (it died: a process exits non-zero
	// without Finalize).
	Want, Fin func(r int) Class
	// Say lists what PE r's error must say, if it has one.
	Say func(r int) []string
	// SimOnly: only the simulator runs it (deadlock detection).
	SimOnly bool
	// Timeout, if positive, is the WithOpTimeout (sim.WithOpTimeout) the
	// PEs run with.
	Timeout int // milliseconds
	// TimeoutOn, if set, lists the only PEs that run with Timeout. The
	// simulator gives every PE the same timeout, so it skips such a
	// scenario (internal/core's tests hold its in-process world to the
	// same case).
	TimeoutOn []int
	// SimRun, if set, is what sim.Run's error must say although every
	// PE's function returned nil: the simulator fails a PE that returns
	// holding a lock.
	SimRun []string
}

// OneLine returns a complaint when msg, the error a PE got, is not one
// line or quotes a goroutine stack (a failed PE's panic must reach the
// others as one line of reason), "" when it is fine.
func OneLine(msg string) string {
	if strings.Contains(msg, "\n") || strings.Contains(msg, "goroutine ") {
		return fmt.Sprintf("is not one line of reason (%d bytes)", len(msg))
	}
	return ""
}

func all(c Class) func(int) Class { return func(int) Class { return c } }

func but(pe int, c, others Class) func(int) Class {
	return func(r int) Class {
		if r == pe {
			return c
		}
		return others
	}
}

// died is a row where PE victim dies (body arranges it): every other
// PE's call and Finalize fail with ErrPEFailed, and their errors say
// says (the call and the victim).
func died(name string, npes, victim int, body func(p *shmem.PE) error, says ...string) Scenario {
	return Scenario{Name: name, NPEs: npes, Body: body,
		Want: but(victim, "-", "PEFailed"), Fin: but(victim, "-", "PEFailed"),
		Say: func(int) []string { return says }}
}

// Died is the exit status of a PE that a scenario kills.
const Died = 9

// Scenarios returns the table.
func Scenarios() []Scenario {
	return []Scenario{
		{Name: "finalize-vs-barrier", NPEs: 4, Body: split(1, "Finalize", "BarrierAll"),
			Want: but(1, "nil", "PEFailed"), Fin: all("nil"),
			Say: func(r int) []string {
				return []string{"BarrierAll", "PE 1 called Finalize while this PE waits in BarrierAll"}
			}},
		{Name: "finalize-vs-team-barrier", NPEs: 4, Body: teamRow(0, "Barrier", leaves, "returns"),
			Want: members(0, "PEFailed", "nil", "nil"), Fin: all("nil"),
			Say: func(r int) []string {
				return []string{"Barrier", "PE 1 called Finalize while this PE waits in Barrier"}
			}},
		{Name: "team-barrier-member-dies", NPEs: 4, Body: teamRow(0, "Barrier", diesNow, "returns"),
			Want: members(0, "PEFailed", "-", "nil"), Fin: but(1, "-", "PEFailed"),
			Say: func(r int) []string { return []string{"Barrier", "PE 1"} }},
		// Sub-teams: PEs 0-2 or 1-3 of 4 (teamRow, teamSplit); the PE
		// outside the team gets what its own call, or its Finalize, says.
		{Name: "dies-in-team-reduce", NPEs: 4, Body: teamRow(0, "Reduce", diesNow, "BarrierAll"),
			Want: members(0, "PEFailed", "-", "PEFailed"), Fin: but(1, "-", "PEFailed"),
			Say: teamSays(0, []string{"Reduce", "PE 1"}, []string{"BarrierAll", "PE 1"})},
		{Name: "team-sync-member-dies", NPEs: 4, Body: teamRow(1, "Sync", diesNow, "returns"),
			Want: members(1, "PEFailed", "-", "nil"), Fin: but(2, "-", "PEFailed"),
			Say: teamSays(1, []string{"Sync", "PE 2"}, nil)},
		{Name: "finalize-vs-team-broadcast", NPEs: 4, Body: teamRow(1, "BroadcastRoot1", leaves, "BarrierAll"),
			Want: members(1, "PEFailed", "nil", "PEFailed"), Fin: all("nil"),
			Say: teamSays(1, []string{"Broadcast", "PE 2 called Finalize while this PE waits in Broadcast", "team world/1.0"},
				[]string{"BarrierAll", "called Finalize while this PE waits in BarrierAll"})},
		{Name: "finalize-vs-team-collect", NPEs: 4, Body: teamRow(0, "Collect", leaves, "returns"),
			Want: members(0, "PEFailed", "nil", "nil"), Fin: all("nil"),
			Say: teamSays(0, []string{"Collect", "PE 1 called Finalize while this PE waits in Collect"}, nil)},
		{Name: "global-exit-in-team-alltoall", NPEs: 4, Body: teamRow(0, "Alltoall", exits, "WaitUntil"),
			Want: all("Exit:8"), Fin: all("Exit:8")},
		{Name: "team-fcollect-vs-team-reduce", NPEs: 4, Body: teamSplit(1, 2, "FCollect", "Reduce"),
			Want: members(1, "InvalidArgument", "InvalidArgument", "nil"), Fin: all("nil"),
			// The argument check says "PEs 1, 3 passed Reduce, PE 2 passed
			// FCollect", the order check, when it sees the mismatch first,
			// "PEs 1, 3 called Reduce, PE 2 FCollect".
			Say: teamSays(1, []string{"team world/1.0", "PEs 1, 3 ", "Reduce, PE 2 ", "FCollect"}, nil)},
		{Name: "rma-toward-finalizing-pe", NPEs: 4, Body: rmaTowardFinalizing, Want: all("nil"), Fin: all("nil")},
		{Name: "finalize-vs-fcollect", NPEs: 4, Body: split(3, "Finalize", "FCollect"),
			Want: but(3, "nil", "PEFailed"), Fin: all("nil"),
			Say: func(r int) []string { return []string{"FCollect", "PE 3 called Finalize"} }},
		{Name: "finalize-vs-malloc", NPEs: 3, Body: split(0, "Finalize", "Malloc"),
			Want: but(0, "nil", "PEFailed"), Fin: all("nil"),
			Say: func(r int) []string { return []string{"Malloc", "PE 0 called Finalize"} }},
		{Name: "finalize-vs-reduce", NPEs: 4, Body: split(2, "Finalize", "Reduce"),
			Want: but(2, "nil", "PEFailed"), Fin: all("nil"),
			Say: func(r int) []string { return []string{"Reduce", "PE 2 called Finalize"} }},
		{Name: "finalize-vs-broadcast", NPEs: 3, Body: split(0, "Finalize", "Broadcast"),
			Want: but(0, "nil", "PEFailed"), Fin: all("nil"),
			Say: func(r int) []string { return []string{"Broadcast", "PE 0 called Finalize"} }},
		{Name: "finalize-vs-collect", NPEs: 3, Body: split(1, "Finalize", "Collect"),
			Want: but(1, "nil", "PEFailed"), Fin: all("nil"),
			Say: func(r int) []string { return []string{"Collect", "PE 1 called Finalize"} }},
		{Name: "finalize-vs-alltoall", NPEs: 4, Body: split(3, "Finalize", "Alltoall"),
			Want: but(3, "nil", "PEFailed"), Fin: all("nil"),
			Say: func(r int) []string { return []string{"Alltoall", "PE 3 called Finalize"} }},
		{Name: "finalize-vs-split", NPEs: 3, Body: split(2, "Finalize", "Split"),
			Want: but(2, "nil", "PEFailed"), Fin: all("nil"),
			Say: func(r int) []string { return []string{"Split", "PE 2 called Finalize"} }},
		{Name: "finalize-vs-syncall", NPEs: 3, Body: split(1, "Finalize", "SyncAll"),
			Want: but(1, "nil", "PEFailed"), Fin: all("nil"),
			Say: func(r int) []string { return []string{"SyncAll", "PE 1 called Finalize"} }},
		died("dies-in-reduce", 4, 1, diesDuring(1, "Reduce"), "Reduce", "PE 1"),
		died("dies-in-broadcast", 3, 0, diesDuring(0, "Broadcast"), "Broadcast", "PE 0"),
		died("dies-in-fcollect", 3, 2, diesDuring(2, "FCollect"), "FCollect", "PE 2"),
		died("dies-in-collect", 3, 2, diesDuring(2, "Collect"), "Collect", "PE 2"),
		died("dies-in-alltoall", 4, 3, diesDuring(3, "Alltoall"), "Alltoall", "PE 3"),
		died("dies-in-split", 3, 1, diesDuring(1, "Split"), "Split", "PE 1"),
		died("dies-in-syncall", 3, 2, diesDuring(2, "SyncAll"), "SyncAll", "PE 2"),
		died("dies-in-malloc", 3, 1, diesDuring(1, "Malloc"), "Malloc", "PE 1"),
		died("g-vs-death", 3, 2, towardsDead("G"), "G", "PE 2"),
		died("atomicfetchadd-vs-death", 3, 2, towardsDead("AtomicFetchAdd"), "AtomicFetchAdd", "PE 2"),
		died("p-quiet-vs-death", 3, 2, towardsDead("P-Quiet"), "PE 2"), // the P or the Quiet
		died("put-quiet-vs-death", 3, 2, towardsDead("Quiet"), "PE 2"), // the Put or the Quiet
		died("waituntil-vs-death", 3, 2, towardsDead("WaitUntil"), "WaitUntil", "PE 2"),
		died("signalwaituntil-vs-death", 3, 2, towardsDead("SignalWaitUntil"), "SignalWaitUntil", "PE 2"),
		{Name: "fcollect-vs-reduce", NPEs: 4, Body: split(0, "FCollect", "Reduce"),
			Want: all("InvalidArgument"), Fin: all("nil")},
		{Name: "barrier-vs-reduce", NPEs: 4, Body: split(0, "BarrierAll", "Reduce"),
			Want: all("InvalidArgument"), Fin: all("nil"),
			Say: func(int) []string { return []string{"PE 0 called Barrier", "Reduce"} }},
		{Name: "barrier-vs-sync", NPEs: 3, Body: split(1, "BarrierAll", "SyncAll"),
			Want: all("InvalidArgument"), Fin: all("nil"),
			Say: func(int) []string { return []string{"called Sync, PE 1 Barrier"} }},
		{Name: "destroy-vs-sync", NPEs: 2, Body: destroyVsSync,
			Want: all("InvalidArgument"), Fin: all("nil"),
			Say: func(int) []string { return []string{"Destroy", "Sync"} }},
		{Name: "malloc-vs-barrier", NPEs: 4, Body: split(1, "Malloc", "BarrierAll"),
			Want: all("InvalidArgument"), Fin: all("nil"),
			Say: func(int) []string { return []string{"called Barrier", "PE 1 Alloc"} }},
		{Name: "alltoall-remainder", NPEs: 4, Body: alltoallRemainder,
			Want: all("InvalidArgument"), Fin: all("nil"),
			Say: func(int) []string { return []string{"Alltoall", "6 elements is not a multiple of the team's 4 PEs"} }},
		{Name: "broadcast-root-mismatch", NPEs: 4, Body: split(2, "BroadcastRoot1", "Broadcast"),
			Want: all("InvalidArgument"), Fin: all("nil"),
			Say: func(int) []string { return []string{"Broadcast", "root: PEs 0-1, 3 passed 0, PE 2 passed 1"} }},
		{Name: "alltoall-vs-broadcast", NPEs: 4, Body: split(0, "Alltoall", "Broadcast"),
			Want: all("InvalidArgument"), Fin: all("nil"),
			Say: func(int) []string { return []string{"Alltoall", "Broadcast"} }},
		{Name: "collect-vs-fcollect", NPEs: 3, Body: split(2, "Collect", "FCollect"),
			Want: all("InvalidArgument"), Fin: all("nil"),
			Say: func(int) []string { return []string{"Collect", "FCollect"} }},
		{Name: "split-vs-barrier", NPEs: 3, Body: split(1, "Split", "BarrierAll"),
			Want: all("InvalidArgument"), Fin: all("nil"),
			Say: func(int) []string { return []string{"Split", "Barrier"} }},
		{Name: "lock-holder-leaves", NPEs: 3, Body: lockHolder(holderLeaves),
			Want: but(1, "nil", "PEFailed"), Fin: all("nil"),
			Say:    func(r int) []string { return []string{"SetLock", "PE 1"} },
			SimRun: []string{"PE 1 returned holding the lock"}},
		died("lock-holder-dies", 3, 1, lockHolder(holderDies), "SetLock", "PE 1"),
		died("exit-without-finalize", 3, 2, dies, "BarrierAll", "PE 2"),
		died("coordinator-dies", 3, 0, coordinatorDies, "BarrierAll", "PE 0"),
		{Name: "coordinator-dies-in-finalize", NPEs: 3, Body: coordinatorDiesInFinalize,
			Want: but(0, "-", "nil"), Fin: but(0, "-", "PEFailed")},
		died("panic", 3, 2, panics, "BarrierAll", "PE 2"),
		{Name: "global-exit", NPEs: 4, Body: globalExit, Want: all("Exit:5"), Fin: all("Exit:5")},
		{Name: "global-exit-in-malloc", NPEs: 3, Body: exitDuring("Malloc"), Want: all("Exit:8"), Fin: all("Exit:8")},
		{Name: "global-exit-in-split", NPEs: 3, Body: exitDuring("Split"), Want: all("Exit:8"), Fin: all("Exit:8")},
		{Name: "global-exit-in-alltoall", NPEs: 4, Body: exitDuring("Alltoall"), Want: all("Exit:8"), Fin: all("Exit:8")},
		{Name: "global-exit-in-broadcast", NPEs: 3, Body: exitDuring("Broadcast"), Want: all("Exit:8"), Fin: all("Exit:8")},
		{Name: "global-exit-in-fcollect", NPEs: 3, Body: exitDuring("FCollect"), Want: all("Exit:8"), Fin: all("Exit:8")},
		{Name: "global-exit-in-reduce", NPEs: 4, Body: exitDuring("Reduce"), Want: all("Exit:8"), Fin: all("Exit:8")},
		{Name: "global-exit-in-destroy", NPEs: 3, Body: exitDuring("Destroy"), Want: all("Exit:8"), Fin: all("Exit:8")},
		{Name: "global-exit-in-free", NPEs: 3, Body: exitDuring("Free"), Want: all("Exit:8"), Fin: all("Exit:8")},
		// Every PE destroys the team and leaves at once: a peer that
		// finished Destroy and finalized is no early Finalize.
		{Name: "destroy-then-finalize", NPEs: 4, Body: split(-1, "", "Destroy"),
			Want: all("nil"), Fin: all("nil")},
		{Name: "finalize-vs-destroy", NPEs: 3, Body: split(0, "Finalize", "Destroy"),
			Want: but(0, "nil", "PEFailed"), Fin: all("nil"),
			Say: func(r int) []string { return []string{"Destroy", "PE 0 called Finalize"} }},
		died("dies-in-destroy", 3, 1, diesDuring(1, "Destroy"), "Destroy", "PE 1"),
		{Name: "global-exit-vs-finalize", NPEs: 3, Body: globalExitVsFinalize, Want: all("Exit:7"), Fin: all("Exit:7")},
		{Name: "finalize-vs-free", NPEs: 3, Body: split(1, "Finalize", "Free"),
			Want: but(1, "nil", "PEFailed"), Fin: all("nil"),
			Say: func(r int) []string { return []string{"Free", "PE 1 called Finalize"} }},
		died("dies-in-free", 3, 2, diesDuring(2, "Free"), "Free", "PE 2"),
		{Name: "global-exit-in-waits", NPEs: 4, Body: globalExitInWaits, Want: all("Exit:6"), Fin: all("Exit:6")},
		{Name: "signal-wait-vs-finalize", NPEs: 3, Body: signalWaitVsFinalize,
			Want: but(0, "PEFailed", "nil"), Fin: all("nil"),
			Say: func(int) []string {
				return []string{"SignalWaitUntil", "every other PE has called Finalize or failed (PEs 1-2)"}
			}},
		{Name: "wait-vs-finalize", NPEs: 3, Body: waitVsFinalize,
			Want: but(0, "PEFailed", "nil"), Fin: all("nil"),
			Say: func(int) []string {
				return []string{"WaitUntil", "every other PE has called Finalize or failed (PEs 1-2)"}
			}},
		{Name: "dies-vs-finalize", NPEs: 3, Body: outThen(2, func(p *shmem.PE) error { return nil }),
			Want: but(2, "-", "nil"), Fin: but(2, "-", "PEFailed")},
		{Name: "deadlock", NPEs: 3, SimOnly: true, Body: WaitForever,
			Want: all("Deadlock"), Fin: all("nil"),
			Say: func(int) []string {
				return []string{"WaitUntil", "PEs 0-2 blocked in WaitUntil on its word at heap offset"}
			}},
		{Name: "op-timeout", NPEs: 2, Timeout: 300, Body: waitTimesOut,
			Want: but(0, "Timeout", "nil"), Fin: all("nil"),
			Say: func(int) []string { return []string{"WaitUntil", "operation timeout"} }},
		{Name: "barrier-given-up", NPEs: 3, Timeout: 300, Body: givesUp(0, "BarrierAll"),
			Want: but(0, "Timeout", "PEFailed"), Fin: all("nil"),
			Say: gaveUpSays(0, "BarrierAll", "Barrier", "PEs 1-2 have not arrived")},
		{Name: "reduce-given-up", NPEs: 4, Timeout: 300, Body: givesUp(1, "Reduce"),
			Want: but(1, "Timeout", "PEFailed"), Fin: all("nil"),
			Say: gaveUpSays(1, "Reduce", "Reduce", "PEs 0, 2-3 have not arrived")},
		{Name: "barrier-given-up-while-waiting", NPEs: 3, Timeout: 300, TimeoutOn: []int{2}, Body: givesUpWhileWaited,
			Want: but(2, "Timeout", "PEFailed"), Fin: all("nil"),
			Say: gaveUpSays(2, "BarrierAll", "Barrier", "PE 1 has not arrived")},
	}
}
