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
	"slices"
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

// split makes PE odd call oddKind while the others call kind, after two
// allocations that every PE makes (the data of the collectives).
func split(odd int, oddKind, kind string) func(p *shmem.PE) error {
	return func(p *shmem.PE) error {
		a, err := collData(p, kind, oddKind)
		if err != nil {
			return err
		}
		k := kind
		if p.MyPE() == odd {
			k = oddKind
		}
		return collective(p, k, a)
	}
}

// collArgs are the data of collective: a source and a destination of
// two elements a PE in each block of 2·NPEs, for Destroy a team, and the
// team the call is made on (nil: TeamWorld).
type collArgs struct {
	src, dst shmem.Sym[int64]
	team     *shmem.Team
	on       *shmem.Team
}

// collData makes collective's data for kinds, before the call.
func collData(p *shmem.PE, kinds ...string) (a collArgs, err error) {
	a.src, err = shmem.Malloc[int64](p, 2*p.NPEs())
	if err != nil {
		return a, err
	}
	a.dst, err = shmem.Malloc[int64](p, 2*p.NPEs())
	if err != nil || !slices.Contains(kinds, "Destroy") {
		return a, err
	}
	a.team, err = p.TeamWorld().SplitStrided(0, 1, p.NPEs())
	return a, err
}

// collective makes the blocking call of kind k on a.on or TeamWorld
// (Destroy: of a.team), with the data from collData; "Finalize" makes
// none (the caller's Finalize comes next).
func collective(p *shmem.PE, k string, a collArgs) error {
	w, src, dst := a.on, a.src, a.dst
	if w == nil {
		w = p.TeamWorld()
	}
	switch k {
	case "FCollect":
		return shmem.FCollect(w, dst, src.Slice(0, 2))
	case "Collect":
		return shmem.Collect(w, dst, src.Slice(0, 2))
	case "Reduce":
		return shmem.Reduce(w, shmem.OpSum, dst.Slice(0, 2), src.Slice(0, 2))
	case "Broadcast":
		return shmem.Broadcast(w, dst, src, 0)
	case "BroadcastRoot1":
		return shmem.Broadcast(w, dst, src, 1)
	case "Alltoall":
		n := 2 * w.NPEs()
		return shmem.Alltoall(w, dst.Slice(0, n), src.Slice(0, n))
	case "Barrier":
		return w.Barrier()
	case "Sync":
		return w.Sync()
	case "Split":
		t, err := w.SplitStrided(0, 1, p.NPEs())
		if err != nil {
			return err
		}
		return t.Destroy()
	case "BarrierAll":
		return p.BarrierAll()
	case "SyncAll":
		return p.SyncAll()
	case "Malloc":
		_, err := shmem.Malloc[int64](p, 8)
		return err
	case "Free":
		return shmem.Free(p, src)
	case "Destroy":
		return a.team.Destroy()
	case "Finalize":
		return nil // the caller's Finalize comes next
	}
	return fmt.Errorf("no collective %q", k)
}

// destroyVsSync makes PE 0 destroy a team that PE 1 synchronizes: two
// collectives that once shared the words that let one complete the other.
func destroyVsSync(p *shmem.PE) error {
	team, err := p.TeamWorld().SplitStrided(0, 1, 2)
	if err != nil {
		return err
	}
	if p.MyPE() == 0 {
		return team.Destroy()
	}
	return team.Sync()
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

// gaveUpSays is the Say of a scenario where PE quitter gives up call (an
// operation of kind): its own error names the call, the timeout and who
// had not arrived; the others' name the call, the PE and the operation.
func gaveUpSays(quitter int, call, kind, absent string) func(int) []string {
	return func(r int) []string {
		if r == quitter {
			return []string{call, "operation timeout", absent}
		}
		return []string{call, fmt.Sprintf("PE %d gave up operation", quitter), "(" + kind + ")", "cannot complete"}
	}
}

// givesUp: PE quitter waits in call (BarrierAll or Reduce over TeamWorld)
// until its operation timeout ends the wait, while the others are busy in
// their own code (Test, which does not block) until it tells them, by a
// put, that it gave up; then they make the same call, late, which can
// no longer complete: it fails at once, naming the PE that gave up.
func givesUp(quitter int, call string) func(p *shmem.PE) error {
	return func(p *shmem.PE) error {
		src, err := shmem.Calloc[int64](p, 2)
		if err != nil {
			return err
		}
		dst, err := shmem.Calloc[int64](p, 2)
		if err != nil {
			return err
		}
		flag, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		run := func() error {
			if call == "Reduce" {
				return shmem.Reduce(p.TeamWorld(), shmem.OpSum, dst, src)
			}
			return p.BarrierAll()
		}
		if p.MyPE() != quitter {
			for !shmem.Test(p, flag, shmem.CmpEQ, 1) {
			}
			return run()
		}
		err = run()
		for r := 0; r < p.NPEs(); r++ {
			if r != quitter {
				err = errors.Join(err, shmem.P(p, flag, 1, r))
			}
		}
		return errors.Join(err, p.Quiet())
	}
}

// givesUpWhileWaited: PE 2, alone with an operation timeout, waits in
// BarrierAll with PE 0, which has none; PE 1 is busy in its own code until
// PE 2 tells it that it gave up. PE 0's wait, which no timeout of its own
// ends and which PE 1 alone could have completed, must end when PE 2
// gives up; PE 1's late BarrierAll fails at once.
func givesUpWhileWaited(p *shmem.PE) error {
	flag, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	switch p.MyPE() {
	case 1:
		for !shmem.Test(p, flag, shmem.CmpEQ, 1) {
		}
		return p.BarrierAll()
	case 2:
		err := p.BarrierAll()
		return errors.Join(err, shmem.P(p, flag, 1, 1), p.Quiet())
	}
	return p.BarrierAll()
}

// alltoallRemainder: every PE passes Alltoall a source of 6 elements over
// 4 PEs, which would leave a remainder of 2.
func alltoallRemainder(p *shmem.PE) error {
	src, err := shmem.Malloc[int64](p, 6)
	if err != nil {
		return err
	}
	dst, err := shmem.Malloc[int64](p, 8)
	if err != nil {
		return err
	}
	return shmem.Alltoall(p.TeamWorld(), dst, src)
}

// lockHolder: PE 1 takes the lock, meets the others in a SyncAll and
// runs then holding it; the others wait for the lock.
func lockHolder(then func(p *shmem.PE, l shmem.Sym[int64]) error) func(*shmem.PE) error {
	return func(p *shmem.PE) error {
		l, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		if p.MyPE() == 1 {
			if err := shmem.SetLock(p, l); err != nil {
				return err
			}
			if err := p.SyncAll(); err != nil {
				return err
			}
			return then(p, l)
		}
		if err := p.SyncAll(); err != nil {
			return err
		}
		return shmem.SetLock(p, l)
	}
}

// LockDeadlock: PE 1 takes the lock and waits in a barrier that the
// others, waiting for the lock, never reach. The simulator's scheduler
// cannot see it (a lock's waiters poll through the schedule); only the
// real-time deadlock detector ends it.
func LockDeadlock(p *shmem.PE) error {
	return lockHolder(func(p *shmem.PE, _ shmem.Sym[int64]) error { return p.BarrierAll() })(p)
}

// holderLeaves: the holder returns, so it finalizes holding the lock.
func holderLeaves(*shmem.PE, shmem.Sym[int64]) error { return nil }

// holderDies: the holder dies (without Finalize) once every other PE has
// taken its ticket, so that they all wait in SetLock when it dies.
func holderDies(p *shmem.PE, l shmem.Sym[int64]) error {
	// The lock word's high half counts the tickets handed out (see
	// SetLock); one a PE means every PE is in SetLock.
	for {
		v, err := shmem.AtomicFetch(p, l, 0)
		if err != nil {
			return err
		}
		if int(uint64(v)>>32) == p.NPEs() {
			Die(p)
		}
	}
}

// Death is what a dying PE panics with: the simulator's runner turns the
// panic into the PE's failure, a PE program recovers it and exits with
// Died, without Finalize.
type Death struct{}

// Die ends PE p without Finalize (see Death).
func Die(*shmem.PE) { panic(Death{}) }

// dies: the last PE dies once everyone is up; the others wait in a barrier.
func dies(p *shmem.PE) error { return diesIn(p, p.NPEs()-1) }

// diesIn: PE victim dies once everyone is up; the others wait in a barrier.
func diesIn(p *shmem.PE, victim int) error {
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if p.MyPE() == victim {
		Die(p)
	}
	return p.BarrierAll()
}

// coordinatorDies: PE 0, which coordinates the world's agreements, dies
// once everyone is up; the others wait in a barrier.
func coordinatorDies(p *shmem.PE) error { return diesIn(p, 0) }

// coordinatorDiesInFinalize: PE 0 dies once every other PE has told it,
// by an atomic add, that it is on its way into Finalize, so the others
// are in Finalize's agreement (or about to be) when their coordinator
// goes.
func coordinatorDiesInFinalize(p *shmem.PE) error {
	out, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if p.MyPE() != 0 {
		return shmem.AtomicAdd(p, out, 1, 0)
	}
	if err := shmem.WaitUntil(p, out, shmem.CmpEQ, int64(p.NPEs()-1)); err != nil {
		return err
	}
	Die(p)
	return nil
}

// panics: the last PE panics (a real panic: in a process it ends the
// program) once everyone is up; the others wait in a barrier.
func panics(p *shmem.PE) error {
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if p.MyPE() == p.NPEs()-1 {
		panic("expert table corrupt")
	}
	return p.BarrierAll()
}

// globalExit: PE 1 ends the world while the others loop on BarrierAll.
func globalExit(p *shmem.PE) error {
	for i := 0; ; i++ {
		if p.MyPE() == 1 && i == 3 {
			p.GlobalExit(5)
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
	}
}

// waitTimesOut: PE 0 waits in WaitUntil for a word nobody sets until the
// operation timeout ends the wait; then it sets PE 1's flag, which PE 1,
// busy in its own code (Test, which does not block), polls for. So only
// PE 0 blocks, and only its call times out.
func waitTimesOut(p *shmem.PE) error {
	flag, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	if p.MyPE() == 1 {
		for !shmem.Test(p, flag, shmem.CmpEQ, 1) {
		}
		return nil
	}
	err = shmem.WaitUntil(p, flag, shmem.CmpEQ, 1)
	return errors.Join(err, shmem.P(p, flag, 1, 1), p.Quiet())
}

// WaitForever: every PE waits for a flag nobody sets, a deadlock that
// the simulator's scheduler sees.
func WaitForever(p *shmem.PE) error {
	flag, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	return shmem.WaitUntil(p, flag, shmem.CmpEQ, 1) // nobody sets it
}

// outThen: PE victim dies once every other PE has told it, by a put, that
// it is past the world's setup (so that no other PE fails there: a PE
// leaving a barrier does not mean the others have, and a PE that dies
// takes its last signals along); the others then run call.
func outThen(victim int, call func(p *shmem.PE) error) func(p *shmem.PE) error {
	return fateThen(victim, Die, call)
}

// fateThen is outThen where PE victim meets fate (Die, or exits) instead
// of dying; fate's error is the victim's.
func fateThen(victim int, fate func(p *shmem.PE), call func(p *shmem.PE) error) func(p *shmem.PE) error {
	return func(p *shmem.PE) error {
		out, err := shmem.Calloc[int64](p, p.NPEs())
		if err != nil {
			return err
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		me := p.MyPE()
		if me == victim {
			status := make([]bool, p.NPEs())
			status[victim] = true
			if err := shmem.WaitUntilAll(p, out, status, shmem.CmpEQ, 1); err != nil {
				return err
			}
			fate(p)
			// Where GlobalExit returns (the simulator): fails with the exit.
			return p.BarrierAll()
		}
		// No Quiet: the victim may die before the put's completion
		// comes back, which would fail the Quiet instead of call.
		if err := shmem.P(p, out.Slice(me, me+1), 1, victim); err != nil {
			return err
		}
		return call(p)
	}
}

// diesDuring: PE victim dies while the others make the blocking call of
// kind (see collective) on TeamWorld.
func diesDuring(victim int, kind string) func(p *shmem.PE) error {
	return func(p *shmem.PE) error {
		a, err := collData(p, kind)
		if err != nil {
			return err
		}
		return fateThen(victim, Die, func(p *shmem.PE) error { return collective(p, kind, a) })(p)
	}
}

// towardsDead: PE 2 dies once the others are past the setup (outThen);
// they then make a call of op on PE 2, or wait on a word of their own
// that only PE 2 would write, repeated until it fails: it must fail,
// naming op and PE 2, once the death is known, and never hang. Quiet
// follows a Put to PE 2.
func towardsDead(op string) func(p *shmem.PE) error {
	return func(p *shmem.PE) error {
		const dead = 2
		word, err := shmem.Calloc[int64](p, 64)
		if err != nil {
			return err
		}
		sig, err := shmem.Calloc[uint64](p, 1)
		if err != nil {
			return err
		}
		data := make([]int64, 64)
		return outThen(dead, func(p *shmem.PE) error {
			for {
				var err error
				switch op {
				case "G":
					_, err = shmem.G(p, word, dead)
				case "AtomicFetchAdd":
					_, err = shmem.AtomicFetchAdd(p, word, 1, dead)
				case "Quiet":
					if err = shmem.Put(p, word, data, dead); err == nil {
						err = p.Quiet()
					}
				case "P-Quiet":
					// Over TCP a P is posted: its loss shows in Quiet.
					if err = shmem.P(p, word, 1, dead); err == nil {
						err = p.Quiet()
					}
					if err != nil && !strings.HasPrefix(err.Error(), "shmem: P (") && !strings.HasPrefix(err.Error(), "shmem: Quiet (") {
						return fmt.Errorf("the error names neither P nor Quiet: %v", err)
					}
				case "WaitUntil":
					return shmem.WaitUntil(p, word, shmem.CmpEQ, 1)
				case "SignalWaitUntil":
					_, err := shmem.SignalWaitUntil(p, sig, shmem.CmpEQ, 1)
					return err
				default:
					return fmt.Errorf("no call %q", op)
				}
				if err != nil {
					return err
				}
			}
		})(p)
	}
}

// waitVsFinalize: PE 0 waits on a word nobody sets once it has told the
// others, by a put, that it is past the setup; they then finalize, which
// must end PE 0's wait (nobody can set the word any more).
func waitVsFinalize(p *shmem.PE) error {
	flag, err := shmem.Calloc[int64](p, 2)
	if err != nil {
		return err
	}
	if p.MyPE() != 0 {
		return shmem.WaitUntil(p, flag.Slice(1, 2), shmem.CmpEQ, 1)
	}
	for r := 1; r < p.NPEs(); r++ {
		if err := shmem.P(p, flag.Slice(1, 2), 1, r); err != nil {
			return err
		}
	}
	if err := p.Quiet(); err != nil {
		return err
	}
	return shmem.WaitUntil(p, flag.Slice(0, 1), shmem.CmpEQ, 1)
}

// globalExitInWaits: PE 1 takes a lock, and once PE 2 waits for it (its
// ticket is taken) ends the world while PE 0 waits on a word nobody sets,
// PE 2 for the lock and PE 3 in a Reduce nobody else calls; each must end
// with the exit.
func globalExitInWaits(p *shmem.PE) error {
	l, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	flag, err := shmem.Calloc[int64](p, 4)
	if err != nil {
		return err
	}
	if p.MyPE() == 1 {
		if err := shmem.SetLock(p, l); err != nil {
			return err
		}
	}
	if err := p.SyncAll(); err != nil {
		return err
	}
	switch p.MyPE() {
	case 0:
		return shmem.WaitUntil(p, flag, shmem.CmpEQ, 1)
	case 2:
		return shmem.SetLock(p, l)
	case 3:
		return shmem.Reduce(p.TeamWorld(), shmem.OpSum, flag.Slice(2, 4), flag.Slice(0, 2))
	}
	for {
		// The lock word's high half counts the tickets handed out: two
		// means PE 2 waits in SetLock.
		v, err := shmem.AtomicFetch(p, l, 0)
		if err != nil {
			return err
		}
		if uint64(v)>>32 == 2 {
			p.GlobalExit(6)
		}
	}
}

// globalExitVsFinalize: PE 1 ends the world once the others have told it,
// by a put, that they are on their way into Finalize (which waits for PE
// 1's); their Finalize must end with the exit.
func globalExitVsFinalize(p *shmem.PE) error {
	out, err := shmem.Calloc[int64](p, p.NPEs())
	if err != nil {
		return err
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	me := p.MyPE()
	if me != 1 {
		if err := shmem.P(p, out.Slice(me, me+1), 1, 1); err != nil {
			return err
		}
		return p.Finalize()
	}
	status := make([]bool, p.NPEs())
	status[me] = true
	if err := shmem.WaitUntilAll(p, out, status, shmem.CmpEQ, 1); err != nil {
		return err
	}
	p.GlobalExit(7)
	return p.BarrierAll() // where GlobalExit returns (the simulator), fails with the exit
}

// exitDuring: PE 1 calls GlobalExit(8) while the others make the blocking
// call of kind (see collective) on TeamWorld; each must end with the exit.
func exitDuring(kind string) func(p *shmem.PE) error {
	return func(p *shmem.PE) error {
		a, err := collData(p, kind)
		if err != nil {
			return err
		}
		exit := func(p *shmem.PE) { p.GlobalExit(8) }
		return fateThen(1, exit, func(p *shmem.PE) error { return collective(p, kind, a) })(p)
	}
}

// signalWaitVsFinalize is waitVsFinalize with PE 0 in SignalWaitUntil.
func signalWaitVsFinalize(p *shmem.PE) error {
	sig, err := shmem.Calloc[uint64](p, 1)
	if err != nil {
		return err
	}
	flag, err := shmem.Calloc[int64](p, 1)
	if err != nil {
		return err
	}
	if p.MyPE() != 0 {
		return shmem.WaitUntil(p, flag, shmem.CmpEQ, 1)
	}
	for r := 1; r < p.NPEs(); r++ {
		if err := shmem.P(p, flag, 1, r); err != nil {
			return err
		}
	}
	if err := p.Quiet(); err != nil {
		return err
	}
	_, err = shmem.SignalWaitUntil(p, sig, shmem.CmpEQ, 1)
	return err
}
