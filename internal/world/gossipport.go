package world

import (
	"context"
	"slices"

	"github.com/goshmem/shmem/bootstrap"
	"github.com/goshmem/shmem/internal/errs"
	"github.com/goshmem/shmem/internal/portskip"
	"github.com/goshmem/shmem/membership"
)

// formInRange forms the gossip world with this member's gossip port (TCP
// and UDP) in Config.Ports when its address leaves the port to the kernel
// (0): the other members probe and exchange state with it there, so a
// firewall opened for SHMEM_PORT_RANGE must find it in the range. Ports
// are tried as the control and data listeners try theirs
// (portskip.InRange), skipping the ports the job binds later (the
// seeds'); Form fails at once, wrapping syscall.EADDRINUSE, on a port
// taken, and the next is tried. A port given explicitly is used as given.
func (j *joiner) formInRange(ctx context.Context, cfg membership.Config) (*membership.World, error) {
	r := j.cfg.Ports
	if cfg.BindPort != 0 || r.Any() {
		return membership.Form(ctx, cfg)
	}
	skip := slices.Clone(j.laterPorts())
	pe := errs.NoPE // the rank comes from the formed world
	if j.cfg.Gossip != nil && j.cfg.Gossip.RankHint >= 0 {
		pe = j.cfg.Gossip.RankHint
	}
	return portskip.InRange("Init", pe, bootstrap.EnvPortRange+"="+r.String(), "for gossip on "+cfg.BindAddr,
		r.Lo, r.Hi, skip, func(port int) (*membership.World, error) {
			c := cfg
			c.BindPort = port
			return membership.Form(ctx, c)
		})
}
