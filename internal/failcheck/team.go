package failcheck

import "github.com/goshmem/shmem"

// teamRow: PEs first to first+2 of a world of 4 split off a team, so one
// PE is outside it: PE 3, or with first 1 PE 0, which coordinates the
// world's agreements. The team's middle member, PE first+1, then leaves
// it by fate while the other two make the blocking call of kind (see
// collective) on the team, which only the team's own words tell them (the
// leaver never reached the team's operation, and Finalize numbers
// TeamWorld alone); the PE outside runs outside: "returns" (to its
// Finalize), "BarrierAll", or "WaitUntil" on a word nobody sets.
func teamRow(first int, kind string, fate func(p *shmem.PE) error, outside string) func(p *shmem.PE) error {
	return func(p *shmem.PE) error {
		a, err := collData(p, kind)
		if err != nil {
			return err
		}
		a.on, err = p.TeamWorld().SplitStrided(first, 1, 3)
		if err != nil {
			return err
		}
		left, err := shmem.Calloc[int64](p, p.NPEs())
		if err != nil {
			return err
		}
		// Every PE is past the split before the leaver leaves: the
		// split's own failure is not the point here.
		if err := p.BarrierAll(); err != nil {
			return err
		}
		// Nor is BarrierAll's: the leaver leaving BarrierAll does not
		// mean the others have (its last signal may still be on its way,
		// and a PE that dies then takes it along), so it meets its fate
		// only once every other PE has said, by a put to it, that it is
		// out.
		me, leaver := p.MyPE(), first+1
		if me == leaver {
			status := make([]bool, p.NPEs())
			status[leaver] = true
			if err := shmem.WaitUntilAll(p, left, status, shmem.CmpEQ, 1); err != nil {
				return err
			}
			return fate(p)
		}
		if err := shmem.P(p, left.Slice(me, me+1), 1, leaver); err != nil {
			return err
		}
		if a.on != nil {
			return collective(p, kind, a)
		}
		switch outside {
		case "BarrierAll":
			return p.BarrierAll()
		case "WaitUntil":
			// Nobody writes the outside PE's own words of left.
			return shmem.WaitUntil(p, left.Slice(me, me+1), shmem.CmpEQ, 1)
		}
		return nil
	}
}

// teamSplit: PEs first to first+2 of a world of 4 split off a team; its
// member odd calls oddKind on it while the other two call kind (see
// collective); the PE outside returns to its Finalize.
func teamSplit(first, odd int, oddKind, kind string) func(p *shmem.PE) error {
	return func(p *shmem.PE) error {
		a, err := collData(p, kind, oddKind)
		if err != nil {
			return err
		}
		a.on, err = p.TeamWorld().SplitStrided(first, 1, 3)
		if err != nil || a.on == nil {
			return err
		}
		k := kind
		if p.MyPE() == odd {
			k = oddKind
		}
		return collective(p, k, a)
	}
}

// leaves is the fate of a PE that returns to Finalize.
func leaves(*shmem.PE) error { return nil }

// diesNow is the fate of a PE that dies (Die).
func diesNow(p *shmem.PE) error {
	Die(p)
	return nil
}

// exits is the fate of a PE that ends the world with status 8.
func exits(p *shmem.PE) error {
	p.GlobalExit(8)
	return p.BarrierAll() // where GlobalExit returns (the simulator), fails with the exit
}

// members is the Want of teamRow and teamSplit with the same first: the
// class of the team's two waiting members, of its middle member (the
// leaver, or teamSplit's odd one when odd is first+1) and of the PE
// outside the team.
func members(first int, waiting, middle, outside Class) func(int) Class {
	return func(r int) Class {
		switch {
		case r == first+1:
			return middle
		case r < first || r > first+2:
			return outside
		}
		return waiting
	}
}

// teamSays is the Say of a teamRow or teamSplit row with the same first:
// what the team's members' errors say, and the outside PE's.
func teamSays(first int, member, outside []string) func(int) []string {
	return func(r int) []string {
		if r < first || r > first+2 {
			return outside
		}
		return member
	}
}
