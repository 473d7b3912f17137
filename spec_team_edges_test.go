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
func TestSpecDestroyInvalidTeam(t *testing.T) { bothDeliveries(t, 4, specDestroyInvalidTeam) }

func specDestroyInvalidTeam(p *shmem.PE) error {
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
}

// Split2D's configs need to agree only among the PEs of one resulting
// team (the spec: "The PEs in the parent team do not have to all provide
// the same parameters for new teams"): each row passes its own x config
// and each column its own y config, and GetConfig returns them.
func TestSpecSplit2DConfigsPerTeam(t *testing.T) { bothDeliveries(t, 6, specSplit2DConfigsPerTeam) }

func specSplit2DConfigsPerTeam(p *shmem.PE) error {
	me := p.MyPE()
	xc := shmem.TeamConfig{NumContexts: 1 + me/3} // rows 0..2, 3..5
	yc := shmem.TeamConfig{NumContexts: 10 + me%3}
	x, y, err := p.TeamWorld().Split2D(3, xc, yc)
	if err != nil {
		return err
	}
	gx, err := x.GetConfig()
	if err != nil {
		return err
	}
	gy, err := y.GetConfig()
	if err != nil {
		return err
	}
	if gx != xc || gy != yc {
		return fmt.Errorf("PE %d: configs %v %v, want %v %v", me, gx, gy, xc, yc)
	}
	if x.NPEs() != 3 || y.NPEs() != 2 {
		return fmt.Errorf("PE %d: row of %d, column of %d", me, x.NPEs(), y.NPEs())
	}
	// Configs that differ within one row, or a negative one on one PE,
	// fail the split on every PE of the parent, with no team made.
	w := p.TeamWorld()
	bad := map[string][2]shmem.TeamConfig{
		"row differs":     {{NumContexts: me % 2}, yc},
		"column differs":  {xc, {NumContexts: me / 3}},
		"negative column": {xc, {NumContexts: -(me % 3)}}, // matching within each column
	}
	for name, c := range bad {
		x2, y2, err := w.Split2D(3, c[0], c[1])
		if !isInvalid(err) || x2 != nil || y2 != nil {
			return fmt.Errorf("PE %d: %s: %v, %v, %v", me, name, x2, y2, err)
		}
	}
	// The world stays usable: a split with matching configs works.
	x3, y3, err := w.Split2D(2, shmem.TeamConfig{NumContexts: me / 2})
	if err != nil {
		return err
	}
	if x3.NPEs() != 2 || y3.NPEs() != 3 {
		return fmt.Errorf("after failed splits: row of %d, column of %d", x3.NPEs(), y3.NPEs())
	}
	return p.BarrierAll()
}

// shmem_realloc of a null pointer behaves like shmem_malloc: Realloc of
// the zero Sym allocates, on every PE, an object the others can reach.
func TestSpecReallocOfZeroSymAllocates(t *testing.T) {
	bothDeliveries(t, 3, specReallocOfZeroSymAllocates)
}

func specReallocOfZeroSymAllocates(p *shmem.PE) error {
	var buf shmem.Sym[int32]
	for _, n := range []int{2, 5} {
		grown, err := shmem.Realloc(p, buf, n)
		if err != nil {
			return err
		}
		if grown.Len() != n {
			return fmt.Errorf("Realloc to %d: Len %d", n, grown.Len())
		}
		buf = grown
	}
	me := p.MyPE()
	if err := shmem.P(p, buf.Slice(4, 5), int32(me+40), (me+1)%3); err != nil {
		return err
	}
	if err := p.BarrierAll(); err != nil {
		return err
	}
	if got := buf.Local(p)[4]; got != int32((me+2)%3+40) {
		return fmt.Errorf("PE %d: element 4 = %d", me, got)
	}
	return shmem.Free(p, buf)
}

// The spec's shmem_team_split_2D.c example: a 3D grid by two Split2Ds,
// the middle team destroyed while the teams split from it live on, and
// those used in collectives after (12 PEs: x 3, y 2, z 2).
func TestSpecSplit3DDestroyParent(t *testing.T) { bothDeliveries(t, 12, specSplit3DDestroyParent) }

func specSplit3DDestroyParent(p *shmem.PE) error {
	const xdim, ydim = 3, 2
	me := p.MyPE()
	xteam, yzteam, err := p.TeamWorld().Split2D(xdim)
	if err != nil {
		return err
	}
	yteam, zteam, err := yzteam.Split2D(ydim)
	if err != nil {
		return err
	}
	if err := yzteam.Destroy(); err != nil {
		return err
	}
	x, y, z := xteam.MyPE(), yteam.MyPE(), zteam.MyPE()
	if x != me%3 || y != (me/3)%2 || z != me/6 {
		return fmt.Errorf("PE %d at (%d, %d, %d)", me, x, y, z)
	}
	src, err := shmem.Malloc[int32](p, 1)
	if err != nil {
		return err
	}
	dst, err := shmem.Malloc[int32](p, 1)
	if err != nil {
		return err
	}
	src.Local(p)[0] = int32(me)
	for _, c := range []struct {
		tm   *shmem.Team
		want int32
	}{
		{xteam, int32(me/3*3*3 + 3)},            // the row's three PEs
		{yteam, int32(2*(me%3+me/6*6) + 3)},     // me and me±3
		{zteam, int32(2*(me%3+(me/3)%2*3) + 6)}, // me and me±6
	} {
		if err := shmem.Reduce(c.tm, shmem.OpSum, dst, src); err != nil {
			return err
		}
		if got := dst.Local(p)[0]; got != c.want {
			return fmt.Errorf("PE %d: sum over a team of %d = %d, want %d", me, c.tm.NPEs(), got, c.want)
		}
		if err := c.tm.Sync(); err != nil {
			return err
		}
	}
	return p.BarrierAll()
}

// SplitStrided's config need match only among the new team's members:
// the PEs left out pass none, or another one, as a C program passes NULL
// and mask 0 where it gets SHMEM_TEAM_INVALID anyway. A member that
// differs, or a negative value on any PE, still fails it everywhere.
func TestSpecSplitStridedConfigMembersOnly(t *testing.T) {
	bothDeliveries(t, 5, specSplitStridedConfigMembersOnly)
}

func specSplitStridedConfigMembersOnly(p *shmem.PE) error {
	me := p.MyPE()
	w := p.TeamWorld()
	member := me%2 == 1 // start 1, stride 2, size 2: PEs 1 and 3
	var cfg []shmem.TeamConfig
	switch {
	case member:
		cfg = []shmem.TeamConfig{{NumContexts: 4}}
	case me == 2:
		cfg = []shmem.TeamConfig{{NumContexts: 9}}
	}
	nt, err := w.SplitStrided(1, 2, 2, cfg...)
	if err != nil {
		return fmt.Errorf("PE %d: %w", me, err)
	}
	if (nt != nil) != member {
		return fmt.Errorf("PE %d: team %v", me, nt)
	}
	if member {
		if c, err := nt.GetConfig(); err != nil || c.NumContexts != 4 {
			return fmt.Errorf("PE %d: config %+v, %v", me, c, err)
		}
	}
	if err := nt.Destroy(); err != nil {
		return err
	}
	for _, c := range []struct {
		name string
		cfg  shmem.TeamConfig
	}{
		{"members differ", shmem.TeamConfig{NumContexts: me}},
		{"negative on PE 4", shmem.TeamConfig{NumContexts: 1 - 2*(me/4)}},
	} {
		if nt, err := w.SplitStrided(1, 2, 2, c.cfg); !isInvalid(err) || nt != nil {
			return fmt.Errorf("PE %d: %s: %v, %v", me, c.name, nt, err)
		}
	}
	return p.BarrierAll()
}
