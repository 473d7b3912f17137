package failcheck

// The scenarios' bodies for waits nobody ends but a timeout, a deadlock or Finalize.

import (
	"errors"

	"github.com/goshmem/shmem"
)

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
