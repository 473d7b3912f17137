package shmem_test

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/goshmem/shmem"
	"github.com/goshmem/shmem/sim"
)

func runSim(t *testing.T, n int, fn func(p *shmem.PE) error, opts ...sim.Option) {
	t.Helper()
	if err := sim.Run(n, fn, opts...); err != nil {
		t.Fatal(err)
	}
}

func TestSplitStrided(t *testing.T) {
	cases := []struct{ n, start, stride, size int }{
		{7, 0, 1, 7}, {7, 1, 2, 3}, {7, 6, -1, 7}, {7, 6, -2, 4}, {7, 3, 0, 1}, {7, 5, -2, 3},
		{8, 0, 2, 4}, {8, 7, -3, 3}, {1, 0, 1, 1}, {2, 1, -1, 2},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("n%d_%d_%d_%d", c.n, c.start, c.stride, c.size), func(t *testing.T) {
			var want []int
			for i := 0; i < c.size; i++ {
				want = append(want, c.start+i*c.stride)
			}
			runSim(t, c.n, func(p *shmem.PE) error {
				w := p.TeamWorld()
				nt, err := w.SplitStrided(c.start, c.stride, c.size)
				if err != nil {
					return err
				}
				idx := slices.Index(want, p.MyPE())
				if idx < 0 {
					if nt != nil {
						return fmt.Errorf("PE %d outside the team got one", p.MyPE())
					}
					return nil
				}
				if nt.MyPE() != idx || nt.NPEs() != c.size || !slices.Equal(members(nt, w), want) {
					return fmt.Errorf("PE %d: team pe %d of %d members %v, want %d of %d %v", p.MyPE(), nt.MyPE(), nt.NPEs(), members(nt, w), idx, c.size, want)
				}
				for i := 0; i < c.size; i++ {
					if got := nt.TranslatePE(i, w); got != want[i] {
						return fmt.Errorf("TranslatePE(%d) to world = %d, want %d", i, got, want[i])
					}
					if got := w.TranslatePE(want[i], nt); got != i {
						return fmt.Errorf("TranslatePE(%d) from world = %d, want %d", want[i], got, i)
					}
				}
				if got := nt.TranslatePE(c.size, w); got != -1 {
					return fmt.Errorf("TranslatePE past the end = %d", got)
				}
				for i := 0; i < 5; i++ {
					if err := nt.Barrier(); err != nil {
						return err
					}
				}
				return nt.Destroy()
			})
		})
	}
}

func TestSplit2D(t *testing.T) {
	for _, c := range []struct{ n, xr int }{{7, 1}, {7, 2}, {7, 3}, {8, 3}, {4, 2}, {3, 5}} {
		t.Run(fmt.Sprintf("n%d_x%d", c.n, c.xr), func(t *testing.T) {
			runSim(t, c.n, func(p *shmem.PE) error {
				x, y, err := p.TeamWorld().Split2D(c.xr)
				if err != nil {
					return err
				}
				me, xr := p.MyPE(), min(c.xr, c.n)
				var wantX, wantY []int
				for i := me / xr * xr; i < min(c.n, (me/xr+1)*xr); i++ {
					wantX = append(wantX, i)
				}
				for i := me % xr; i < c.n; i += xr {
					wantY = append(wantY, i)
				}
				if !slices.Equal(members(x, p.TeamWorld()), wantX) || !slices.Equal(members(y, p.TeamWorld()), wantY) {
					return fmt.Errorf("PE %d: x %v y %v, want %v %v", me, members(x, p.TeamWorld()), members(y, p.TeamWorld()), wantX, wantY)
				}
				if x.MyPE() != me%xr || y.MyPE() != me/xr {
					return fmt.Errorf("PE %d: x pe %d y pe %d", me, x.MyPE(), y.MyPE())
				}
				// Sum of world ranks along each axis, to show both teams work.
				s, err := shmem.Malloc[int64](p, 2)
				if err != nil {
					return err
				}
				s.Local(p)[0] = int64(me)
				if err := shmem.Reduce(x, shmem.OpSum, s.Slice(1, 2), s.Slice(0, 1)); err != nil {
					return err
				}
				if got, want := s.Local(p)[1], sum(wantX); got != want {
					return fmt.Errorf("row sum %d want %d", got, want)
				}
				if err := shmem.Reduce(y, shmem.OpSum, s.Slice(1, 2), s.Slice(0, 1)); err != nil {
					return err
				}
				if got, want := s.Local(p)[1], sum(wantY); got != want {
					return fmt.Errorf("column sum %d want %d", got, want)
				}
				return errors.Join(x.Destroy(), y.Destroy())
			})
		})
	}
}

func sum(v []int) int64 {
	var s int64
	for _, x := range v {
		s += int64(x)
	}
	return s
}

// errorsOnEvery runs fn on n PEs and checks that every PE's fn got an
// error matching want.
func errorsOnEvery(t *testing.T, n int, want error, fn func(p *shmem.PE) error) {
	t.Helper()
	var mu sync.Mutex
	got := map[int]error{}
	runSim(t, n, func(p *shmem.PE) error {
		err := fn(p)
		mu.Lock()
		got[p.MyPE()] = err
		mu.Unlock()
		return nil
	})
	for r := 0; r < n; r++ {
		if !errors.Is(got[r], want) {
			t.Errorf("PE %d: got %v, want %v", r, got[r], want)
		}
	}
}

func TestSplitMismatchAndInvalid(t *testing.T) {
	errorsOnEvery(t, 4, shmem.ErrInvalidArgument, func(p *shmem.PE) error {
		_, err := p.TeamWorld().SplitStrided(0, 1+p.MyPE()%2, 2)
		return err
	})
	for _, a := range [][3]int{{0, 1, 0}, {0, 1, 5}, {-1, 1, 1}, {2, 1, 3}, {1, -1, 3}, {0, 0, 2}} {
		errorsOnEvery(t, 4, shmem.ErrInvalidArgument, func(p *shmem.PE) error {
			_, err := p.TeamWorld().SplitStrided(a[0], a[1], a[2])
			return err
		})
	}
	errorsOnEvery(t, 3, shmem.ErrInvalidArgument, func(p *shmem.PE) error {
		_, _, err := p.TeamWorld().Split2D(0)
		return err
	})
	errorsOnEvery(t, 2, shmem.ErrInvalidArgument, func(p *shmem.PE) error { return p.TeamWorld().Destroy() })
}

func TestTeamExhaustionAndReuse(t *testing.T) {
	runSim(t, 4, func(p *shmem.PE) error {
		w := p.TeamWorld()
		var teams []*shmem.Team
		for {
			nt, err := w.SplitStrided(0, 1, 4)
			if errors.Is(err, shmem.ErrOutOfMemory) {
				break
			}
			if err != nil {
				return err
			}
			teams = append(teams, nt)
			if len(teams) > maxTeams {
				return fmt.Errorf("created %d teams, more than the pool", len(teams))
			}
		}
		if len(teams) != maxTeams-2 {
			return fmt.Errorf("created %d teams before running out, want %d", len(teams), maxTeams-2)
		}
		// Teams of a subset use a slot only on their members: PE 3 still
		// has none free, so a team with it fails, on every member.
		if _, err := w.SplitStrided(2, 1, 2); !errors.Is(err, shmem.ErrOutOfMemory) {
			return fmt.Errorf("split with the pool full: %v", err)
		}
		for _, nt := range teams[len(teams)/2:] {
			if err := nt.Destroy(); err != nil {
				return err
			}
		}
		if err := teams[0].Destroy(); err != nil {
			return err
		}
		if err := teams[0].Destroy(); err != nil {
			return fmt.Errorf("second destroy: %v", err)
		}
		if err := teams[0].Sync(); !errors.Is(err, shmem.ErrInvalidArgument) {
			return fmt.Errorf("sync on a destroyed team: %v", err)
		}
		// Destroyed slots come back, and reused slots start clean.
		for i := 0; i < len(teams)/2; i++ {
			nt, err := w.SplitStrided(3, -1, 4)
			if err != nil {
				return fmt.Errorf("re-creating team %d: %w", i, err)
			}
			s, err := shmem.Calloc[int32](p, 4)
			if err != nil {
				return err
			}
			s.Local(p)[0] = int32(p.MyPE() + i)
			if err := shmem.Broadcast(nt, s.Slice(1, 2), s.Slice(0, 1), 0); err != nil {
				return err
			}
			if got := s.Local(p)[1]; got != int32(3+i) {
				return fmt.Errorf("broadcast on reused slot: %d want %d", got, 3+i)
			}
			if err := nt.Barrier(); err != nil {
				return err
			}
			if err := shmem.Free(p, s); err != nil {
				return err
			}
		}
		return nil
	})
}

// maxTeams is how many teams a PE can have alive at once, TeamWorld and
// TeamShared included (documented at SplitStrided).
const maxTeams = 32

// members returns the world ranks of t's PEs in team order, through
// TranslatePE into world.
func members(t, world *shmem.Team) []int {
	var m []int
	for i := 0; i < t.NPEs(); i++ {
		m = append(m, t.TranslatePE(i, world))
	}
	return m
}

// TestTeamCtxRefusedAfterDestroy: a context made by Team.CreateCtx is
// refused once its team is destroyed, naming the call and the team, as
// the team itself is; it kept working, with the destroyed team's
// numbering. Destroying the context still works.
func TestTeamCtxRefusedAfterDestroy(t *testing.T) {
	runSim(t, 4, func(p *shmem.PE) error {
		s, err := shmem.Calloc[int64](p, 1)
		if err != nil {
			return err
		}
		half, err := p.TeamWorld().SplitStrided(0, 2, 2) // PEs 0 and 2
		if err != nil {
			return err
		}
		if half == nil {
			return p.BarrierAll()
		}
		ctx, err := half.CreateCtx()
		if err != nil {
			return err
		}
		other := 1 - half.MyPE() // in team numbering
		if err := shmem.P(ctx, s, 5, other); err != nil {
			return err
		}
		if err := half.Destroy(); err != nil {
			return err
		}
		err = shmem.P(ctx, s, 6, other)
		if err := wantErr(err, shmem.ErrInvalidArgument, "P", "team", "was destroyed"); err != nil {
			return fmt.Errorf("put on the context of a destroyed team: %w", err)
		}
		if _, err := shmem.AtomicFetch(ctx, s, other); !errors.Is(err, shmem.ErrInvalidArgument) {
			return fmt.Errorf("atomic on the context of a destroyed team: %v, want ErrInvalidArgument", err)
		}
		if err := ctx.Destroy(); err != nil {
			return fmt.Errorf("Destroy of the context of a destroyed team: %w", err)
		}
		if err := p.BarrierAll(); err != nil {
			return err
		}
		return want(p, "value from the team context before Destroy", s.Local(p)[0], int64(5))
	})
}
