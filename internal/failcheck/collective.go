package failcheck

// The scenarios' bodies for collectives some PEs skip, mismatch or give up on.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/goshmem/shmem"
)

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
