package failcheck

// The scenarios' bodies for GlobalExit.

import "github.com/goshmem/shmem"

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
