package main

import (
	"fmt"

	"github.com/goshmem/shmem"
	lt "github.com/goshmem/shmem/internal/launch/launchtest"
)

// faultLoop prints READY once every PE is up, then runs loop until an
// operation fails, which is how it ends: the fault suite kills a PE.
func faultLoop(p *shmem.PE, loop string) error {
	if err := p.BarrierAll(); err != nil {
		return err
	}
	ready()
	for {
		switch loop {
		case lt.FaultAlloc:
			s, err := shmem.Calloc[int64](p, 64)
			if err != nil {
				return err
			}
			if err := shmem.Free(p, s); err != nil {
				return err
			}
		case lt.FaultBarrier, "":
			if err := p.BarrierAll(); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s=%q: want %s or %s", lt.EnvFaultLoop, loop, lt.FaultBarrier, lt.FaultAlloc)
		}
	}
}
