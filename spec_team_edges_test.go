package shmem_test

import (
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
)

// Every PE of the parent destroys what SplitStrided gave it, as C
// programs do with the SHMEM_TEAM_INVALID handle of the PEs left out:
// shmem_team_destroy(SHMEM_TEAM_INVALID) performs no operation, so the
// nil Team's Destroy returns nil, and the new team's members end it.
func TestSpecDestroyInvalidTeam(t *testing.T) {
	bothDeliveries(t, 4, func(p *shmem.PE) error {
		nt, err := p.TeamWorld().SplitStrided(1, 2, 2)
		if err != nil {
			return err
		}
		if (nt == nil) != (p.MyPE()%2 == 0) {
			return fmt.Errorf("PE %d: team %v", p.MyPE(), nt)
		}
		if err := nt.Destroy(); err != nil {
			return fmt.Errorf("PE %d: Destroy of the split's result: %v", p.MyPE(), err)
		}
		if nt.NPEs() != -1 || nt.MyPE() != -1 {
			return fmt.Errorf("destroyed team answers %d of %d", nt.MyPE(), nt.NPEs())
		}
		return p.BarrierAll()
	})
}
