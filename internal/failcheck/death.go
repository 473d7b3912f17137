package failcheck

// The scenarios' bodies for a PE that dies or panics.

import (
	"fmt"
	"strings"

	"github.com/goshmem/shmem"
)

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
