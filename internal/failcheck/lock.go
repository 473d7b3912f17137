package failcheck

// The scenarios' bodies for a lock whose holder leaves or dies.

import "github.com/goshmem/shmem"

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
