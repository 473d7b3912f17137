package shmem

import (
	"github.com/goshmem/shmem/internal/coll"
	"github.com/goshmem/shmem/internal/core"
	"github.com/goshmem/shmem/internal/errs"
)

// Team is an ordered subset of a world's PEs (an OpenSHMEM team). Teams
// come from a PE (TeamWorld, TeamShared) or from splitting another team;
// the zero Team is not usable. Collective calls on one team (Sync, Barrier,
// the splits, Destroy and the collectives that take a *Team) must come in
// the same order on every member; the team serializes its own calls from
// several goroutines.
type Team struct {
	t   *coll.Team
	p   *PE        // the PE whose team this is, for the Sym checks of collectives
	cfg TeamConfig // what the split that made it was given
}

// wrap returns the public handle of t, or nil for a nil t (a split that
// left this PE out).
func (t *Team) wrap(nt *coll.Team, cfg TeamConfig) *Team {
	if nt == nil {
		return nil
	}
	return &Team{t: nt, p: t.p, cfg: cfg}
}

// inner returns the runtime's team, or nil for a nil Team.
func (t *Team) inner() *coll.Team {
	if t == nil {
		return nil
	}
	return t.t
}

// MyPE returns the caller's number in the team, 0..NPEs()-1, or -1 for a
// nil or destroyed team (shmem_team_my_pe).
func (t *Team) MyPE() int {
	if t.invalid() {
		return -1
	}
	return t.t.MyPE()
}

// NPEs returns the number of PEs in the team, or -1 for a nil or
// destroyed team (shmem_team_n_pes).
func (t *Team) NPEs() int {
	if t.invalid() {
		return -1
	}
	return t.t.NPEs()
}

// TranslatePE returns the number in dst of this team's PE pe, or -1 when
// pe is out of range, not a member of dst, either team is nil or
// destroyed, or dst is a team of another world (shmem_team_translate_pe).
func (t *Team) TranslatePE(pe int, dst *Team) int {
	// Teams of two worlds share no PEs, whatever their ranks' numbers.
	if t.invalid() || dst.invalid() || t.p.c.WorldID() != dst.p.c.WorldID() {
		return -1
	}
	return t.t.TranslatePE(pe, dst.t)
}

// SplitStrided makes the team of this team's PEs start, start+stride, ...
// (size of them; stride may be negative) (shmem_team_split_strided). It is
// collective over t: every member calls it with the same arguments, and a
// member outside the new team gets (nil, nil). Arguments that differ
// between members, or name PEs outside t, fail with ErrInvalidArgument on
// every member; running out of team resources (32 live teams per PE, the
// two predefined ones included) fails with ErrOutOfMemory on every member.
//
// An optional TeamConfig (shmem_team_config_t) goes with the new team; see
// TeamConfig. More than one is ErrInvalidArgument; so is a config that
// differs between the new team's members (the PEs left out may pass
// another, or none) or has negative values, on every member of t.
func (t *Team) SplitStrided(start, stride, size int, cfg ...TeamConfig) (*Team, error) {
	if t == nil {
		return nil, nilTeam("SplitStrided")
	}
	c, agree, err := configs("SplitStrided", t, cfg, 1)
	if err != nil {
		return nil, err
	}
	nt, err := t.t.SplitStrided(start, stride, size, agree...)
	if err != nil {
		return nil, err
	}
	return t.wrap(nt, c[0]), nil
}

// Split2D arranges t's PEs in rows of xrange (the last row may be partial;
// an xrange above t.NPEs() is t.NPEs()) and returns the caller's row (x)
// and column (y) teams (shmem_team_split_2d). Collective over t, with the
// failure rules of SplitStrided. Optional configs go with x, then y; as
// the spec allows, they need match only among the members of one row (x)
// or one column (y). A mismatch within any of them, or a negative value,
// fails the split on every member of t.
func (t *Team) Split2D(xrange int, cfg ...TeamConfig) (x, y *Team, err error) {
	if t == nil {
		return nil, nil, nilTeam("Split2D")
	}
	c, agree, err := configs("Split2D", t, cfg, 2)
	if err != nil {
		return nil, nil, err
	}
	nx, ny, err := t.t.Split2D(xrange, agree...)
	if err != nil {
		return nil, nil, err
	}
	return t.wrap(nx, c[0]), t.wrap(ny, c[1]), nil
}

// Sync returns when every member has called Sync as many times as the
// caller (shmem_team_sync). It completes nothing; Barrier does.
func (t *Team) Sync() error {
	if teamMetered(t) {
		return meteredColl(t.p.c, core.CollSync, t.t.Sync)
	}
	return t.inner().Sync()
}

// Barrier completes the caller's outstanding operations (Quiet) and then
// Syncs the team.
func (t *Team) Barrier() error {
	if teamMetered(t) {
		return meteredColl(t.p.c, core.CollBarrier, t.t.Barrier)
	}
	return t.inner().Barrier()
}

// Destroy ends the team (shmem_team_destroy). It is collective over the
// team: it synchronizes the members before the team's resources are reused.
// It also destroys the team's shareable contexts (Team.CreateCtx without
// CtxPrivate), completing their operations before that synchronization,
// as the spec says; the caller destroys the CtxPrivate ones first.
// Destroying a team twice does nothing, and so does destroying a nil team
// (SHMEM_TEAM_INVALID, what a split gives the PEs it leaves out), so that
// every member of the parent may destroy what its split returned;
// TeamWorld and TeamShared cannot be destroyed (ErrInvalidArgument). The
// team must not be used after.
func (t *Team) Destroy() error {
	if t == nil {
		return nil
	}
	if t.invalid() {
		return t.inner().Destroy()
	}
	c := t.p.c
	qerr := c.QuietTeamCtxs(t.t)
	if err := t.t.Destroy(); err != nil {
		return err
	}
	if err := c.DestroyTeamCtxs(t.t); err != nil {
		return err
	}
	return qerr
}

func nilTeam(op string) error {
	return errs.New(op, errs.NoPE, errs.NoPE, errs.ErrInvalidArgument, "nil team")
}
