package shmem_test

import (
	"fmt"
	"testing"

	"github.com/goshmem/shmem"
)

func TestTeamConfig(t *testing.T) {
	run(t, 4, func(p *shmem.PE) error {
		w := p.TeamWorld()
		if c, err := w.GetConfig(); err != nil || c != (shmem.TeamConfig{}) {
			return fmt.Errorf("TeamWorld config %+v, %v", c, err)
		}
		half, err := w.SplitStrided(0, 1, 2, shmem.TeamConfig{NumContexts: 3})
		if err != nil {
			return err
		}
		if half != nil {
			if c, err := half.GetConfig(); err != nil || c.NumContexts != 3 {
				return fmt.Errorf("split config %+v, %v", c, err)
			}
			// More contexts than the config names still work.
			for i := 0; i < 4; i++ {
				ctx, err := half.CreateCtx()
				if err != nil {
					return err
				}
				if err := ctx.Destroy(); err != nil {
					return err
				}
			}
		}
		x, y, err := w.Split2D(2, shmem.TeamConfig{NumContexts: 1}, shmem.TeamConfig{NumContexts: 2})
		if err != nil {
			return err
		}
		cx, _ := x.GetConfig()
		cy, _ := y.GetConfig()
		if cx.NumContexts != 1 || cy.NumContexts != 2 {
			return fmt.Errorf("Split2D configs %+v %+v", cx, cy)
		}
		// A config that differs between members fails on every member.
		if _, err := w.SplitStrided(0, 1, 4, shmem.TeamConfig{NumContexts: p.MyPE()}); !isInvalid(err) {
			return fmt.Errorf("differing configs: %v", err)
		}
		if _, err := w.SplitStrided(0, 1, 4, shmem.TeamConfig{NumContexts: -1}); !isInvalid(err) {
			return fmt.Errorf("negative NumContexts: %v", err)
		}
		// SHMEM_TEAM_INVALID: a destroyed (or nil) team answers -1 and
		// refuses every call.
		if err := x.Destroy(); err != nil {
			return err
		}
		var none *shmem.Team
		for _, bad := range []*shmem.Team{x, none} {
			if bad.MyPE() != -1 || bad.NPEs() != -1 || bad.TranslatePE(0, w) != -1 || w.TranslatePE(0, bad) != -1 {
				return fmt.Errorf("invalid team: MyPE %d NPEs %d", bad.MyPE(), bad.NPEs())
			}
			if _, err := bad.GetConfig(); !isInvalid(err) {
				return fmt.Errorf("GetConfig on an invalid team: %v", err)
			}
			if _, err := bad.CreateCtx(); !isInvalid(err) {
				return fmt.Errorf("CreateCtx on an invalid team: %v", err)
			}
			if _, err := bad.SplitStrided(0, 1, 1); !isInvalid(err) {
				return fmt.Errorf("split of an invalid team: %v", err)
			}
			if err := bad.Sync(); !isInvalid(err) {
				return fmt.Errorf("Sync on an invalid team: %v", err)
			}
		}
		return p.BarrierAll()
	})
}
