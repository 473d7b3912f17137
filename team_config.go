package shmem

import "github.com/goshmem/shmem/internal/errs"

// TeamConfig is the configuration of a team (shmem_team_config_t), given
// to the split calls and read back with GetConfig. Every member of the new
// team passes the same one; PEs that end in another team, or in none,
// may pass another.
type TeamConfig struct {
	// NumContexts is how many contexts the program means to create on the
	// team (Team.CreateCtx). goshmem's contexts open their resources
	// lazily and have no fixed pool, so none is reserved and creating more
	// than NumContexts still works; negative is ErrInvalidArgument.
	NumContexts int
}

// GetConfig returns the configuration the team was created with
// (shmem_team_get_config); the predefined teams have the zero config. A
// nil or destroyed team is ErrInvalidArgument (SHMEM_TEAM_INVALID).
func (t *Team) GetConfig() (TeamConfig, error) {
	if t.invalid() {
		return TeamConfig{}, errs.New("GetConfig", errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "nil or destroyed team")
	}
	return t.cfg, nil
}

// invalid reports whether t is SHMEM_TEAM_INVALID: nil, or destroyed.
func (t *Team) invalid() bool { return t == nil || t.t == nil || t.t.Destroyed() }

// configs returns the n configs of a split that makes n teams (zero
// configs for those not given) and the values the members must agree on.
// Values are checked inside the split's agreement, so a member with a bad
// or different config fails the split on every member instead of leaving
// them waiting.
func configs(op string, t *Team, cfg []TeamConfig, n int) ([]TeamConfig, []int64, error) {
	if len(cfg) > n {
		return nil, nil, errs.New(op, t.p.MyPE(), errs.NoPE, errs.ErrInvalidArgument, "%d team configs for %d teams", len(cfg), n)
	}
	out := make([]TeamConfig, n)
	copy(out, cfg)
	agree := make([]int64, n)
	for i, c := range out {
		agree[i] = int64(c.NumContexts)
	}
	return out, agree, nil
}
